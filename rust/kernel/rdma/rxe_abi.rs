// SPDX-License-Identifier: GPL-2.0

//! The driver-specific responses of the rxe user ABI, which rdma-core's rxe
//! provider reads.
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)

use super::{
    kverbs::{KernelSegs, QpHandle},
    Av, UserMapping,
};
use crate::bindings;
use core::mem::{offset_of, size_of};
use kernel::{prelude::*, types::AsBytes};

/// The size of a CQ ring element's content, `struct ib_uverbs_wc`: the
/// provider copies this much out of each slot.
pub(crate) const USER_WC_SIZE: u32 = size_of::<bindings::ib_uverbs_wc>() as u32;

/// `struct rxe_send_wqe`: the fixed part of a send queue element, which
/// scatter/gather entries or inline data follow.
pub(crate) const SEND_WQE_SIZE: u32 = size_of::<bindings::rxe_send_wqe>() as u32;
/// `struct rxe_recv_wqe`: the fixed part of a receive queue element.
pub(crate) const RECV_WQE_SIZE: u32 = size_of::<bindings::rxe_recv_wqe>() as u32;
/// `struct rxe_sge`: one scatter/gather entry in a queue element.
pub(crate) const SGE_SIZE: u32 = size_of::<bindings::rxe_sge>() as u32;

/// `struct rxe_create_qp_resp`: where the receive and send rings are to be
/// mapped; a QP on a shared receive queue has no receive ring.
#[repr(transparent)]
pub(crate) struct CreateQpResp(bindings::rxe_create_qp_resp);

// SAFETY: Two `mminfo`s of a `u64` and two `u32`s: no padding.
unsafe impl AsBytes for CreateQpResp {}

impl CreateQpResp {
    /// The response for a QP whose rings are `rq` and `sq`.
    pub(crate) fn new(rq: Option<&UserMapping>, sq: &UserMapping) -> Self {
        Self(bindings::rxe_create_qp_resp {
            rq_mi: rq.map_or(Default::default(), mminfo),
            sq_mi: mminfo(sq),
        })
    }
}

fn mminfo(ring: &UserMapping) -> bindings::mminfo {
    bindings::mminfo {
        offset: ring.offset(),
        size: ring.size(),
        pad: 0,
    }
}

/// `struct rxe_resize_cq_resp`: where the resized CQ's ring is to be mapped.
#[repr(transparent)]
pub(crate) struct ResizeCqResp(bindings::rxe_resize_cq_resp);

// SAFETY: An `mminfo`: a `u64` and two `u32`s, no padding.
unsafe impl AsBytes for ResizeCqResp {}

impl ResizeCqResp {
    /// The response for a CQ whose ring is now `ring`.
    pub(crate) fn new(ring: &UserMapping) -> Self {
        Self(bindings::rxe_resize_cq_resp { mi: mminfo(ring) })
    }
}

/// `struct rxe_create_srq_resp`: where the SRQ's ring is to be mapped.
#[repr(transparent)]
pub(crate) struct CreateSrqResp(bindings::rxe_create_srq_resp);

// SAFETY: An `mminfo` and two `u32`s: no padding.
unsafe impl AsBytes for CreateSrqResp {}

impl CreateSrqResp {
    /// The response for SRQ number `srq_num` whose ring is `ring`.
    pub(crate) fn new(ring: &UserMapping, srq_num: u32) -> Self {
        Self(bindings::rxe_create_srq_resp {
            mi: mminfo(ring),
            srq_num,
            reserved: 0,
        })
    }
}

/// `struct rxe_create_ah_resp`: the number UD work requests name the AH by.
#[repr(transparent)]
pub(crate) struct CreateAhResp(bindings::rxe_create_ah_resp);

// SAFETY: Two `u32`s: no padding.
unsafe impl AsBytes for CreateAhResp {}

