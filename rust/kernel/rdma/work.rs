// SPDX-License-Identifier: GPL-2.0

//! Work requests and completions of kernel consumers (ib_mad's QP1, ULPs),
//! in the verbs' own terms: what `ib_post_send` and `ib_post_recv` pass a
//! driver, and what it gives back to `ib_poll_cq` (see `kverbs`). A driver
//! turns them into its own work requests; the numbers they carry are the
//! verbs' (the modules below), which the uverbs ABI shares.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{kernel_segs::KernelSegs, Av, Qpn, Rkey};
use kernel::prelude::*;

/// A kernel consumer's send work request, its memory not yet checked.
pub(crate) struct KernelSendWr {
    pub(crate) wr_id: u64,
    /// The operation, one of [`wr_opcode`].
    pub(crate) opcode: u32,
    /// [`send_flags`].
    pub(crate) flags: u32,
    /// The immediate data (big-endian, as on the wire) or the key to
    /// invalidate.
    pub(crate) ex: u32,
    pub(crate) data: KernelSendData,
    pub(crate) operands: KernelOperands,
}

/// Where a kernel send's data is.
pub(crate) enum KernelSendData {
    /// Copied at post time ([`send_flags::INLINE`]): the consumer may reuse
    /// its buffer once the post returns.
    Inline(KVec<u8>),
    /// The consumer's memory, until the request completes.
    Segs(KernelSegs),
}

impl KernelSendData {
    /// The message length.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Inline(bytes) => bytes.len(),
            Self::Segs(segs) => segs.len(),
        }
    }
}

/// The operands of a kernel send, by the kind of request.
pub(crate) enum KernelOperands {
    /// A SEND or a local operation on an RC or UC QP.
    None,
    /// Any request on a UD or GSI QP: where it goes.
    Ud {
        av: Av,
        remote_qpn: Qpn,
        remote_qkey: u32,
    },
    /// An RDMA WRITE or READ.
    Rdma { remote_addr: u64, rkey: Rkey },
    /// An atomic operation.
    Atomic {
        remote_addr: u64,
        rkey: Rkey,
        compare_add: u64,
        swap: u64,
    },
    /// A fast registration of an MR, at `iova`, under `key` (its lkey and
    /// rkey alike).
    RegMr { key: Rkey, access: u32, iova: u64 },
}

/// A kernel consumer's receive work request.
pub(crate) struct KernelRecvWr {
    pub(crate) wr_id: u64,
    pub(crate) segs: KernelSegs,
}

/// A completion for a kernel consumer, as `ib_poll_cq` returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelWc {
    pub(crate) wr_id: u64,
    /// One of [`wc_status`].
    pub(crate) status: u32,
    /// One of [`wc_opcode`].
    pub(crate) opcode: u32,
    pub(crate) byte_len: u32,
    /// The immediate data or the invalidated key.
    pub(crate) ex: u32,
    pub(crate) src_qp: Qpn,
    /// [`wc_flags`].
    pub(crate) flags: u32,
    /// The QP the work request was posted to: `u64::from` its
    /// [`QpHandle`], which the driver stored with the completion.
    pub(crate) qp: u64,
    /// 4 or 6 for a UD receive, the IP version of its packet; else 0.
    pub(crate) ip_version: u8,
}

/// The `ib_qp` of a kernel QP, opaque to the driver, which hands it back in
/// the QP's completions (0 for user QPs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpHandle(pub(super) usize);

impl From<QpHandle> for u64 {
    fn from(qp: QpHandle) -> u64 {
        qp.0 as u64
    }
}

/// The operations of a send work request (`enum ib_wr_opcode`).
pub(crate) mod wr_opcode {
    use crate::bindings;
    pub(crate) const RDMA_WRITE: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE;
    pub(crate) const RDMA_WRITE_WITH_IMM: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM;
    pub(crate) const SEND: u32 = bindings::ib_wr_opcode_IB_WR_SEND;
    pub(crate) const SEND_WITH_IMM: u32 = bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM;
    pub(crate) const RDMA_READ: u32 = bindings::ib_wr_opcode_IB_WR_RDMA_READ;
    pub(crate) const ATOMIC_CMP_AND_SWP: u32 = bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP;
    pub(crate) const ATOMIC_FETCH_AND_ADD: u32 = bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD;
    pub(crate) const LOCAL_INV: u32 = bindings::ib_wr_opcode_IB_WR_LOCAL_INV;
    pub(crate) const BIND_MW: u32 = bindings::ib_wr_opcode_IB_WR_BIND_MW;
    pub(crate) const SEND_WITH_INV: u32 = bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV;
    pub(crate) const REG_MR: u32 = bindings::ib_wr_opcode_IB_WR_REG_MR;
    pub(crate) const FLUSH: u32 = bindings::ib_wr_opcode_IB_WR_FLUSH;
    pub(crate) const ATOMIC_WRITE: u32 = bindings::ib_wr_opcode_IB_WR_ATOMIC_WRITE;
}

