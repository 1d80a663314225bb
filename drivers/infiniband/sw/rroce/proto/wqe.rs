// SPDX-License-Identifier: GPL-2.0

//! The elements of rxe's send and receive rings, as rdma-core's rxe provider
//! writes them (`include/uapi/rdma/rdma_user_rxe.h`).
//!
//! The bytes come from a ring that the process can rewrite at any moment,
//! so the driver parses a private snapshot of a slot, and the parser trusts
//! nothing in it: an element that asks for more than the queue allows, or
//! whose scatter/gather list or inline data leaves the slot, is `None`.
//! The parsed element borrows its data from the snapshot; the kernel side
//! copies what it keeps.
//!
//! ```text
//! struct rxe_send_wqe (208 bytes, then SGEs or inline data)
//!   0  wr_id   12 opcode   16 send_flags   20 ex (imm_data, invalidate_rkey)
//!  24  wr: the union of rdma, atomic, ud, mw and flush operands
//! 184  dma: 0 length  12 num_sge  24 sge[] or inline_data[] or atomic_wr
//! struct rxe_recv_wqe (40 bytes, then SGEs)
//!   0  wr_id   16 dma (as above)
//! struct rxe_sge (16 bytes): 0 addr  8 length  12 lkey
//! ```
//!
//! The driver checks these offsets against bindgen's at compile time.

/// `struct rxe_send_wqe`: the fixed part of a send queue element.
pub(crate) const SEND_WQE_SIZE: u32 = 208;
/// `struct rxe_recv_wqe`: the fixed part of a receive queue element.
pub(crate) const RECV_WQE_SIZE: u32 = 40;
/// `struct rxe_sge`: one scatter/gather entry.
pub(crate) const SGE_SIZE: u32 = 16;
const SGE: usize = SGE_SIZE as usize;

/// Offsets in `struct rxe_send_wqe`.
pub(crate) mod send {
    /// `wr.wr_id`.
    pub(crate) const WR_ID: usize = 0;
    /// `wr.opcode`.
    pub(crate) const OPCODE: usize = 12;
    /// `wr.send_flags`.
    pub(crate) const SEND_FLAGS: usize = 16;
    /// `wr.ex`.
    pub(crate) const EX: usize = 20;
    /// `wr.wr`, the union of the operands.
    pub(crate) const OPERANDS: usize = 24;
    /// `dma`.
    pub(crate) const DMA: usize = 184;
}

/// Offsets in `struct rxe_recv_wqe`.
pub(crate) mod recv {
    /// `wr_id`.
    pub(crate) const WR_ID: usize = 0;
    /// `dma`.
    pub(crate) const DMA: usize = 16;
}

/// Offsets in `struct rxe_dma_info`.
pub(crate) mod dma {
    /// `length`: the message length.
    pub(crate) const LENGTH: usize = 0;
    /// `num_sge`.
    pub(crate) const NUM_SGE: usize = 12;
    /// The SGEs or the inline data.
    pub(crate) const DATA: usize = 24;
}

/// Offsets in the operand union `wr.wr` of `struct rxe_send_wr`.
pub(crate) mod operands {
    /// `rdma.remote_addr`, `atomic.remote_addr`, `mw.addr`.
    pub(crate) const REMOTE_ADDR: usize = 0;
    /// `rdma.rkey`.
    pub(crate) const RDMA_RKEY: usize = 8;
    /// `atomic.compare_add`.
    pub(crate) const ATOMIC_COMPARE_ADD: usize = 8;
    /// `atomic.swap`.
    pub(crate) const ATOMIC_SWAP: usize = 16;
    /// `atomic.rkey`.
    pub(crate) const ATOMIC_RKEY: usize = 24;
    /// `ud.remote_qpn`.
    pub(crate) const UD_REMOTE_QPN: usize = 0;
    /// `ud.remote_qkey`.
    pub(crate) const UD_REMOTE_QKEY: usize = 4;
    /// `ud.ah_num`.
    pub(crate) const UD_AH_NUM: usize = 12;
    /// `mw.length`.
    pub(crate) const MW_LENGTH: usize = 8;
    /// `mw.mr_lkey`.
    pub(crate) const MW_MR_LKEY: usize = 16;
    /// `mw.mw_rkey`.
    pub(crate) const MW_MW_RKEY: usize = 20;
    /// `mw.rkey`.
    pub(crate) const MW_RKEY: usize = 24;
    /// `mw.access`.
    pub(crate) const MW_ACCESS: usize = 28;
    /// `flush.rkey`: not where `rdma.rkey` is.
    pub(crate) const FLUSH_RKEY: usize = 12;
    /// `flush.type`: the placement type.
    pub(crate) const FLUSH_TYPE: usize = 16;
    /// `flush.level`: the selectivity level.
    pub(crate) const FLUSH_LEVEL: usize = 17;
}

