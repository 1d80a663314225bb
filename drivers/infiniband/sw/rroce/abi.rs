// SPDX-License-Identifier: GPL-2.0

//! The protocol core's ring elements and completion values, checked
//! against the C headers at compile time: a mismatch fails the build. The
//! rings are shared with rdma-core's rxe provider, and kernel consumers'
//! operations and completions pass through as numbers.

use crate::kernel_ext::rdma::{
    rxe_abi::layout, send_flags, wc_flags, wc_opcode, wc_status, wr_opcode,
};
use crate::proto::{
    cqe::{self, WcOpcode, WcStatus},
    wqe::{self, dma, operands, recv, send, WrOpcode},
};

const _: () = {
    assert!(wqe::SEND_WQE_SIZE as usize == layout::SEND_WQE_SIZE);
    assert!(wqe::RECV_WQE_SIZE as usize == layout::RECV_WQE_SIZE);
    assert!(wqe::SGE_SIZE as usize == layout::SGE_SIZE);
    assert!(send::WR_ID == layout::send::WR_ID);
    assert!(send::OPCODE == layout::send::OPCODE);
    assert!(send::SEND_FLAGS == layout::send::SEND_FLAGS);
    assert!(send::EX == layout::send::EX);
    assert!(send::OPERANDS == layout::send::OPERANDS);
    assert!(send::DMA == layout::send::DMA);
    assert!(recv::WR_ID == layout::recv::WR_ID);
    assert!(recv::DMA == layout::recv::DMA);
    assert!(dma::LENGTH == layout::dma::LENGTH);
    assert!(dma::NUM_SGE == layout::dma::NUM_SGE);
    assert!(dma::DATA == layout::dma::DATA);
    assert!(operands::REMOTE_ADDR == layout::operands::RDMA_REMOTE_ADDR);
    assert!(operands::RDMA_RKEY == layout::operands::RDMA_RKEY);
    assert!(operands::ATOMIC_COMPARE_ADD == layout::operands::ATOMIC_COMPARE_ADD);
    assert!(operands::ATOMIC_SWAP == layout::operands::ATOMIC_SWAP);
    assert!(operands::ATOMIC_RKEY == layout::operands::ATOMIC_RKEY);
    assert!(operands::REMOTE_ADDR == layout::operands::ATOMIC_REMOTE_ADDR);
    assert!(operands::UD_REMOTE_QPN == layout::operands::UD_REMOTE_QPN);
    assert!(operands::UD_REMOTE_QKEY == layout::operands::UD_REMOTE_QKEY);
    assert!(operands::UD_AH_NUM == layout::operands::UD_AH_NUM);
    assert!(operands::REMOTE_ADDR == layout::operands::MW_ADDR);
    assert!(operands::MW_LENGTH == layout::operands::MW_LENGTH);
    assert!(operands::MW_MR_LKEY == layout::operands::MW_MR_LKEY);
    assert!(operands::MW_MW_RKEY == layout::operands::MW_MW_RKEY);
    assert!(operands::MW_RKEY == layout::operands::MW_RKEY);
    assert!(operands::MW_ACCESS == layout::operands::MW_ACCESS);
    assert!(operands::REMOTE_ADDR == layout::operands::FLUSH_REMOTE_ADDR);
    assert!(operands::FLUSH_RKEY == layout::operands::FLUSH_RKEY);
    assert!(operands::FLUSH_TYPE == layout::operands::FLUSH_TYPE);
    assert!(operands::FLUSH_LEVEL == layout::operands::FLUSH_LEVEL);
    assert!(cqe::USER_WC_SIZE as usize == layout::WC_SIZE);
    assert!(cqe::user::WR_ID == layout::wc::WR_ID);
    assert!(cqe::user::STATUS == layout::wc::STATUS);
    assert!(cqe::user::OPCODE == layout::wc::OPCODE);
    assert!(cqe::user::BYTE_LEN == layout::wc::BYTE_LEN);
    assert!(cqe::user::EX == layout::wc::EX);
    assert!(cqe::user::QP_NUM == layout::wc::QP_NUM);
    assert!(cqe::user::SRC_QP == layout::wc::SRC_QP);
    assert!(cqe::user::WC_FLAGS == layout::wc::WC_FLAGS);
    assert!(cqe::user::SL == layout::wc::SL);
    assert!(cqe::user::PORT_NUM == layout::wc::PORT_NUM);
    assert!(WrOpcode::Write as u32 == wr_opcode::RDMA_WRITE);
    assert!(WrOpcode::WriteImm as u32 == wr_opcode::RDMA_WRITE_WITH_IMM);
    assert!(WrOpcode::Send as u32 == wr_opcode::SEND);
    assert!(WrOpcode::SendImm as u32 == wr_opcode::SEND_WITH_IMM);
    assert!(WrOpcode::Read as u32 == wr_opcode::RDMA_READ);
    assert!(WrOpcode::CmpSwap as u32 == wr_opcode::ATOMIC_CMP_AND_SWP);
    assert!(WrOpcode::FetchAdd as u32 == wr_opcode::ATOMIC_FETCH_AND_ADD);
    assert!(WrOpcode::LocalInv as u32 == wr_opcode::LOCAL_INV);
    assert!(WrOpcode::BindMw as u32 == wr_opcode::BIND_MW);
    assert!(WrOpcode::SendInv as u32 == wr_opcode::SEND_WITH_INV);
    assert!(WrOpcode::RegMr as u32 == wr_opcode::REG_MR);
    assert!(WrOpcode::Flush as u32 == wr_opcode::FLUSH);
    assert!(WrOpcode::AtomicWrite as u32 == wr_opcode::ATOMIC_WRITE);
    assert!(wqe::SEND_FENCE == send_flags::FENCE);
    assert!(wqe::SEND_SIGNALED == send_flags::SIGNALED);
    assert!(wqe::SEND_SOLICITED == send_flags::SOLICITED);
    assert!(wqe::SEND_INLINE == send_flags::INLINE);
    assert!(WcOpcode::RegMr as u32 == wc_opcode::REG_MR);
    assert!(WcOpcode::Send as u32 == wc_opcode::SEND);
    assert!(WcOpcode::Write as u32 == wc_opcode::RDMA_WRITE);
    assert!(WcOpcode::Read as u32 == wc_opcode::RDMA_READ);
    assert!(WcOpcode::CmpSwap as u32 == wc_opcode::COMP_SWAP);
    assert!(WcOpcode::FetchAdd as u32 == wc_opcode::FETCH_ADD);
    assert!(WcOpcode::BindMw as u32 == wc_opcode::BIND_MW);
    assert!(WcOpcode::LocalInv as u32 == wc_opcode::LOCAL_INV);
    assert!(WcOpcode::Flush as u32 == wc_opcode::FLUSH);
    assert!(WcOpcode::AtomicWrite as u32 == wc_opcode::ATOMIC_WRITE);
    assert!(WcOpcode::Recv as u32 == wc_opcode::RECV);
    assert!(WcOpcode::RecvWriteImm as u32 == wc_opcode::RECV_RDMA_WITH_IMM);
    assert!(WcStatus::Success as u32 == wc_status::SUCCESS);
    assert!(WcStatus::LocLenErr as u32 == wc_status::LOC_LEN_ERR);
    assert!(WcStatus::LocQpOpErr as u32 == wc_status::LOC_QP_OP_ERR);
    assert!(WcStatus::LocProtErr as u32 == wc_status::LOC_PROT_ERR);
    assert!(WcStatus::WrFlushErr as u32 == wc_status::WR_FLUSH_ERR);
    assert!(WcStatus::MwBindErr as u32 == wc_status::MW_BIND_ERR);
    assert!(WcStatus::BadRespErr as u32 == wc_status::BAD_RESP_ERR);
    assert!(WcStatus::RemInvReqErr as u32 == wc_status::REM_INV_REQ_ERR);
    assert!(WcStatus::RemAccessErr as u32 == wc_status::REM_ACCESS_ERR);
    assert!(WcStatus::RemOpErr as u32 == wc_status::REM_OP_ERR);
    assert!(WcStatus::RetryExcErr as u32 == wc_status::RETRY_EXC_ERR);
    assert!(WcStatus::RnrRetryExcErr as u32 == wc_status::RNR_RETRY_EXC_ERR);
    assert!(cqe::WC_GRH == wc_flags::GRH);
    assert!(cqe::WC_WITH_IMM == wc_flags::WITH_IMM);
    assert!(cqe::WC_WITH_INVALIDATE == wc_flags::WITH_INVALIDATE);
};
