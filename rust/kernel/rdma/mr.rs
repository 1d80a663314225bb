// SPDX-License-Identifier: GPL-2.0

//! Memory regions: access rights, and user memory pinned with `ib_umem`.
//!
//! C header: [`include/rdma/ib_umem.h`](srctree/include/rdma/ib_umem.h)

use super::{Device, Driver};
use crate::bindings;
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, prelude::*};

/// Access rights of a memory region (`enum ib_access_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Access(u32);

impl Access {
    /// The local side may write (receives, RDMA read responses).
    pub(crate) const LOCAL_WRITE: Self = Self(bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE);
    /// Peers may RDMA WRITE into it.
    pub(crate) const REMOTE_WRITE: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE);
    /// Peers may RDMA READ from it.
    pub(crate) const REMOTE_READ: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_READ);
    /// Peers may run atomics on it.
    pub(crate) const REMOTE_ATOMIC: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC);
    /// Flags ib_core lets a driver ignore (`IB_ACCESS_OPTIONAL`, e.g.
    /// relaxed ordering).
    pub(crate) const OPTIONAL: Self = Self(bindings::ib_access_flags_IB_ACCESS_OPTIONAL);

    /// The rights in `bits`, as userspace passed them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The union of two sets of rights.
    pub(crate) const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every right in `other` is also in `self`.
    pub(crate) fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// User memory pinned for the life of the object (`struct ib_umem`).
///
/// # Invariants
///
/// The pointer comes from a successful `ib_umem_get` and is released once,
/// on drop.
pub(crate) struct Umem(NonNull<bindings::ib_umem>);

// SAFETY: A umem may be released from any thread.
unsafe impl Send for Umem {}
// SAFETY: No method mutates through `&self`.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `len` bytes at user address `addr` of the calling process, for
    /// the uses `access` allows (writable pages for any write right).
    pub(crate) fn pin<T: Driver>(
        dev: &Device<T>,
        addr: u64,
        len: u64,
        access: Access,
    ) -> Result<Self> {
        let addr = usize::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: The device is alive; ib_umem_get checks the range against
        // the calling process's memory and returns a pointer or an error.
        let umem = from_err_ptr(unsafe {
            bindings::ib_umem_get(dev.as_raw(), addr as _, len, access.0 as _)
        })?;
        // INVARIANT: A successful `ib_umem_get`.
        NonNull::new(umem).map(Self).ok_or(ENOMEM)
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this is the one release.
        unsafe { bindings::ib_umem_release(self.0.as_ptr()) };
    }
}