/// The bytes an ATOMIC WRITE stores (`dma.atomic_wr`, where inline data
/// would be).
pub(crate) const ATOMIC_WRITE_LEN: u32 = 8;

/// `IB_SEND_*` flags of a send work request.
pub(crate) const SEND_FENCE: u32 = 1 << 0;
/// The sender wants a completion.
pub(crate) const SEND_SIGNALED: u32 = 1 << 1;
/// The receiver's completion is solicited.
pub(crate) const SEND_SOLICITED: u32 = 1 << 2;
/// The data is in the element itself.
pub(crate) const SEND_INLINE: u32 = 1 << 3;

/// Reads a native-endian `u32` at `at`; 0 past the end, where callers have
/// checked the length first.
pub(crate) fn ne_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// Reads a native-endian `u64` at `at`, as [`ne_u32`].
pub(crate) fn ne_u64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

/// The `wr_id` of a send or receive element, the first field of both: what
/// an element that does not parse completes with.
pub(crate) fn slot_wr_id(b: &[u8]) -> u64 {
    ne_u64(b, 0)
}

/// A piece of a registered memory region (`struct rxe_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

/// The scatter/gather list of an element, read as it is iterated.
///
/// # Invariants
///
/// The bytes are a whole number of [`SGE_SIZE`] entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sges<'a>(&'a [u8]);

impl<'a> Sges<'a> {
    /// The `num` entries at `at` in `b`; `None` if they do not fit.
    fn at(b: &'a [u8], at: usize, num: usize) -> Option<Self> {
        let end = num.checked_mul(SGE)?.checked_add(at)?;
        // INVARIANT: `num` entries.
        Some(Self(b.get(at..end)?))
    }
}

impl Iterator for Sges<'_> {
    type Item = Sge;

    fn next(&mut self) -> Option<Sge> {
        if self.0.len() < SGE {
            return None;
        }
        let (s, rest) = self.0.split_at(SGE);
        // INVARIANT: One whole entry less.
        self.0 = rest;
        Some(Sge {
            addr: ne_u64(s, 0),
            length: ne_u32(s, 8),
            lkey: ne_u32(s, 12),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.len() / SGE;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Sges<'_> {}

/// A send work request's operation (`enum ib_wr_opcode`; the provider writes
/// `IB_UVERBS_WR_*`, the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WrOpcode {
    Write = 0,
    WriteImm = 1,
    Send = 2,
    SendImm = 3,
    Read = 4,
    CmpSwap = 5,
    FetchAdd = 6,
    LocalInv = 7,
    BindMw = 8,
    SendInv = 9,
    Flush = 14,
    AtomicWrite = 15,
    /// Fast registration of an MR, for kernel consumers only
    /// (`IB_WR_REG_MR`): no ring element carries it.
    RegMr = 0x20,
}

impl WrOpcode {
    /// Every operation a ring element may carry, in the order of their
    /// values.
    pub(crate) const ALL: [Self; 12] = [
        Self::Write,
        Self::WriteImm,
        Self::Send,
        Self::SendImm,
        Self::Read,
        Self::CmpSwap,
        Self::FetchAdd,
        Self::LocalInv,
        Self::BindMw,
        Self::SendInv,
        Self::Flush,
        Self::AtomicWrite,
    ];

    /// The operation numbered `op`, if a ring element may carry it.
    pub(crate) fn from_raw(op: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|&o| o as u32 == op)
    }

    /// Whether the device carries it out itself, sending nothing.
    pub(crate) fn is_local(self) -> bool {
        matches!(self, Self::LocalInv | Self::BindMw | Self::RegMr)
    }

    /// Whether the peer's process waits for it: it takes a receive there
    /// and completes on the peer's CQ.
    pub(crate) fn completes_at_peer(self) -> bool {
        matches!(
            self,
            Self::Send | Self::SendImm | Self::SendInv | Self::WriteImm
        )
    }

    /// Whether it is an atomic operation, whose operands are laid out apart.
    pub(crate) fn is_atomic(self) -> bool {
        matches!(self, Self::CmpSwap | Self::FetchAdd)
    }
}

/// A memory window bind (`wr.mw` of `struct rxe_send_wr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MwBind {
    /// The window's range, in the MR; a length of 0 unbinds a type 1 MW.
    pub(crate) addr: u64,
    pub(crate) length: u64,
    pub(crate) mr_lkey: u32,
    /// The window's rkey now, and the rkey it is to have: only the low 8
    /// bits of the new one are the consumer's to choose.
    pub(crate) mw_rkey: u32,
    pub(crate) new_rkey: u32,
    pub(crate) access: u32,
}

