// SPDX-License-Identifier: GPL-2.0

//! Numbers from a range, each given to one holder at a time: the kernel's
//! ID allocator, which allocates its memory as numbers are taken, so a
//! range of millions costs nothing until it is used.
//!
//! C header: [`include/linux/idr.h`](srctree/include/linux/idr.h)

use crate::bindings;
use kernel::{error::to_result, prelude::*, types::Opaque};

/// A set of taken numbers (`struct ida`), lowest free first.
///
/// # Invariants
///
/// `ida` is initialised, and destroyed only on drop.
#[pin_data(PinnedDrop)]
pub(crate) struct Ida {
    #[pin]
    ida: Opaque<bindings::ida>,
}

// SAFETY: The IDA takes its own lock in every call.
unsafe impl Send for Ida {}
// SAFETY: As for `Send`.
unsafe impl Sync for Ida {}

impl Ida {
    /// No number taken.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `ida_init` initialises the memory it is given.
            ida <- Opaque::ffi_init(|ida| unsafe { bindings::rroce_ida_init(ida) }),
        })
    }

    /// Takes the lowest free number of `min..=max`: `ENOSPC` when all are
    /// taken, `ENOMEM` when the IDA cannot grow. May sleep.
    pub(crate) fn alloc(&self, min: u32, max: u32) -> Result<u32> {
        // SAFETY: The IDA is initialised (type invariant).
        let id = unsafe { bindings::rroce_ida_alloc(self.ida.get(), min, max) };
        to_result(id)?;
        Ok(id as u32)
    }

    /// Gives `id` back. It must have been taken and not given back since:
    /// the kernel warns otherwise.
    pub(crate) fn free(&self, id: u32) {
        // SAFETY: The IDA is initialised (type invariant).
        unsafe { bindings::ida_free(self.ida.get(), id) };
    }
}

#[pinned_drop]
impl PinnedDrop for Ida {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The IDA is initialised and no longer used; this frees
        // what it allocated, whatever is still taken.
        unsafe { bindings::ida_destroy(self.ida.get()) };
    }
}
