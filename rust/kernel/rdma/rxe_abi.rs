// SPDX-License-Identifier: GPL-2.0

//! The driver-specific responses of the rxe user ABI, which rdma-core's rxe
//! provider reads, and the layout of the rings' elements it shares with the
//! process, for a driver to check its own against.
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)

use super::UserMapping;
use crate::bindings;
use kernel::types::AsBytes;

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

/// Where the fields of the rings' elements are, from the C headers, for a
/// driver to check its own layout against at compile time. Offsets are in
/// bytes from the start of the element, those of [`operands`] from the
/// start of the send request's `wr` union.
pub(crate) mod layout {
    use crate::bindings;
    use core::mem::{offset_of, size_of};
    type Wqe = bindings::rxe_send_wqe;
    type Wr = bindings::rxe_send_wr;
    type Rqe = bindings::rxe_recv_wqe;
    type Dma = bindings::rxe_dma_info;
    type Wc = bindings::ib_uverbs_wc;

    /// `struct rxe_send_wqe`.
    pub(crate) const SEND_WQE_SIZE: usize = size_of::<Wqe>();
    /// `struct rxe_recv_wqe`.
    pub(crate) const RECV_WQE_SIZE: usize = size_of::<Rqe>();
    /// `struct rxe_sge`.
    pub(crate) const SGE_SIZE: usize = size_of::<bindings::rxe_sge>();
    /// `struct ib_uverbs_wc`, a user CQ's element.
    pub(crate) const WC_SIZE: usize = size_of::<Wc>();

    /// The send queue's element.
    pub(crate) mod send {
        use super::*;
        pub(crate) const WR_ID: usize = offset_of!(Wqe, wr) + offset_of!(Wr, wr_id);
        pub(crate) const OPCODE: usize = offset_of!(Wqe, wr) + offset_of!(Wr, opcode);
        pub(crate) const SEND_FLAGS: usize = offset_of!(Wqe, wr) + offset_of!(Wr, send_flags);
        pub(crate) const EX: usize = offset_of!(Wqe, wr) + offset_of!(Wr, ex);
        pub(crate) const OPERANDS: usize = offset_of!(Wqe, wr) + offset_of!(Wr, wr);
        pub(crate) const DMA: usize = offset_of!(Wqe, dma);
    }

    /// The receive queue's element.
    pub(crate) mod recv {
        use super::*;
        pub(crate) const WR_ID: usize = offset_of!(Rqe, wr_id);
        pub(crate) const DMA: usize = offset_of!(Rqe, dma);
    }

    /// The data part of both (`struct rxe_dma_info`).
    pub(crate) mod dma {
        use super::*;
        pub(crate) const LENGTH: usize = offset_of!(Dma, length);
        pub(crate) const NUM_SGE: usize = offset_of!(Dma, num_sge);
        pub(crate) const DATA: usize = offset_of!(Dma, __bindgen_anon_1);
    }

    /// The operands of a send, by kind.
    pub(crate) mod operands {
        use super::*;
        const BASE: usize = offset_of!(Wr, wr);
        pub(crate) const RDMA_REMOTE_ADDR: usize = offset_of!(Wr, wr.rdma.remote_addr) - BASE;
        pub(crate) const RDMA_RKEY: usize = offset_of!(Wr, wr.rdma.rkey) - BASE;
        pub(crate) const ATOMIC_REMOTE_ADDR: usize = offset_of!(Wr, wr.atomic.remote_addr) - BASE;
        pub(crate) const ATOMIC_COMPARE_ADD: usize = offset_of!(Wr, wr.atomic.compare_add) - BASE;
        pub(crate) const ATOMIC_SWAP: usize = offset_of!(Wr, wr.atomic.swap) - BASE;
        pub(crate) const ATOMIC_RKEY: usize = offset_of!(Wr, wr.atomic.rkey) - BASE;
        pub(crate) const UD_REMOTE_QPN: usize = offset_of!(Wr, wr.ud.remote_qpn) - BASE;
        pub(crate) const UD_REMOTE_QKEY: usize = offset_of!(Wr, wr.ud.remote_qkey) - BASE;
        pub(crate) const UD_AH_NUM: usize = offset_of!(Wr, wr.ud.ah_num) - BASE;
        pub(crate) const MW_ADDR: usize = offset_of!(Wr, wr.mw.addr) - BASE;
        pub(crate) const MW_LENGTH: usize = offset_of!(Wr, wr.mw.length) - BASE;
        pub(crate) const MW_MR_LKEY: usize = offset_of!(Wr, wr.mw.mr_lkey) - BASE;
        pub(crate) const MW_MW_RKEY: usize = offset_of!(Wr, wr.mw.mw_rkey) - BASE;
        pub(crate) const MW_RKEY: usize = offset_of!(Wr, wr.mw.rkey) - BASE;
        pub(crate) const MW_ACCESS: usize = offset_of!(Wr, wr.mw.access) - BASE;
        pub(crate) const FLUSH_REMOTE_ADDR: usize = offset_of!(Wr, wr.flush.remote_addr) - BASE;
        pub(crate) const FLUSH_RKEY: usize = offset_of!(Wr, wr.flush.rkey) - BASE;
        pub(crate) const FLUSH_TYPE: usize = offset_of!(Wr, wr.flush.type_) - BASE;
        pub(crate) const FLUSH_LEVEL: usize = offset_of!(Wr, wr.flush.level) - BASE;
    }

    /// A user CQ's element.
    pub(crate) mod wc {
        use super::*;
        pub(crate) const WR_ID: usize = offset_of!(Wc, wr_id);
        pub(crate) const STATUS: usize = offset_of!(Wc, status);
        pub(crate) const OPCODE: usize = offset_of!(Wc, opcode);
        pub(crate) const BYTE_LEN: usize = offset_of!(Wc, byte_len);
        pub(crate) const EX: usize = offset_of!(Wc, ex);
        pub(crate) const QP_NUM: usize = offset_of!(Wc, qp_num);
        pub(crate) const SRC_QP: usize = offset_of!(Wc, src_qp);
        pub(crate) const WC_FLAGS: usize = offset_of!(Wc, wc_flags);
        pub(crate) const SL: usize = offset_of!(Wc, sl);
        pub(crate) const PORT_NUM: usize = offset_of!(Wc, port_num);
    }
}