/// What a FLUSH makes visible (`wr.flush` of `struct rxe_send_wr`), as the
/// FETH carries it; the range is the request's remote address and length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flush {
    pub(crate) placement: u8,
    pub(crate) selectivity: u8,
}

/// A fast registration (`struct ib_reg_wr`): the MR its key's index names
/// takes the key, the rights and the start address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FastReg {
    pub(crate) key: u32,
    pub(crate) access: u32,
    pub(crate) iova: u64,
}

/// Where a send's data comes from, in a ring element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RingData<'a> {
    /// Copied into the element.
    Inline(&'a [u8]),
    /// Gathered from memory regions.
    Sges(Sges<'a>),
}

/// What a request needs besides its remote address and key, by its
/// operation: one kind at most (the union `wr` of `struct rxe_send_wr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Operands<A> {
    None,
    /// A UD send: the destination QP, its Q_Key, and its address. Once
    /// taken, the QPN is 24 bits, the Q_Key the one to send and the
    /// destination an address vector.
    Ud {
        remote_qpn: u32,
        remote_qkey: u32,
        dest: UdDest<A>,
    },
    /// Compare (or add) and swap.
    Atomic {
        compare_add: u64,
        swap: u64,
    },
    Bind(MwBind),
    Reg(FastReg),
    Flush(Flush),
}

/// Where a UD send goes: a process names its AH by number, a kernel
/// consumer gives the AH's address vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UdDest<A> {
    Ah(u32),
    Av(A),
}

/// A send queue element, self-consistent; keys and addresses are checked on
/// use. `D` is where its data is, `A` the address vector of a UD request
/// that names its AH directly (kernel consumers do).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SendWqe<D, A> {
    pub(crate) wr_id: u64,
    pub(crate) opcode: WrOpcode,
    /// `SEND_*`.
    pub(crate) flags: u32,
    /// Immediate data as on the wire (big-endian), or the rkey to invalidate.
    pub(crate) ex: u32,
    /// RDMA and atomic operations: the remote address and key.
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    /// What else the operation needs, if anything.
    pub(crate) operands: Operands<A>,
    /// The message length, which the data must add up to.
    pub(crate) length: u32,
    pub(crate) data: D,
}

impl<D, A> SendWqe<D, A> {
    /// A request with no operands but its operation, flags and data.
    pub(crate) fn new(
        wr_id: u64,
        opcode: WrOpcode,
        flags: u32,
        ex: u32,
        length: u32,
        data: D,
    ) -> Self {
        Self {
            wr_id,
            opcode,
            flags,
            ex,
            remote_addr: 0,
            rkey: 0,
            operands: Operands::None,
            length,
            data,
        }
    }

    /// The same request with its data turned by `f`, or `None` if `f` fails.
    pub(crate) fn try_map_data<E>(self, f: impl FnOnce(D) -> Option<E>) -> Option<SendWqe<E, A>> {
        let SendWqe {
            wr_id,
            opcode,
            flags,
            ex,
            remote_addr,
            rkey,
            operands,
            length,
            data,
        } = self;
        Some(SendWqe {
            wr_id,
            opcode,
            flags,
            ex,
            remote_addr,
            rkey,
            operands,
            length,
            data: f(data)?,
        })
    }
}

