// SPDX-License-Identifier: GPL-2.0

//! The driver-specific responses of the rxe user ABI, which rdma-core's rxe
//! provider reads, and the proof that the protocol core lays out the rings'
//! elements as this ABI does.
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

// The protocol core's ring elements and completion values, checked against
// the C headers at compile time: a mismatch fails the build.
const _: () = {
    use crate::proto::{
        cqe::{self, WcOpcode, WcStatus},
        wqe::{self, dma, operands, recv, send, WrOpcode},
    };
    use core::mem::{offset_of, size_of};
    type Wqe = bindings::rxe_send_wqe;
    type Wr = bindings::rxe_send_wr;
    type Rqe = bindings::rxe_recv_wqe;
    type Dma = bindings::rxe_dma_info;
    type Wc = bindings::ib_uverbs_wc;

    assert!(wqe::SEND_WQE_SIZE as usize == size_of::<Wqe>());
    assert!(wqe::RECV_WQE_SIZE as usize == size_of::<Rqe>());
    assert!(wqe::SGE_SIZE as usize == size_of::<bindings::rxe_sge>());
    assert!(send::WR_ID == offset_of!(Wqe, wr) + offset_of!(Wr, wr_id));
    assert!(send::OPCODE == offset_of!(Wqe, wr) + offset_of!(Wr, opcode));
    assert!(send::SEND_FLAGS == offset_of!(Wqe, wr) + offset_of!(Wr, send_flags));
    assert!(send::EX == offset_of!(Wqe, wr) + offset_of!(Wr, ex));
    assert!(send::OPERANDS == offset_of!(Wqe, wr) + offset_of!(Wr, wr));
    assert!(send::DMA == offset_of!(Wqe, dma));
    assert!(recv::WR_ID == offset_of!(Rqe, wr_id));
    assert!(recv::DMA == offset_of!(Rqe, dma));
    assert!(dma::LENGTH == offset_of!(Dma, length));
    assert!(dma::NUM_SGE == offset_of!(Dma, num_sge));
    assert!(dma::DATA == offset_of!(Dma, __bindgen_anon_1));

    assert!(operands::REMOTE_ADDR == offset_of!(Wr, wr.rdma.remote_addr) - send::OPERANDS);
    assert!(operands::RDMA_RKEY == offset_of!(Wr, wr.rdma.rkey) - send::OPERANDS);
    assert!(operands::ATOMIC_COMPARE_ADD == offset_of!(Wr, wr.atomic.compare_add) - send::OPERANDS);
    assert!(operands::ATOMIC_SWAP == offset_of!(Wr, wr.atomic.swap) - send::OPERANDS);
    assert!(operands::ATOMIC_RKEY == offset_of!(Wr, wr.atomic.rkey) - send::OPERANDS);
    assert!(operands::REMOTE_ADDR == offset_of!(Wr, wr.atomic.remote_addr) - send::OPERANDS);
    assert!(operands::UD_REMOTE_QPN == offset_of!(Wr, wr.ud.remote_qpn) - send::OPERANDS);
    assert!(operands::UD_REMOTE_QKEY == offset_of!(Wr, wr.ud.remote_qkey) - send::OPERANDS);
    assert!(operands::UD_AH_NUM == offset_of!(Wr, wr.ud.ah_num) - send::OPERANDS);
    assert!(operands::REMOTE_ADDR == offset_of!(Wr, wr.mw.addr) - send::OPERANDS);
    assert!(operands::MW_LENGTH == offset_of!(Wr, wr.mw.length) - send::OPERANDS);
    assert!(operands::MW_MR_LKEY == offset_of!(Wr, wr.mw.mr_lkey) - send::OPERANDS);
    assert!(operands::MW_MW_RKEY == offset_of!(Wr, wr.mw.mw_rkey) - send::OPERANDS);
    assert!(operands::MW_RKEY == offset_of!(Wr, wr.mw.rkey) - send::OPERANDS);
    assert!(operands::MW_ACCESS == offset_of!(Wr, wr.mw.access) - send::OPERANDS);
    assert!(operands::REMOTE_ADDR == offset_of!(Wr, wr.flush.remote_addr) - send::OPERANDS);
    assert!(operands::FLUSH_RKEY == offset_of!(Wr, wr.flush.rkey) - send::OPERANDS);
    assert!(operands::FLUSH_TYPE == offset_of!(Wr, wr.flush.type_) - send::OPERANDS);
    assert!(operands::FLUSH_LEVEL == offset_of!(Wr, wr.flush.level) - send::OPERANDS);

    assert!(cqe::USER_WC_SIZE as usize == size_of::<Wc>());
    assert!(cqe::user::WR_ID == offset_of!(Wc, wr_id));
    assert!(cqe::user::STATUS == offset_of!(Wc, status));
    assert!(cqe::user::OPCODE == offset_of!(Wc, opcode));
    assert!(cqe::user::BYTE_LEN == offset_of!(Wc, byte_len));
    assert!(cqe::user::EX == offset_of!(Wc, ex));
    assert!(cqe::user::QP_NUM == offset_of!(Wc, qp_num));
    assert!(cqe::user::SRC_QP == offset_of!(Wc, src_qp));
    assert!(cqe::user::WC_FLAGS == offset_of!(Wc, wc_flags));
    assert!(cqe::user::SL == offset_of!(Wc, sl));
    assert!(cqe::user::PORT_NUM == offset_of!(Wc, port_num));

    assert!(WrOpcode::Write as u32 == bindings::ib_wr_opcode_IB_WR_RDMA_WRITE);
    assert!(WrOpcode::WriteImm as u32 == bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM);
    assert!(WrOpcode::Send as u32 == bindings::ib_wr_opcode_IB_WR_SEND);
    assert!(WrOpcode::SendImm as u32 == bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM);
    assert!(WrOpcode::Read as u32 == bindings::ib_wr_opcode_IB_WR_RDMA_READ);
    assert!(WrOpcode::CmpSwap as u32 == bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP);
    assert!(WrOpcode::FetchAdd as u32 == bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD);
    assert!(WrOpcode::LocalInv as u32 == bindings::ib_wr_opcode_IB_WR_LOCAL_INV);
    assert!(WrOpcode::BindMw as u32 == bindings::ib_wr_opcode_IB_WR_BIND_MW);
    assert!(WrOpcode::SendInv as u32 == bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV);
    assert!(WrOpcode::RegMr as u32 == bindings::ib_wr_opcode_IB_WR_REG_MR);
    assert!(WrOpcode::Flush as u32 == bindings::ib_wr_opcode_IB_WR_FLUSH);
    assert!(WrOpcode::AtomicWrite as u32 == bindings::ib_wr_opcode_IB_WR_ATOMIC_WRITE);
    assert!(wqe::SEND_FENCE == bindings::ib_send_flags_IB_SEND_FENCE as u32);
    assert!(wqe::SEND_SIGNALED == bindings::ib_send_flags_IB_SEND_SIGNALED as u32);
    assert!(wqe::SEND_SOLICITED == bindings::ib_send_flags_IB_SEND_SOLICITED as u32);
    assert!(wqe::SEND_INLINE == bindings::ib_send_flags_IB_SEND_INLINE as u32);

    assert!(WcOpcode::RegMr as u32 == bindings::ib_wc_opcode_IB_WC_REG_MR);
    assert!(WcOpcode::Send as u32 == bindings::ib_wc_opcode_IB_WC_SEND);
    assert!(WcOpcode::Write as u32 == bindings::ib_wc_opcode_IB_WC_RDMA_WRITE);
    assert!(WcOpcode::Read as u32 == bindings::ib_wc_opcode_IB_WC_RDMA_READ);
    assert!(WcOpcode::CmpSwap as u32 == bindings::ib_wc_opcode_IB_WC_COMP_SWAP);
    assert!(WcOpcode::FetchAdd as u32 == bindings::ib_wc_opcode_IB_WC_FETCH_ADD);
    assert!(WcOpcode::BindMw as u32 == bindings::ib_wc_opcode_IB_WC_BIND_MW);
    assert!(WcOpcode::LocalInv as u32 == bindings::ib_wc_opcode_IB_WC_LOCAL_INV);
    assert!(WcOpcode::Flush as u32 == bindings::ib_wc_opcode_IB_WC_FLUSH);
    assert!(WcOpcode::AtomicWrite as u32 == bindings::ib_wc_opcode_IB_WC_ATOMIC_WRITE);
    assert!(WcOpcode::Recv as u32 == bindings::ib_wc_opcode_IB_WC_RECV);
    assert!(WcOpcode::RecvWriteImm as u32 == bindings::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM);
    assert!(WcStatus::Success as u32 == bindings::ib_wc_status_IB_WC_SUCCESS);
    assert!(WcStatus::LocLenErr as u32 == bindings::ib_wc_status_IB_WC_LOC_LEN_ERR);
    assert!(WcStatus::LocQpOpErr as u32 == bindings::ib_wc_status_IB_WC_LOC_QP_OP_ERR);
    assert!(WcStatus::LocProtErr as u32 == bindings::ib_wc_status_IB_WC_LOC_PROT_ERR);
    assert!(WcStatus::WrFlushErr as u32 == bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR);
    assert!(WcStatus::MwBindErr as u32 == bindings::ib_wc_status_IB_WC_MW_BIND_ERR);
    assert!(WcStatus::BadRespErr as u32 == bindings::ib_wc_status_IB_WC_BAD_RESP_ERR);
    assert!(WcStatus::RemInvReqErr as u32 == bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR);
    assert!(WcStatus::RemAccessErr as u32 == bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR);
    assert!(WcStatus::RemOpErr as u32 == bindings::ib_wc_status_IB_WC_REM_OP_ERR);
    assert!(WcStatus::RetryExcErr as u32 == bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR);
    assert!(WcStatus::RnrRetryExcErr as u32 == bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR);
    assert!(cqe::WC_GRH == bindings::ib_wc_flags_IB_WC_GRH);
    assert!(cqe::WC_WITH_IMM == bindings::ib_wc_flags_IB_WC_WITH_IMM);
    assert!(cqe::WC_WITH_INVALIDATE == bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE);
};
