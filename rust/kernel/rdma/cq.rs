// SPDX-License-Identifier: GPL-2.0

//! A CQ's completion event, which the driver signals.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::{prelude::*, sync::Mutex};

/// Signals a CQ's completion event (its `comp_handler`, e.g. to a
/// completion channel) for as long as the CQ exists.
///
/// # Invariants
///
/// `cq` is the CQ's `ib_cq` until the CQ is destroyed, and null after.
#[pin_data]
pub(crate) struct CqNotifier {
    #[pin]
    pub(super) cq: Mutex<RawCq>,
}

/// An `ib_cq` pointer, null once the CQ is destroyed (the invariant of
/// [`CqNotifier`]).
pub(super) struct RawCq(pub(super) *mut bindings::ib_cq);

// SAFETY: The pointer is only used under the mutex, while the CQ lives.
unsafe impl Send for RawCq {}

impl CqNotifier {
    /// Calls the CQ's completion handler, unless the CQ is gone.
    pub(crate) fn notify(&self) {
        let cq = self.cq.lock();
        if !cq.0.is_null() {
            // SAFETY: Not null, so the CQ is alive by the type invariant,
            // and cannot be destroyed while we hold the lock.
            unsafe { bindings::rroce_cq_comp_handler(cq.0) };
        }
    }
}