impl<'a, A> SendWqe<RingData<'a>, A> {
    /// Parses a snapshot of a send ring slot; `None` if it is malformed or
    /// asks for more than `max_sge` SGEs or `max_inline` inline bytes.
    pub(crate) fn parse(b: &'a [u8], max_sge: u32, max_inline: u32) -> Option<Self> {
        use operands::*;
        if b.len() < SEND_WQE_SIZE as usize {
            return None;
        }
        let opcode = WrOpcode::from_raw(ne_u32(b, send::OPCODE))?;
        let flags = ne_u32(b, send::SEND_FLAGS);
        let length = ne_u32(b, send::DMA + dma::LENGTH);
        let at = send::DMA + dma::DATA;
        let inline = flags & SEND_INLINE != 0 && !opcode.is_atomic() && opcode != WrOpcode::Read;
        let data = if opcode == WrOpcode::AtomicWrite {
            // Its eight bytes, whatever the flags and length say.
            RingData::Inline(b.get(at..at + ATOMIC_WRITE_LEN as usize)?)
        } else if opcode == WrOpcode::Flush {
            // No data: the length is the remote range's.
            RingData::Sges(Sges::at(b, at, 0)?)
        } else if inline {
            if length > max_inline {
                return None;
            }
            RingData::Inline(b.get(at..at + length as usize)?)
        } else {
            let num = ne_u32(b, send::DMA + dma::NUM_SGE);
            if num > max_sge {
                return None;
            }
            RingData::Sges(Sges::at(b, at, num as usize)?)
        };
        let u = send::OPERANDS;
        let rkey = match opcode {
            WrOpcode::CmpSwap | WrOpcode::FetchAdd => ATOMIC_RKEY,
            WrOpcode::Flush => FLUSH_RKEY,
            _ => RDMA_RKEY,
        };
        let operands = match opcode {
            WrOpcode::CmpSwap | WrOpcode::FetchAdd => Operands::Atomic {
                compare_add: ne_u64(b, u + ATOMIC_COMPARE_ADD),
                swap: ne_u64(b, u + ATOMIC_SWAP),
            },
            // A UD send's; a connected QP's sends ignore them.
            WrOpcode::Send | WrOpcode::SendImm => Operands::Ud {
                remote_qpn: ne_u32(b, u + UD_REMOTE_QPN),
                remote_qkey: ne_u32(b, u + UD_REMOTE_QKEY),
                dest: UdDest::Ah(ne_u32(b, u + UD_AH_NUM)),
            },
            WrOpcode::BindMw => Operands::Bind(MwBind {
                addr: ne_u64(b, u + REMOTE_ADDR),
                length: ne_u64(b, u + MW_LENGTH),
                mr_lkey: ne_u32(b, u + MW_MR_LKEY),
                mw_rkey: ne_u32(b, u + MW_MW_RKEY),
                new_rkey: ne_u32(b, u + MW_RKEY),
                access: ne_u32(b, u + MW_ACCESS),
            }),
            WrOpcode::Flush => Operands::Flush(Flush {
                placement: b[u + FLUSH_TYPE],
                selectivity: b[u + FLUSH_LEVEL],
            }),
            _ => Operands::None,
        };
        Some(Self {
            remote_addr: ne_u64(b, u + REMOTE_ADDR),
            rkey: ne_u32(b, u + rkey),
            operands,
            ..Self::new(
                ne_u64(b, send::WR_ID),
                opcode,
                flags,
                ne_u32(b, send::EX),
                length,
                data,
            )
        })
    }
}

/// A receive queue element: where the data of one incoming message goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecvWqe<D> {
    pub(crate) wr_id: u64,
    pub(crate) data: D,
}

