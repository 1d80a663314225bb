// SPDX-License-Identifier: GPL-2.0

//! Driver-specific command data from and to userspace (`struct ib_udata`).

use crate::bindings;
use core::mem::size_of;
use kernel::{prelude::*, types::AsBytes, types::Opaque, uaccess::UserSlice};

/// The driver-specific part of a uverbs command: what userspace sent beyond
/// the core command, and room for the driver's part of the response.
///
/// # Invariants
///
/// Wraps a valid `ib_udata` (or none, for kernel callers) for the duration
/// of a verbs callback.
pub(crate) struct UData<'a>(Option<&'a Opaque<bindings::ib_udata>>);

impl<'a> UData<'a> {
    /// Wraps the `udata` argument of a verbs callback.
    ///
    /// # Safety
    ///
    /// `ptr` is null or valid for `'a`.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::ib_udata) -> Self {
        // SAFETY: The caller guarantees validity for `'a`.
        Self(unsafe { ptr.cast::<Opaque<bindings::ib_udata>>().as_ref() })
    }

    /// The length of the input userspace provided.
    pub(crate) fn in_len(&self) -> usize {
        // SAFETY: By the type invariant the udata is valid.
        self.0.map_or(0, |u| unsafe { (*u.get()).inlen })
    }

    /// The room userspace provided for the response.
    pub(crate) fn out_len(&self) -> usize {
        // SAFETY: By the type invariant the udata is valid.
        self.0.map_or(0, |u| unsafe { (*u.get()).outlen })
    }

    /// Writes the driver's part of a response. Userspace must have left
    /// room for all of `T` (`EINVAL` if not: it speaks another ABI); a kernel
    /// caller, which has no udata, gets nothing.
    pub(crate) fn respond<T: AsBytes>(&self, resp: &T) -> Result {
        let Some(u) = self.0 else { return Ok(()) };
        // SAFETY: By the type invariant the udata is valid.
        let (outbuf, outlen) = unsafe { ((*u.get()).outbuf as usize, (*u.get()).outlen) };
        if outlen < size_of::<T>() {
            return Err(EINVAL);
        }
        UserSlice::new(outbuf, size_of::<T>()).writer().write(resp)
    }
}
