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

/// `struct rxe_create_cq_resp`: where the CQ ring is to be mapped.
#[repr(transparent)]
pub(crate) struct CreateCqResp(bindings::rxe_create_cq_resp);

// SAFETY: A `u64` and two `u32`s: no padding, every byte initialised.
unsafe impl AsBytes for CreateCqResp {}

impl CreateCqResp {
    /// The response for a CQ whose ring is `ring`.
    pub(crate) fn new(ring: &UserMapping) -> Self {
        Self(bindings::rxe_create_cq_resp {
            mi: bindings::mminfo {
                offset: ring.offset(),
                size: ring.size(),
                pad: 0,
            },
        })
    }
}