impl<'a> RecvWqe<Sges<'a>> {
    /// Parses a snapshot of a receive ring slot; `None` if it is malformed
    /// or has more than `max_sge` SGEs.
    pub(crate) fn parse(b: &'a [u8], max_sge: u32) -> Option<Self> {
        if b.len() < RECV_WQE_SIZE as usize {
            return None;
        }
        let num = ne_u32(b, recv::DMA + dma::NUM_SGE);
        if num > max_sge {
            return None;
        }
        Some(Self {
            wr_id: ne_u64(b, recv::WR_ID),
            data: Sges::at(b, recv::DMA + dma::DATA, num as usize)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put32(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }

    fn put64(b: &mut [u8], at: usize, v: u64) {
        b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
    }

    fn send_slot(opcode: WrOpcode, flags: u32, length: u32, num_sge: u32) -> [u8; 256] {
        let mut b = [0u8; 256];
        put64(&mut b, send::WR_ID, 0x1122_3344_5566_7788);
        put32(&mut b, send::OPCODE, opcode as u32);
        put32(&mut b, send::SEND_FLAGS, flags);
        put32(&mut b, send::DMA + dma::LENGTH, length);
        put32(&mut b, send::DMA + dma::NUM_SGE, num_sge);
        b
    }

    type Parsed<'a> = SendWqe<RingData<'a>, ()>;

    #[test]
    fn reads_rdma_operands_and_sges() {
        let mut b = send_slot(WrOpcode::Write, SEND_SIGNALED, 24, 2);
        put64(&mut b, send::OPERANDS, 0xdead_beef_0000);
        put32(&mut b, send::OPERANDS + operands::RDMA_RKEY, 0x1234);
        let sge = send::DMA + dma::DATA;
        put64(&mut b, sge, 0x1000);
        put32(&mut b, sge + 8, 16);
        put32(&mut b, sge + 12, 7);
        put64(&mut b, sge + SGE, 0x2000);
        put32(&mut b, sge + SGE + 8, 8);
        let w = Parsed::parse(&b, 2, 0).unwrap();
        assert_eq!(w.wr_id, 0x1122_3344_5566_7788);
        assert_eq!(
            (w.opcode, w.flags, w.length),
            (WrOpcode::Write, SEND_SIGNALED, 24)
        );
        assert_eq!((w.remote_addr, w.rkey), (0xdead_beef_0000, 0x1234));
        let RingData::Sges(sges) = w.data else {
            panic!("not SGEs")
        };
        let want = [
            Sge {
                addr: 0x1000,
                length: 16,
                lkey: 7,
            },
            Sge {
                addr: 0x2000,
                length: 8,
                lkey: 0,
            },
        ];
        assert!(sges.eq(want));
    }

    #[test]
    fn atomics_take_their_own_rkey_and_never_inline() {
        let mut b = send_slot(WrOpcode::CmpSwap, SEND_INLINE, 8, 1);
        put32(&mut b, send::OPERANDS + operands::RDMA_RKEY, 1);
        put32(&mut b, send::OPERANDS + operands::ATOMIC_RKEY, 2);
        put64(&mut b, send::OPERANDS + operands::ATOMIC_SWAP, 3);
        let w = Parsed::parse(&b, 1, 64).unwrap();
        assert_eq!(w.rkey, 2);
        let want = Operands::Atomic {
            compare_add: 1,
            swap: 3,
        };
        assert_eq!(w.operands, want);
        assert!(matches!(w.data, RingData::Sges(ref s) if s.len() == 1));
    }

    // rdma-core's wr_atomic_write(): rdma operands, the value in atomic_wr.
    #[test]
    fn an_atomic_write_carries_its_eight_bytes() {
        let mut b = send_slot(WrOpcode::AtomicWrite, SEND_SIGNALED, 8, 0);
        put64(&mut b, send::OPERANDS, 0x7000);
        put32(&mut b, send::OPERANDS + operands::RDMA_RKEY, 0x99);
        put64(&mut b, send::DMA + dma::DATA, 0x0102_0304_0506_0708);
        let w = Parsed::parse(&b, 0, 0).unwrap();
        assert_eq!((w.remote_addr, w.rkey, w.length), (0x7000, 0x99, 8));
        let value = 0x0102_0304_0506_0708u64.to_ne_bytes();
        assert_eq!(w.data, RingData::Inline(&value));
        // The value must be in the slot.
        let end = send::DMA + dma::DATA + ATOMIC_WRITE_LEN as usize;
        assert_eq!(Parsed::parse(&b[..end - 1], 0, 0), None);
    }

    // rdma-core's wr_flush(): the rkey at offset 12, the length in dma.
    #[test]
    fn a_flush_has_its_own_operands_and_no_data() {
        let mut b = send_slot(WrOpcode::Flush, SEND_SIGNALED, 4096, 5);
        let u = send::OPERANDS;
        put64(&mut b, u, 0x8000);
        put32(&mut b, u + operands::RDMA_RKEY, 1);
        put32(&mut b, u + operands::FLUSH_RKEY, 0x77);
        b[u + operands::FLUSH_TYPE] = 1;
        b[u + operands::FLUSH_LEVEL] = 1;
        let w = Parsed::parse(&b, 0, 0).unwrap();
        assert_eq!((w.remote_addr, w.rkey, w.length), (0x8000, 0x77, 4096));
        let want = Flush {
            placement: 1,
            selectivity: 1,
        };
        assert_eq!(w.operands, Operands::Flush(want));
        assert!(matches!(w.data, RingData::Sges(ref s) if s.len() == 0));
    }

    #[test]
    fn inline_data_is_the_bytes_after_the_element() {
        let mut b = send_slot(WrOpcode::Send, SEND_INLINE, 5, 99);
        let at = send::DMA + dma::DATA;
        b[at..at + 5].copy_from_slice(b"hello");
        let w = Parsed::parse(&b, 0, 5).unwrap();
        assert_eq!(w.data, RingData::Inline(b"hello"));
        // More than the QP's inline limit, or past the slot: refused.
        assert_eq!(Parsed::parse(&b, 0, 4), None);
        assert_eq!(Parsed::parse(&b[..at + 4], 0, 5), None);
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let b = send_slot(WrOpcode::Send, 0, 0, 3);
        // Three SGEs need 48 bytes past the element; the slot has 48.
        assert!(Parsed::parse(&b, 3, 0).is_some());
        assert_eq!(Parsed::parse(&b, 2, 0), None);
        assert_eq!(Parsed::parse(&b[..SEND_WQE_SIZE as usize + 47], 3, 0), None);
        assert_eq!(Parsed::parse(&b[..SEND_WQE_SIZE as usize - 1], 3, 0), None);
        let huge = send_slot(WrOpcode::Send, 0, 0, u32::MAX);
        assert_eq!(Parsed::parse(&huge, u32::MAX, 0), None);
        let mut bad = send_slot(WrOpcode::Send, 0, 0, 0);
        put32(&mut bad, send::OPCODE, 10);
        assert_eq!(Parsed::parse(&bad, 0, 0), None);
    }

    #[test]
    fn reads_a_memory_window_bind() {
        let mut b = send_slot(WrOpcode::BindMw, 0, 0, 0);
        let u = send::OPERANDS;
        put64(&mut b, u, 0x4000);
        put64(&mut b, u + operands::MW_LENGTH, 0x100);
        put32(&mut b, u + operands::MW_MR_LKEY, 11);
        put32(&mut b, u + operands::MW_MW_RKEY, 12);
        put32(&mut b, u + operands::MW_RKEY, 13);
        put32(&mut b, u + operands::MW_ACCESS, 14);
        let w = Parsed::parse(&b, 0, 0).unwrap();
        let want = MwBind {
            addr: 0x4000,
            length: 0x100,
            mr_lkey: 11,
            mw_rkey: 12,
            new_rkey: 13,
            access: 14,
        };
        assert_eq!(w.operands, Operands::Bind(want));
        assert!(w.opcode.is_local());
    }

    #[test]
    fn reads_a_receive_element() {
        let mut b = [0u8; RECV_WQE_SIZE as usize + SGE];
        put64(&mut b, recv::WR_ID, 42);
        put32(&mut b, recv::DMA + dma::NUM_SGE, 1);
        put32(&mut b, RECV_WQE_SIZE as usize + 8, 100);
        let w = RecvWqe::parse(&b, 1).unwrap();
        assert_eq!(w.wr_id, 42);
        assert!(w.data.eq([Sge {
            addr: 0,
            length: 100,
            lkey: 0
        }]));
        assert_eq!(RecvWqe::parse(&b, 0), None);
        assert_eq!(RecvWqe::parse(&b[..RECV_WQE_SIZE as usize + 15], 1), None);
        assert_eq!(slot_wr_id(&b), 42);
    }

    #[test]
    fn opcodes_read_back() {
        for op in WrOpcode::ALL {
            assert_eq!(WrOpcode::from_raw(op as u32), Some(op));
        }
        for gap in [10, 11, 12, 13, 16, u32::MAX] {
            assert_eq!(WrOpcode::from_raw(gap), None, "{gap}");
        }
        // Fast registration is for kernel consumers: no ring carries it.
        assert_eq!(WrOpcode::from_raw(WrOpcode::RegMr as u32), None);
    }
}