/// The flags of a send work request (`enum ib_send_flags`).
pub(crate) mod send_flags {
    use crate::bindings;
    pub(crate) const FENCE: u32 = bindings::ib_send_flags_IB_SEND_FENCE as u32;
    pub(crate) const SIGNALED: u32 = bindings::ib_send_flags_IB_SEND_SIGNALED as u32;
    pub(crate) const SOLICITED: u32 = bindings::ib_send_flags_IB_SEND_SOLICITED as u32;
    pub(crate) const INLINE: u32 = bindings::ib_send_flags_IB_SEND_INLINE as u32;
}

/// What a completion completed (`enum ib_wc_opcode`).
pub(crate) mod wc_opcode {
    use crate::bindings;
    pub(crate) const SEND: u32 = bindings::ib_wc_opcode_IB_WC_SEND;
    pub(crate) const RDMA_WRITE: u32 = bindings::ib_wc_opcode_IB_WC_RDMA_WRITE;
    pub(crate) const RDMA_READ: u32 = bindings::ib_wc_opcode_IB_WC_RDMA_READ;
    pub(crate) const COMP_SWAP: u32 = bindings::ib_wc_opcode_IB_WC_COMP_SWAP;
    pub(crate) const FETCH_ADD: u32 = bindings::ib_wc_opcode_IB_WC_FETCH_ADD;
    pub(crate) const BIND_MW: u32 = bindings::ib_wc_opcode_IB_WC_BIND_MW;
    pub(crate) const LOCAL_INV: u32 = bindings::ib_wc_opcode_IB_WC_LOCAL_INV;
    pub(crate) const FLUSH: u32 = bindings::ib_wc_opcode_IB_WC_FLUSH;
    pub(crate) const ATOMIC_WRITE: u32 = bindings::ib_wc_opcode_IB_WC_ATOMIC_WRITE;
    pub(crate) const REG_MR: u32 = bindings::ib_wc_opcode_IB_WC_REG_MR;
    pub(crate) const RECV: u32 = bindings::ib_wc_opcode_IB_WC_RECV;
    pub(crate) const RECV_RDMA_WITH_IMM: u32 = bindings::ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM;
}

/// How a work request ended (`enum ib_wc_status`).
pub(crate) mod wc_status {
    use crate::bindings;
    pub(crate) const SUCCESS: u32 = bindings::ib_wc_status_IB_WC_SUCCESS;
    pub(crate) const LOC_LEN_ERR: u32 = bindings::ib_wc_status_IB_WC_LOC_LEN_ERR;
    pub(crate) const LOC_QP_OP_ERR: u32 = bindings::ib_wc_status_IB_WC_LOC_QP_OP_ERR;
    pub(crate) const LOC_PROT_ERR: u32 = bindings::ib_wc_status_IB_WC_LOC_PROT_ERR;
    pub(crate) const WR_FLUSH_ERR: u32 = bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR;
    pub(crate) const MW_BIND_ERR: u32 = bindings::ib_wc_status_IB_WC_MW_BIND_ERR;
    pub(crate) const BAD_RESP_ERR: u32 = bindings::ib_wc_status_IB_WC_BAD_RESP_ERR;
    pub(crate) const REM_INV_REQ_ERR: u32 = bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR;
    pub(crate) const REM_ACCESS_ERR: u32 = bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR;
    pub(crate) const REM_OP_ERR: u32 = bindings::ib_wc_status_IB_WC_REM_OP_ERR;
    pub(crate) const RETRY_EXC_ERR: u32 = bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR;
    pub(crate) const RNR_RETRY_EXC_ERR: u32 = bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR;
}

/// The flags of a completion (`enum ib_wc_flags`).
pub(crate) mod wc_flags {
    use crate::bindings;
    pub(crate) const GRH: u32 = bindings::ib_wc_flags_IB_WC_GRH;
    pub(crate) const WITH_IMM: u32 = bindings::ib_wc_flags_IB_WC_WITH_IMM;
    pub(crate) const WITH_INVALIDATE: u32 = bindings::ib_wc_flags_IB_WC_WITH_INVALIDATE;
}
