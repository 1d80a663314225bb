// SPDX-License-Identifier: GPL-2.0

//! Index math for the rings shared with userspace.
//!
//! rdma-core's rxe provider maps each queue as one `struct rxe_queue_buf`
//! (`include/uapi/rdma/rdma_user_rxe.h`): a header whose fields sit on
//! separate cache lines, then the slots.
//!
//! ```text
//! 0    log2_elem_size     4 index_mask
//! 128  producer_index
//! 256  consumer_index
//! 384  slot 0 | slot 1 | ... | slot index_mask
//! ```
//!
//! One slot is always left empty so that a full ring and an empty ring
//! differ. Indices stay below the slot count. An index read from shared
//! memory may hold anything, so every function here masks it before using
//! it: nothing a user writes can make an offset leave the buffer.

/// Offset of `log2_elem_size` in `struct rxe_queue_buf`.
pub(crate) const LOG2_ELEM_SIZE_OFFSET: usize = 0;
/// Offset of `index_mask`.
pub(crate) const INDEX_MASK_OFFSET: usize = 4;
/// Offset of `producer_index`.
pub(crate) const PRODUCER_INDEX_OFFSET: usize = 128;
/// Offset of `consumer_index`.
pub(crate) const CONSUMER_INDEX_OFFSET: usize = 256;
/// Offset of the first slot.
pub(crate) const DATA_OFFSET: usize = 384;

/// The smallest slot: a cache line, so that slots never share one.
pub(crate) const MIN_ELEM_SIZE: u32 = 64;

/// The geometry of one ring: slot size and count.
///
/// # Invariants
///
/// The slot count and the slot size are powers of two, and the whole buffer
/// size, [`Ring::buf_size`], fits in a `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ring {
    log2_elem_size: u32,
    index_mask: u32,
    buf_size: usize,
}

impl Ring {
    /// Sizes a ring for at least `num_elem` entries of `elem_size` bytes, as
    /// rxe does.
    ///
    /// Slots grow to a power of two of at least [`MIN_ELEM_SIZE`] bytes, and
    /// their count to the next power of two above `num_elem`, since one slot
    /// stays empty. Returns `None` if the sizes overflow.
    pub(crate) const fn new(num_elem: u32, elem_size: u32) -> Option<Ring> {
        let elem_size = if elem_size < MIN_ELEM_SIZE {
            MIN_ELEM_SIZE
        } else {
            elem_size
        };
        let Some(elem_size) = elem_size.checked_next_power_of_two() else {
            return None;
        };
        let Some(slots) = num_elem.checked_add(1) else {
            return None;
        };
        let Some(slots) = slots.checked_next_power_of_two() else {
            return None;
        };
        let Some(data) = (slots as usize).checked_mul(elem_size as usize) else {
            return None;
        };
        let Some(buf_size) = data.checked_add(DATA_OFFSET) else {
            return None;
        };
        Some(Ring {
            log2_elem_size: elem_size.trailing_zeros(),
            index_mask: slots - 1,
            buf_size,
        })
    }

    /// Returns log2 of the slot size, for the `log2_elem_size` field.
    pub(crate) const fn log2_elem_size(self) -> u32 {
        self.log2_elem_size
    }

    /// Returns the mask that reduces an index to a slot, for the
    /// `index_mask` field.
    pub(crate) const fn index_mask(self) -> u32 {
        self.index_mask
    }

    /// Returns how many entries the ring holds at once: one less than its
    /// slots. This is what a create call reports back as the queue depth.
    pub(crate) const fn capacity(self) -> u32 {
        self.index_mask
    }

    /// Returns the size of one slot in bytes.
    pub(crate) const fn elem_size(self) -> usize {
        1 << self.log2_elem_size
    }

    /// Returns the size of the whole shared buffer, header included.
    pub(crate) const fn buf_size(self) -> usize {
        self.buf_size
    }

    /// Returns how many entries lie between `consumer` and `producer`.
    pub(crate) const fn count(self, producer: u32, consumer: u32) -> u32 {
        producer.wrapping_sub(consumer) & self.index_mask
    }

    /// Tells whether the ring holds no entry.
    pub(crate) const fn is_empty(self, producer: u32, consumer: u32) -> bool {
        self.count(producer, consumer) == 0
    }