impl CreateAhResp {
    /// The response for AH number `ah_num`.
    pub(crate) fn new(ah_num: u32) -> Self {
        Self(bindings::rxe_create_ah_resp {
            ah_num,
            reserved: 0,
        })
    }
}

/// `struct rxe_create_cq_resp`: where the CQ ring is to be mapped.
#[repr(transparent)]
pub(crate) struct CreateCqResp(bindings::rxe_create_cq_resp);

// SAFETY: A `u64` and two `u32`s: no padding, every byte initialised.
unsafe impl AsBytes for CreateCqResp {}

impl CreateCqResp {
    /// The response for a CQ whose ring is `ring`.
    pub(crate) fn new(ring: &UserMapping) -> Self {
        Self(bindings::rxe_create_cq_resp { mi: mminfo(ring) })
    }
}

/// Reads a native-endian `u32` at `at` in `b`; 0 past the end (callers
/// check lengths first).
pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

/// The `wr_id` of a send or receive queue element, the first field of
/// both: what an element that does not parse completes with.
pub(crate) fn slot_wr_id(b: &[u8]) -> u64 {
    u64_at(b, 0)
}

/// `struct rxe_sge`: a piece of a registered memory region.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sge {
    pub(crate) addr: u64,
    pub(crate) length: u32,
    pub(crate) lkey: u32,
}

/// Reads `num` SGEs at `at` in `b`; `None` if they do not fit.
fn sges(b: &[u8], at: usize, num: usize) -> Option<KVec<Sge>> {
    let size = SGE_SIZE as usize;
    let end = num.checked_mul(size)?.checked_add(at)?;
    let bytes = b.get(at..end)?;
    let mut v = KVec::with_capacity(num, GFP_KERNEL).ok()?;
    for s in bytes.chunks_exact(size) {
        let sge = Sge {
            addr: u64_at(s, 0),
            length: u32_at(s, 8),
            lkey: u32_at(s, 12),
        };
        v.push(sge, GFP_KERNEL).ok()?;
    }
    Some(v)
}

/// A send work request's operation (`enum ib_wr_opcode`, as the provider
/// writes `IB_UVERBS_WR_*`, the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrOpcode {
    Write,
    WriteImm,
    Send,
    SendImm,
    SendInv,
    Read,
    CmpSwap,
    FetchAdd,
    LocalInv,
    BindMw,
}

impl WrOpcode {
    pub(super) fn from_raw(op: u32) -> Option<Self> {
        Some(match op {
            bindings::ib_wr_opcode_IB_WR_RDMA_WRITE => Self::Write,
            bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM => Self::WriteImm,
            bindings::ib_wr_opcode_IB_WR_SEND => Self::Send,
            bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM => Self::SendImm,
            bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV => Self::SendInv,
            bindings::ib_wr_opcode_IB_WR_RDMA_READ => Self::Read,
            bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP => Self::CmpSwap,
            bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => Self::FetchAdd,
            bindings::ib_wr_opcode_IB_WR_LOCAL_INV => Self::LocalInv,
            bindings::ib_wr_opcode_IB_WR_BIND_MW => Self::BindMw,
            _ => return None,
        })
    }

    /// The completion opcode the sender sees.
    pub(crate) fn wc_opcode(self) -> WcOpcode {
        match self {
            Self::Write | Self::WriteImm => WcOpcode::Write,
            Self::Send | Self::SendImm | Self::SendInv => WcOpcode::Send,
            Self::Read => WcOpcode::Read,
            Self::CmpSwap => WcOpcode::CmpSwap,
            Self::FetchAdd => WcOpcode::FetchAdd,
            Self::LocalInv => WcOpcode::LocalInv,
            Self::BindMw => WcOpcode::BindMw,
        }
    }

    /// Whether the device carries it out itself, sending nothing.
    pub(crate) fn is_local(self) -> bool {
        matches!(self, Self::LocalInv | Self::BindMw)
    }
}

