// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: their attributes.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;

/// The sizes and limit of an SRQ (`struct ib_srq_attr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SrqAttr {
    /// Work requests it holds.
    pub(crate) max_wr: u32,
    /// Scatter/gather entries per work request.
    pub(crate) max_sge: u32,
    /// Below this many posted work requests, the SRQ raises its limit event
    /// once; 0 means disarmed.
    pub(crate) limit: u32,
}

impl SrqAttr {
    pub(super) fn from_raw(a: &bindings::ib_srq_attr) -> Self {
        Self {
            max_wr: a.max_wr,
            max_sge: a.max_sge,
            limit: a.srq_limit,
        }
    }

    pub(super) fn write_to(&self, a: &mut bindings::ib_srq_attr) {
        a.max_wr = self.max_wr;
        a.max_sge = self.max_sge;
        a.srq_limit = self.limit;
    }
}

/// What `modify_srq` changes (`enum ib_srq_attr_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SrqMask(pub(super) u32);

impl SrqMask {
    /// Resize to `max_wr`.
    pub(crate) const MAX_WR: u32 = bindings::ib_srq_attr_mask_IB_SRQ_MAX_WR;
    /// Arm the limit event at `limit`.
    pub(crate) const LIMIT: u32 = bindings::ib_srq_attr_mask_IB_SRQ_LIMIT;

    /// Whether `bit` is set.
    pub(crate) fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
}
