// SPDX-License-Identifier: GPL-2.0

//! The queues shared with a process (CQ, SQ, RQ): rings laid out as the rxe
//! user ABI's `struct rxe_queue_buf`, in memory the process maps.
//!
//! The side that produces owns the producer index and the other side the
//! consumer index. The kernel keeps the index it owns to itself and only
//! publishes it, and reads the other side's index masked, so that whatever
//! a process writes there only ever names a slot of the ring.

use crate::kernel_ext::rdma::{SharedMem, UserContext, UserMapping};
use crate::proto::ring::{
    Ring, CONSUMER_INDEX_OFFSET, INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET, PRODUCER_INDEX_OFFSET,
};
use kernel::{prelude::*, sync::Arc};

/// A ring in shared memory, offered to one process's mmap.
pub(crate) struct UserRing {
    /// The ring's geometry.
    ring: Ring,
    mem: Arc<SharedMem>,
    /// How the process maps it; none for a kernel consumer's ring.
    mapping: Option<UserMapping>,
}

impl UserRing {
    /// A ring of at least `num_elem` elements of `elem_size` bytes, with
    /// its header written, mappable by `uctx`.
    pub(crate) fn new(uctx: &UserContext, num_elem: u32, elem_size: u32) -> Result<Self> {
        let mut ring = Self::new_kernel(num_elem, elem_size)?;
        ring.mapping = Some(UserMapping::new(uctx, ring.mem.clone())?);
        Ok(ring)
    }

    /// The same ring for a kernel consumer: not mapped.
    pub(crate) fn new_kernel(num_elem: u32, elem_size: u32) -> Result<Self> {
        let ring = Ring::new(num_elem, elem_size).ok_or(EINVAL)?;
        let mem = Arc::new(SharedMem::new(ring.buf_size())?, GFP_KERNEL)?;
        mem.store_u32(LOG2_ELEM_SIZE_OFFSET, ring.log2_elem_size())?;
        mem.store_u32(INDEX_MASK_OFFSET, ring.index_mask())?;
        Ok(Self {
            ring,
            mem,
            mapping: None,
        })
    }

    /// How many elements it holds (one slot always stays free).
    pub(crate) fn capacity(&self) -> u32 {
        self.ring.capacity()
    }

    /// The ring's geometry.
    pub(crate) fn geometry(&self) -> Ring {
        self.ring
    }

    /// Takes it out of the process's reach now; see
    /// [`UserMapping::withdraw`].
    pub(crate) fn withdraw(&self) {
        if let Some(m) = &self.mapping {
            m.withdraw();
        }
    }

    /// Where the process maps it (`EINVAL` for a kernel ring).
    pub(crate) fn mapping(&self) -> Result<&UserMapping> {
        self.mapping.as_ref().ok_or(EINVAL)
    }

    fn load(&self, offset: usize) -> u32 {
        // The offsets are inside the ring's header, so this cannot fail.
        self.mem.load_u32(offset).unwrap_or(0) & self.ring.index_mask()
    }

    /// The producer index, as the process last published it (masked).
    pub(crate) fn producer(&self) -> u32 {
        self.load(PRODUCER_INDEX_OFFSET)
    }

    /// The consumer index, as the process last published it (masked).
    pub(crate) fn consumer(&self) -> u32 {
        self.load(CONSUMER_INDEX_OFFSET)
    }

    /// Publishes the kernel's producer index.
    pub(crate) fn publish_producer(&self, index: u32) {
        let _ = self.mem.store_u32(PRODUCER_INDEX_OFFSET, index);
    }

    /// Publishes the kernel's consumer index.
    pub(crate) fn publish_consumer(&self, index: u32) {
        let _ = self.mem.store_u32(CONSUMER_INDEX_OFFSET, index);
    }

    /// Moves the consumer index from `index` to the next slot, unless
    /// another consumer did first: how concurrent pollers of a kernel CQ
    /// each take different elements, without a lock.
    pub(crate) fn claim(&self, index: u32) -> bool {
        let next = self.ring.next(index);
        self.mem
            .compare_exchange_u32(CONSUMER_INDEX_OFFSET, index, next)
            .unwrap_or(false)
    }

    /// Copies the element at `index` into `buf` (at most an element).
    pub(crate) fn read(&self, index: u32, buf: &mut [u8]) -> Result {
        let len = buf.len().min(self.ring.elem_size());
        self.mem.read(self.ring.slot_offset(index), &mut buf[..len])
    }

    /// Writes `bytes` (at most an element) to the element at `index`.
    pub(crate) fn write(&self, index: u32, bytes: &[u8]) -> Result {
        if bytes.len() > self.ring.elem_size() {
            return Err(EINVAL);
        }
        self.mem.write(self.ring.slot_offset(index), bytes)
    }
}