/// A memory window bind (`wr.mw` of `struct rxe_send_wr`).
#[derive(Clone, Copy, Debug, Default)]
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

/// `IB_SEND_*` flags of a send work request.
pub(crate) const SEND_SIGNALED: u32 = bindings::ib_send_flags_IB_SEND_SIGNALED as u32;
pub(crate) const SEND_SOLICITED: u32 = bindings::ib_send_flags_IB_SEND_SOLICITED as u32;
pub(crate) const SEND_INLINE: u32 = bindings::ib_send_flags_IB_SEND_INLINE as u32;
pub(crate) const SEND_FENCE: u32 = bindings::ib_send_flags_IB_SEND_FENCE as u32;

/// Where a send's data comes from.
pub(crate) enum SendData {
    /// Copied into the work request.
    Inline(KVec<u8>),
    /// Gathered from memory regions.
    Sges(KVec<Sge>),
    /// A kernel consumer's memory.
    Kernel(KernelSegs),
}

/// Where a receive's data goes.
pub(crate) enum RecvData {
    /// Into memory regions.
    Sges(KVec<Sge>),
    /// Into a kernel consumer's memory.
    Kernel(KernelSegs),
}

/// A send queue element (`struct rxe_send_wqe`), copied out of the ring and
/// checked to be self-consistent; keys and addresses are checked on use.
pub(crate) struct SendWqe {
    pub(crate) wr_id: u64,
    pub(crate) opcode: WrOpcode,
    /// `IB_SEND_*`.
    pub(crate) flags: u32,
    /// Immediate data as on the wire (big-endian), or the rkey to invalidate.
    pub(crate) ex: u32,
    /// RDMA and atomic operations: the remote address and key.
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    /// Atomics: compare (or add) and swap operands.
    pub(crate) compare_add: u64,
    pub(crate) swap: u64,
    /// UD: destination QP, its Q_Key, and the address handle's number.
    pub(crate) remote_qpn: u32,
    pub(crate) remote_qkey: u32,
    pub(crate) ah_num: u32,
    /// UD from a kernel consumer: the address vector of its AH.
    pub(crate) av: Option<Av>,
    /// A memory window bind.
    pub(crate) mw: Option<MwBind>,
    /// The message length, which the data must add up to.
    pub(crate) length: u32,
    pub(crate) data: SendData,
}

/// The union `wr` of `struct rxe_send_wr`: field offsets are fixed uapi.
const WR_RDMA_RKEY: usize = 8;
const WR_ATOMIC_COMPARE_ADD: usize = 8;
const WR_ATOMIC_SWAP: usize = 16;
const WR_ATOMIC_RKEY: usize = 24;
const WR_UD_REMOTE_QKEY: usize = 4;
const WR_UD_AH_NUM: usize = 12;
const WR_MW_LENGTH: usize = 8;
const WR_MW_MR_LKEY: usize = 16;
const WR_MW_MW_RKEY: usize = 20;
const WR_MW_RKEY: usize = 24;
const WR_MW_ACCESS: usize = 28;
/// `struct rxe_dma_info`: the length, SGE count, then the SGEs or bytes.
const DMA_LENGTH: usize = 0;
const DMA_NUM_SGE: usize = 12;

