// SPDX-License-Identifier: GPL-2.0

//! The driver-specific responses of the rxe user ABI, which rdma-core's rxe
//! provider reads.
//!
//! C header: [`include/uapi/rdma/rdma_user_rxe.h`](srctree/include/uapi/rdma/rdma_user_rxe.h)

use super::UserMapping;
use crate::bindings;
use core::mem::size_of;
use kernel::types::AsBytes;

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
