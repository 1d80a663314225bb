// SPDX-License-Identifier: GPL-2.0

//! Memory regions: access rights, and user memory pinned with `ib_umem`.
//!
//! C header: [`include/rdma/ib_umem.h`](srctree/include/rdma/ib_umem.h)

use super::{Device, Driver};
use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    error::{from_err_ptr, to_result},
    ffi,
    page::PAGE_SIZE,
    prelude::*,
};

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
    /// Memory windows may be bound to it.
    pub(crate) const MW_BIND: Self = Self(bindings::ib_access_flags_IB_ACCESS_MW_BIND);
    /// A window's addresses count from its start, not the virtual address.
    pub(crate) const ZERO_BASED: Self = Self(bindings::ib_access_flags_IB_ZERO_BASED);
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

    /// The bits, as ib_core passes them.
    pub(crate) fn bits(self) -> u32 {
        self.0
    }

    /// Whether a right lets anyone write the memory, so that its pages must
    /// be pinned writable (`ib_access_writable`).
    pub(crate) fn is_writable(self) -> bool {
        self.0
            & (bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE
                | bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE
                | bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC
                | bindings::ib_access_flags_IB_ACCESS_MW_BIND)
            != 0
    }

    /// Whether every right in `other` is also in `self`.
    pub(crate) fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// User memory pinned for the life of the object (`struct ib_umem`), with
/// its pages listed so that any byte is found in one step.
///
/// # Invariants
///
/// `umem` comes from a successful `ib_umem_get` of `len` bytes and is
/// released once, on drop. `pages` are its pinned pages in order; the
/// region's first byte is at `first` in the first page.
pub(crate) struct Umem {
    umem: NonNull<bindings::ib_umem>,
    pages: KVec<PagePtr>,
    first: usize,
    len: usize,
}

/// A page of a [`Umem`].
#[derive(Clone, Copy)]
struct PagePtr(NonNull<bindings::page>);

// SAFETY: A umem may be released from any thread, and its pinned pages
// accessed from any thread.
unsafe impl Send for Umem {}
// SAFETY: Copies through `&self` go to user memory, which has no Rust
// aliasing rules; concurrent copies only race on the user's bytes.
unsafe impl Sync for Umem {}

/// An IB atomic operation on 8 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AtomicOp {
    /// Store `swap` if the value equals `compare`.
    CompareSwap { compare: u64, swap: u64 },
    /// Add `add`.
    FetchAdd { add: u64 },
}

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
        let umem = NonNull::new(umem).ok_or(ENOMEM)?;
        let mut pages = KVec::new();
        // SAFETY: `umem` is pinned; the callback gets `pages` back as `ctx`.
        let err = unsafe {
            bindings::rroce_umem_for_each_page(
                umem.as_ptr(),
                Some(Self::add_page),
                (&mut pages as *mut KVec<PagePtr>).cast(),
            )
        };
        // SAFETY: `umem` is valid.
        let first = unsafe { bindings::rroce_umem_offset(umem.as_ptr()) } as usize;
        // INVARIANT: `umem` is pinned, `pages` are its pages.
        let this = Self {
            umem,
            pages,
            first,
            len,
        };
        to_result(err)?;
        let need = (first + len).div_ceil(PAGE_SIZE);
        if this.pages.len() < need {
            return Err(EFAULT);
        }
        Ok(this)
    }

    /// # Safety
    ///
    /// `ctx` is the `KVec<PagePtr>` passed to `rroce_umem_for_each_page`.
    unsafe extern "C" fn add_page(ctx: *mut ffi::c_void, page: *mut bindings::page) -> ffi::c_int {
        // SAFETY: Guaranteed by the caller.
        let pages = unsafe { &mut *ctx.cast::<KVec<PagePtr>>() };
        let Some(page) = NonNull::new(page) else {
            return EFAULT.to_errno();
        };
        match pages.push(PagePtr(page), GFP_KERNEL) {
            Ok(()) => 0,
            Err(_) => ENOMEM.to_errno(),
        }
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f` with each page piece of `offset..offset + len`: the page,
    /// the offset in it, and the piece's offset from `offset` and length.
    fn pieces(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(PagePtr, usize, usize, usize),
    ) -> Result {
        if offset.checked_add(len).ok_or(EFAULT)? > self.len {
            return Err(EFAULT);
        }
        let mut done = 0;
        while done < len {
            let pos = self.first + offset + done;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done);
            // In bounds: `pos` < `first + self.len`, which `pin` checked.
            f(self.pages[pos / PAGE_SIZE], in_page, done, n);
            done += n;
        }
        Ok(())
    }

    /// Copies `src` into the region at `offset`; `EFAULT` past its end.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result {
        self.pieces(offset, src.len(), |page, in_page, at, n| {
            // SAFETY: A pinned page of ours; `in_page + n` <= PAGE_SIZE and
            // `at + n` <= `src.len()`. The helper only reads `src`.
            unsafe {
                bindings::rroce_page_copy(
                    page.0.as_ptr(),
                    in_page as u32,
                    src.as_ptr().add(at).cast_mut().cast(),
                    n as u32,
                    true,
                )
            }
        })
    }

    /// Copies from the region at `offset` into `dst`; `EFAULT` past its end.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> Result {
        self.pieces(offset, dst.len(), |page, in_page, at, n| {
            // SAFETY: As in `write`, with `dst` written.
            unsafe {
                bindings::rroce_page_copy(
                    page.0.as_ptr(),
                    in_page as u32,
                    dst.as_mut_ptr().add(at).cast(),
                    n as u32,
                    false,
                )
            }
        })
    }

    /// Runs `op` on the 8 bytes at `offset`, which must be 8-byte aligned
    /// in the address space (`EINVAL`) and inside (`EFAULT`); returns the
    /// original value.
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        if (self.first + offset) % 8 != 0 {
            return Err(EINVAL);
        }
        let mut orig = 0;
        self.pieces(offset, 8, |page, in_page, _, _| {
            let (cmp_swap, compare, operand) = match op {
                AtomicOp::CompareSwap { compare, swap } => (true, compare, swap),
                AtomicOp::FetchAdd { add } => (false, 0, add),
            };
            // SAFETY: A pinned page of ours; aligned, so the 8 bytes lie in
            // this one page.
            orig = unsafe {
                bindings::rroce_page_atomic(
                    page.0.as_ptr(),
                    in_page as u32,
                    cmp_swap,
                    compare,
                    operand,
                )
            };
        })?;
        Ok(orig)
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this is the one release.
        unsafe { bindings::ib_umem_release(self.umem.as_ptr()) };
    }
}