impl SendWqe {
    /// Parses a snapshot of a ring slot; `None` if it is malformed or asks
    /// for more than `max_sge` SGEs or `max_inline` inline bytes.
    pub(crate) fn parse(b: &[u8], max_sge: u32, max_inline: u32) -> Option<Self> {
        type Wqe = bindings::rxe_send_wqe;
        type Wr = bindings::rxe_send_wr;
        let wr = offset_of!(Wqe, wr);
        let u = wr + offset_of!(Wr, wr);
        let dma = offset_of!(Wqe, dma);
        let data = dma + offset_of!(bindings::rxe_dma_info, __bindgen_anon_1);
        if b.len() < size_of::<Wqe>() {
            return None;
        }
        let opcode = WrOpcode::from_raw(u32_at(b, wr + offset_of!(Wr, opcode)))?;
        let flags = u32_at(b, wr + offset_of!(Wr, send_flags));
        let length = u32_at(b, dma + DMA_LENGTH);
        let atomic = matches!(opcode, WrOpcode::CmpSwap | WrOpcode::FetchAdd);
        let data = if flags & SEND_INLINE != 0 && !atomic && opcode != WrOpcode::Read {
            if length > max_inline {
                return None;
            }
            let bytes = b.get(data..data + length as usize)?;
            let mut v = KVec::with_capacity(bytes.len(), GFP_KERNEL).ok()?;
            v.extend_from_slice(bytes, GFP_KERNEL).ok()?;
            SendData::Inline(v)
        } else {
            let num = u32_at(b, dma + DMA_NUM_SGE);
            if num > max_sge {
                return None;
            }
            SendData::Sges(sges(b, data, num as usize)?)
        };
        Some(Self {
            wr_id: u64_at(b, wr + offset_of!(Wr, wr_id)),
            opcode,
            flags,
            ex: u32_at(b, wr + offset_of!(Wr, ex)),
            remote_addr: u64_at(b, u),
            rkey: u32_at(b, u + if atomic { WR_ATOMIC_RKEY } else { WR_RDMA_RKEY }),
            compare_add: u64_at(b, u + WR_ATOMIC_COMPARE_ADD),
            swap: u64_at(b, u + WR_ATOMIC_SWAP),
            remote_qpn: u32_at(b, u),
            remote_qkey: u32_at(b, u + WR_UD_REMOTE_QKEY),
            ah_num: u32_at(b, u + WR_UD_AH_NUM),
            av: None,
            mw: (opcode == WrOpcode::BindMw).then(|| MwBind {
                addr: u64_at(b, u),
                length: u64_at(b, u + WR_MW_LENGTH),
                mr_lkey: u32_at(b, u + WR_MW_MR_LKEY),
                mw_rkey: u32_at(b, u + WR_MW_MW_RKEY),
                new_rkey: u32_at(b, u + WR_MW_RKEY),
                access: u32_at(b, u + WR_MW_ACCESS),
            }),
            length,
            data,
        })
    }
}

/// A receive queue element (`struct rxe_recv_wqe`), copied out of the ring.
pub(crate) struct RecvWqe {
    pub(crate) wr_id: u64,
    pub(crate) data: RecvData,
}

impl RecvWqe {
    /// Parses a snapshot of a ring slot; `None` if it is malformed or has
    /// more than `max_sge` SGEs.
    pub(crate) fn parse(b: &[u8], max_sge: u32) -> Option<Self> {
        type Wqe = bindings::rxe_recv_wqe;
        let dma = offset_of!(Wqe, dma);
        let data = dma + offset_of!(bindings::rxe_dma_info, __bindgen_anon_1);
        if b.len() < size_of::<Wqe>() {
            return None;
        }
        let num = u32_at(b, dma + DMA_NUM_SGE);
        if num > max_sge {
            return None;
        }
        Some(Self {
            wr_id: u64_at(b, offset_of!(Wqe, wr_id)),
            data: RecvData::Sges(sges(b, data, num as usize)?),
        })
    }
}

/// A completion's opcode (`enum ib_uverbs_wc_opcode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WcOpcode {
    Send = bindings::ib_wc_opcode_IB_WC_SEND,
    Write = bindings::ib_wc_opcode_IB_WC_RDMA_WRITE,
    Read = bindings::ib_wc_opcode_IB_WC_RDMA_READ,
    CmpSwap = bindings::ib_wc_opcode_IB_WC_COMP_SWAP,
    FetchAdd = bindings::ib_wc_opcode_IB_WC_FETCH_ADD,
    LocalInv = bindings::ib_wc_opcode_IB_WC_LOCAL_INV,
    BindMw = bindings::ib_wc_opcode_IB_WC_BIND_MW,
    Recv = bindings::ib_wc_opcode_IB_WC_RECV,
    RecvWriteImm = bindings::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM,
}