    /// Tells whether the producer must wait for the consumer.
    pub(crate) const fn is_full(self, producer: u32, consumer: u32) -> bool {
        self.count(producer, consumer) == self.index_mask
    }

    /// Returns the index after `index`, wrapped to a slot.
    pub(crate) const fn next(self, index: u32) -> u32 {
        index.wrapping_add(1) & self.index_mask
    }

    /// Returns the byte offset of the slot `index` names, from the start of
    /// the shared buffer.
    ///
    /// The slot lies wholly inside [`Ring::buf_size`], whatever `index` is.
    pub(crate) const fn slot_offset(self, index: u32) -> usize {
        let slot = (index & self.index_mask) as usize;
        // Cannot overflow: slot < slots, and slots * elem_size + DATA_OFFSET
        // fits, by the type invariant.
        DATA_OFFSET + (slot << self.log2_elem_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_rxe_queue_init() {
        let r = Ring::new(16, 48).unwrap();
        assert_eq!(r.elem_size(), 64);
        assert_eq!(r.log2_elem_size(), 6);
        assert_eq!(r.index_mask(), 31);
        assert_eq!(r.capacity(), 31);
        assert_eq!(r.buf_size(), 384 + 32 * 64);

        let r = Ring::new(15, 65).unwrap();
        assert_eq!(r.elem_size(), 128);
        assert_eq!(r.capacity(), 15);

        // num_elem == 0 is allowed, as in rxe: one slot, never usable.
        let r = Ring::new(0, 1).unwrap();
        assert_eq!(r.index_mask(), 0);
        assert!(r.is_empty(5, 9));
        assert!(r.is_full(5, 9));
    }

    #[test]
    fn header_layout_matches_uapi() {
        // struct rxe_queue_buf: two u32, pad_1[30], producer, pad_2[31],
        // consumer, pad_3[31], data.
        assert_eq!(INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET + 4);
        assert_eq!(PRODUCER_INDEX_OFFSET, INDEX_MASK_OFFSET + 4 + 30 * 4);
        assert_eq!(CONSUMER_INDEX_OFFSET, PRODUCER_INDEX_OFFSET + 4 + 31 * 4);
        assert_eq!(DATA_OFFSET, CONSUMER_INDEX_OFFSET + 4 + 31 * 4);
    }

    #[test]
    fn overflow_is_refused() {
        assert_eq!(Ring::new(u32::MAX, 64), None);
        assert_eq!(Ring::new(1 << 31, 64), None);
        assert_eq!(Ring::new(1, (1 << 31) + 1), None);
        assert!(Ring::new((1 << 31) - 1, 64).is_some());
    }

    #[test]
    fn empty_full_and_count() {
        let r = Ring::new(3, 64).unwrap();
        assert!(r.is_empty(0, 0));
        assert!(r.is_empty(2, 2));
        assert_eq!(r.count(3, 0), 3);
        assert!(r.is_full(3, 0));
        assert!(r.is_full(1, 2));
        assert_eq!(r.count(1, 3), 2);
        assert!(!r.is_full(2, 0));
    }

    #[test]
    fn filling_and_draining_wraps() {
        let r = Ring::new(7, 64).unwrap();
        let (mut prod, mut cons) = (0u32, 0u32);
        for round in 0..100 {
            while !r.is_full(prod, cons) {
                prod = r.next(prod);
            }
            assert_eq!(r.count(prod, cons), 7, "round {round}");
            for _ in 0..(round % 7 + 1) {
                cons = r.next(cons);
            }
            assert!(prod <= r.index_mask() && cons <= r.index_mask());
        }
    }

    #[test]
    fn hostile_indices_stay_inside_the_buffer() {
        let r = Ring::new(100, 200).unwrap();
        for index in [0, 1, 127, 128, 0x8000_0000, u32::MAX] {
            let off = r.slot_offset(index);
            assert!(off >= DATA_OFFSET);
            assert!(off + r.elem_size() <= r.buf_size());
            assert!(r.count(index, 0) <= r.capacity());
            assert!(r.next(index) <= r.index_mask());
        }
        assert_eq!(r.slot_offset(129), r.slot_offset(1));
        assert_eq!(r.slot_offset(1), DATA_OFFSET + 256);
    }
}
