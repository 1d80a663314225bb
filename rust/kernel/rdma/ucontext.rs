// SPDX-License-Identifier: GPL-2.0

//! The user context of a process that opened a device.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::types::Opaque;

/// The user context a uverbs command runs in (`struct ib_ucontext`).
///
/// # Invariants
///
/// Wraps a live `ib_ucontext` for the duration of the borrow.
#[repr(transparent)]
pub(crate) struct UserContext(Opaque<bindings::ib_ucontext>);

impl UserContext {
    /// The C pointer, for the abstractions that pass it on.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_ucontext {
        self.0.get()
    }
}
