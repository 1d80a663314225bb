// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: their attributes, and the limit event.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::{prelude::*, sync::Mutex};

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

/// Raises an SRQ's asynchronous events for as long as the SRQ exists.
///
/// # Invariants
///
/// `srq` is the SRQ's `ib_srq` until the SRQ is destroyed, and null after.
#[pin_data]
pub(crate) struct SrqNotifier {
    #[pin]
    pub(super) srq: Mutex<RawSrq>,
}

/// An `ib_srq` pointer, null once the SRQ is destroyed (the invariant of
/// [`SrqNotifier`]).
pub(super) struct RawSrq(pub(super) *mut bindings::ib_srq);

// SAFETY: The pointer is only used under the mutex, while the SRQ lives.
unsafe impl Send for RawSrq {}

impl SrqNotifier {
    /// Tells the SRQ's owner that fewer work requests than its limit are
    /// left (`IB_EVENT_SRQ_LIMIT_REACHED`), unless the SRQ is gone.
    pub(crate) fn limit_reached(&self) {
        let srq = self.srq.lock();
        if srq.0.is_null() {
            return;
        }
        // SAFETY: Not null, so the SRQ is alive by the type invariant, and
        // cannot be destroyed while we hold the lock.
        unsafe {
            let handler = (*srq.0).event_handler;
            let mut ev = bindings::ib_event {
                device: (*srq.0).device,
                event: bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED,
                ..Default::default()
            };
            ev.element.srq = srq.0;
            if let Some(handler) = handler {
                handler(&mut ev, (*srq.0).srq_context);
            }
        }
    }
}