/// A completion's status (`enum ib_wc_status`), those rroce reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WcStatus {
    Success = bindings::ib_wc_status_IB_WC_SUCCESS,
    LocLenErr = bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
    LocQpOpErr = bindings::ib_wc_status_IB_WC_LOC_QP_OP_ERR,
    LocProtErr = bindings::ib_wc_status_IB_WC_LOC_PROT_ERR,
    MwBindErr = bindings::ib_wc_status_IB_WC_MW_BIND_ERR,
    WrFlushErr = bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR,
    BadRespErr = bindings::ib_wc_status_IB_WC_BAD_RESP_ERR,
    RemInvReqErr = bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR,
    RemAccessErr = bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR,
    RemOpErr = bindings::ib_wc_status_IB_WC_REM_OP_ERR,
    RetryExcErr = bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR,
    RnrRetryExcErr = bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR,
}

/// `IB_WC_*` flags of a completion.
pub(crate) const WC_GRH: u32 = bindings::ib_wc_flags_IB_WC_GRH;
pub(crate) const WC_WITH_IMM: u32 = bindings::ib_wc_flags_IB_WC_WITH_IMM;
pub(crate) const WC_WITH_INVALIDATE: u32 = bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE;

/// libibverbs' `IBV_WC_WITH_INV`, which the provider hands on from the ring
/// unchanged. It is not the kernel's `IB_WC_WITH_INVALIDATE` (bit 2 is
/// `IBV_WC_IP_CSUM_OK` there), and no uapi header names it.
const USER_WC_WITH_INV: u32 = 1 << 3;

/// The flags of a completion as a process reads them.
fn user_wc_flags(flags: u32) -> u32 {
    let same = flags & (WC_GRH | WC_WITH_IMM);
    if flags & WC_WITH_INVALIDATE != 0 {
        same | USER_WC_WITH_INV
    } else {
        same
    }
}

/// A completion, as `struct ib_uverbs_wc` in a user CQ ring.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wc {
    pub(crate) wr_id: u64,
    pub(crate) status: WcStatus,
    pub(crate) opcode: WcOpcode,
    pub(crate) byte_len: u32,
    /// Immediate data as on the wire, or the invalidated rkey.
    pub(crate) ex: u32,
    pub(crate) qp_num: u32,
    pub(crate) src_qp: u32,
    /// `WC_*`.
    pub(crate) flags: u32,
    /// Kernel CQs: the QP, and for a UD receive the IP version of its GRH.
    pub(crate) qp: QpHandle,
    pub(crate) ip_version: u8,
}

impl Wc {
    /// The bytes of the `struct ib_uverbs_wc`.
    pub(crate) fn to_bytes(self) -> [u8; USER_WC_SIZE as usize] {
        type W = bindings::ib_uverbs_wc;
        let mut b = [0u8; USER_WC_SIZE as usize];
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(offset_of!(W, wr_id), &self.wr_id.to_ne_bytes());
        put(offset_of!(W, status), &(self.status as u32).to_ne_bytes());
        put(offset_of!(W, opcode), &(self.opcode as u32).to_ne_bytes());
        put(offset_of!(W, byte_len), &self.byte_len.to_ne_bytes());
        put(offset_of!(W, ex), &self.ex.to_ne_bytes());
        put(offset_of!(W, qp_num), &self.qp_num.to_ne_bytes());
        put(offset_of!(W, src_qp), &self.src_qp.to_ne_bytes());
        put(
            offset_of!(W, wc_flags),
            &user_wc_flags(self.flags).to_ne_bytes(),
        );
        put(offset_of!(W, port_num), &[1]);
        b
    }
}
