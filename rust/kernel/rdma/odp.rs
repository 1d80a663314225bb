// SPDX-License-Identifier: GPL-2.0

//! On-demand paging: user memory an MR maps without pinning it
//! (`struct ib_umem_odp`).
//!
//! The kernel may take any page away (reclaim, migration, `munmap`,
//! `madvise`); its MMU notifier then calls [`invalidate`], which unmaps the
//! page under the umem's mutex. Every copy takes the same mutex, faulting in
//! what is missing first, so no copy ever touches a page the kernel has
//! taken back.
//!
//! C header: [`include/rdma/ib_umem_odp.h`](srctree/include/rdma/ib_umem_odp.h)

use super::{
    pages::{PagePtr, PageRun},
    Device,
};
use crate::bindings;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    error::{from_err_ptr, to_result},
    ffi,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
};

/// `ODP_READ_ALLOWED_BIT` and `ODP_WRITE_ALLOWED_BIT`: what a mapped page of
/// `dma_list` may be used for.
const READ_ALLOWED: u64 = 1;
const WRITE_ALLOWED: u64 = 2;
/// The rights bits of a `dma_list` entry; the rest is the DMA address.
const DMA_ALLOWED_MASK: u64 = READ_ALLOWED | WRITE_ALLOWED;

/// Whether the kernel was built with on-demand paging
/// (`CONFIG_INFINIBAND_ON_DEMAND_PAGING`).
pub(crate) fn supported() -> bool {
    // SAFETY: No arguments, no state.
    unsafe { bindings::rroce_odp_supported() }
}

/// The MMU notifier's callbacks of every on-demand umem.
static INVALIDATE_OPS: bindings::mmu_interval_notifier_ops = bindings::mmu_interval_notifier_ops {
    invalidate: Some(invalidate),
};

/// User memory mapped on demand.
///
/// # Invariants
///
/// `odp` comes from a successful `ib_umem_odp_get` or
/// `ib_umem_odp_alloc_child` with [`INVALIDATE_OPS`] and is released once,
/// on drop; its pages are of `PAGE_SIZE`. It maps `len` bytes from offset
/// `first` of its first page.
pub(crate) struct OdpUmem {
    odp: NonNull<bindings::ib_umem_odp>,
    first: usize,
    len: usize,
    writable: bool,
}

// SAFETY: The umem may be released from any thread, and its pages are only
// touched under its mutex, which any thread may take.
unsafe impl Send for OdpUmem {}
// SAFETY: As above; copies through `&self` only race on the user's bytes.
unsafe impl Sync for OdpUmem {}

impl OdpUmem {
    /// The `len` bytes at user address `addr` of the calling process, with
    /// the rights `access` (`enum ib_access_flags`), writable if `writable`;
    /// nothing is faulted in yet.
    pub(super) fn get<T>(
        dev: &Device<T>,
        addr: u64,
        len: u64,
        access: u32,
        writable: bool,
    ) -> Result<Self> {
        if !supported() {
            return Err(crate::kernel_ext::errno::eopnotsupp());
        }
        let addr = usize::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        addr.checked_add(len).ok_or(EINVAL)?;
        // SAFETY: The device is alive and the ops static; ib_umem_odp_get
        // registers the range of the calling process's memory and returns
        // a pointer or an error.
        let odp = from_err_ptr(unsafe {
            bindings::rroce_umem_odp_get(dev.as_raw(), addr as _, len, access as _, &INVALIDATE_OPS)
        })?;
        let odp = NonNull::new(odp).ok_or(ENOMEM)?;
        // INVARIANT: Just made, released on drop; the page size is checked
        // below.
        let this = Self {
            odp,
            first: addr % PAGE_SIZE,
            len,
            writable,
        };
        // SAFETY: `odp` is valid.
        if unsafe { (*odp.as_ptr()).page_shift } as usize != PAGE_SHIFT {
            return Err(EINVAL);
        }
        Ok(this)
    }

    /// The `len` bytes at user address `start`, page aligned, of the
    /// process of the implicit umem `root`, as its child; writable if
    /// `writable`.
    ///
    /// # Safety
    ///
    /// `root` comes from `ib_umem_odp_alloc_implicit` and outlives the child.
    pub(super) unsafe fn child(
        root: NonNull<bindings::ib_umem_odp>,
        start: usize,
        len: usize,
        writable: bool,
    ) -> Result<Self> {
        // SAFETY: `root` is an implicit umem, alive for the call, by the
        // caller's guarantee; the ops are static.
        let odp = from_err_ptr(unsafe {
            bindings::rroce_umem_odp_alloc_child(root.as_ptr(), start as _, len, &INVALIDATE_OPS)
        })?;
        // INVARIANT: Made with `INVALIDATE_OPS` and pages of `PAGE_SIZE`
        // (ib_core's children always have them), released on drop.
        Ok(Self {
            odp: NonNull::new(odp).ok_or(ENOMEM)?,
            first: start % PAGE_SIZE,
            len,
            writable,
        })
    }

    /// The length in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The user address of the byte at `offset`.
    fn address(&self, offset: usize) -> u64 {
        // SAFETY: `odp` is valid; its start does not change.
        let start = unsafe { bindings::rroce_umem_odp_start(self.odp.as_ptr()) };
        (start as usize + self.first + offset) as u64
    }

    /// Whether pages `pages` are mapped for writing if `write`, else for
    /// reading.
    ///
    /// # Safety
    ///
    /// The umem's mutex is held, and the pages are within it.
    unsafe fn mapped(&self, pages: core::ops::Range<usize>, write: bool) -> bool {
        let want = READ_ALLOWED | if write { WRITE_ALLOWED } else { 0 };
        // SAFETY: `dma_list` has an entry per page of the umem, which its
        // mutex, held, keeps from changing.
        pages.into_iter().all(|i| unsafe {
            let entry = *(*self.odp.as_ptr()).dma_list.add(i);
            entry & want == want
        })
    }

    /// The `len` bytes at `offset`, mapped (for writing if `write`) and held
    /// there until the view is dropped: pages missing are faulted in.
    /// `EFAULT` outside the umem, or where the process has no such memory.
    pub(super) fn lock(&self, offset: usize, len: usize, write: bool) -> Result<Locked<'_>> {
        let end = offset.checked_add(len).ok_or(EFAULT)?;
        if end > self.len || (write && !self.writable) {
            return Err(EFAULT);
        }
        let first_page = (self.first + offset) / PAGE_SIZE;
        let pages = if len == 0 {
            first_page..first_page
        } else {
            first_page..(self.first + end).div_ceil(PAGE_SIZE)
        };
        // SAFETY: `odp` is valid.
        unsafe { bindings::rroce_umem_odp_lock(self.odp.as_ptr()) };
        // The fast path: every page is there already.
        let held = self.held(offset, len);
        // SAFETY: Held; the pages are within the umem.
        if unsafe { self.mapped(pages.clone(), write) } {
            return Ok(held);
        }
        drop(held);
        // A writable umem's pages are mapped writable even for reading, as
        // mlx5 and rxe do: mapping them for reading would take away the
        // write right of pages written before, and with it the dirtying of
        // them when they are unmapped.
        self.map_and_lock(offset, len, self.writable, true)?;
        let held = self.held(offset, len);
        // SAFETY: As above: `map_and_lock` left the mutex held.
        if unsafe { self.mapped(pages, write) } {
            Ok(held)
        } else {
            Err(EFAULT)
        }
    }

    /// The view of the `len` bytes at `offset`, which unlocks the mutex when
    /// dropped.
    ///
    /// The caller holds the mutex and, before any page of the view is used,
    /// checks that its pages are mapped.
    fn held(&self, offset: usize, len: usize) -> Locked<'_> {
        // INVARIANT: The mutex is held, by the caller; the pages are checked
        // by it before use.
        Locked {
            umem: self,
            first_page: (self.first + offset) / PAGE_SIZE,
            first: (self.first + offset) % PAGE_SIZE,
            len,
            _not_send: PhantomData,
        }
    }

    /// Maps the `len` bytes at `offset` (for writing if `write`), faulting
    /// them in if `fault`; on success the umem's mutex is held.
    fn map_and_lock(&self, offset: usize, len: usize, write: bool, fault: bool) -> Result {
        // SAFETY: `odp` is valid; the range is inside it, which the call
        // checks again. It faults without the mutex and returns with it
        // held on success only.
        let mapped = unsafe {
            bindings::rroce_umem_odp_map_and_lock(
                self.odp.as_ptr(),
                self.address(offset),
                len as u64,
                write,
                fault,
            )
        };
        to_result(mapped.min(0))
    }

    /// Maps the `len` bytes at `offset` ahead of use (for writing if
    /// `write`); without `fault`, only the pages already in memory.
    pub(super) fn prefetch(&self, offset: usize, len: usize, write: bool, fault: bool) -> Result {
        let end = offset.checked_add(len).ok_or(EFAULT)?;
        if end > self.len || (write && !self.writable) {
            return Err(EFAULT);
        }
        if fault {
            // Nothing to do where every page is there already.
            return self.lock(offset, len, write).map(drop);
        }
        if len == 0 {
            return Ok(());
        }
        // Only what is resident: each page with the rights its mapping has.
        self.map_and_lock(offset, len, false, false)?;
        // SAFETY: `map_and_lock` left the mutex held, by this thread.
        unsafe { bindings::rroce_umem_odp_unlock(self.odp.as_ptr()) };
        Ok(())
    }
}

impl Drop for OdpUmem {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this is the one release; it unmaps
        // every page and removes the notifier, waiting out a running
        // invalidation.
        unsafe { bindings::rroce_umem_odp_release(self.odp.as_ptr()) };
    }
}

/// Bytes of an [`OdpUmem`] mapped and held: the umem's mutex is held, so
/// no invalidation can take their pages until the view is dropped.
///
/// # Invariants
///
/// The umem's mutex is held by this thread; pages `first_page..` of the
/// umem, holding `len` bytes from offset `first` of the first, are mapped.
pub(super) struct Locked<'a> {
    umem: &'a OdpUmem,
    first_page: usize,
    first: usize,
    len: usize,
    /// A mutex is unlocked by the task that locked it: not `Send`.
    _not_send: PhantomData<*mut ()>,
}

// SAFETY: By the invariant: `first` < PAGE_SIZE, and the pages are mapped
// and stay so while the mutex is held, that is while `self` lives.
unsafe impl PageRun for Locked<'_> {
    fn first(&self) -> usize {
        self.first
    }

    fn len(&self) -> usize {
        self.len
    }

    fn page(&self, index: usize) -> PagePtr {
        // SAFETY: A mapped page of the umem, by the invariant, whose
        // `dma_list` entry the held mutex keeps from changing (`pfn_list`,
        // which a concurrent fault writes without it, is not read). The
        // device's DMA is virtual: the address is the page's, in the direct
        // map, so its `struct page` is not null.
        PagePtr::new(unsafe {
            let dma = *(*self.umem.odp.as_ptr())
                .dma_list
                .add(self.first_page + index);
            NonNull::new_unchecked(bindings::rroce_virt_dma_to_page(dma & !DMA_ALLOWED_MASK))
        })
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        // SAFETY: Held by this thread, by the invariant.
        unsafe { bindings::rroce_umem_odp_unlock(self.umem.odp.as_ptr()) };
    }
}

/// The MMU notifier's `invalidate`: the kernel is taking pages of the range
/// away; they are unmapped under the umem's mutex, after any copy using them.
///
/// # Safety
///
/// Called by the MMU notifier core for the notifier of a live on-demand
/// umem registered with [`INVALIDATE_OPS`].
unsafe extern "C" fn invalidate(
    mni: *mut bindings::mmu_interval_notifier,
    range: *const bindings::mmu_notifier_range,
    cur_seq: ffi::c_ulong,
) -> bool {
    // SAFETY: `range` is valid for the call.
    if !unsafe { bindings::rroce_mmu_notifier_range_blockable(range) } {
        // The OOM reaper, which cannot wait for the mutex: it retries.
        return false;
    }
    // SAFETY: `mni` is the `notifier` field of an `ib_umem_odp`.
    let odp = unsafe { kernel::container_of!(mni, bindings::ib_umem_odp, notifier) }.cast_mut();
    // SAFETY: The umem is alive while its notifier is registered; the
    // sequence is set and the pages unmapped under its mutex, as the notifier
    // core and `ib_umem_odp_unmap_dma_pages` require. The unmap clamps the
    // range to the umem.
    unsafe {
        bindings::rroce_umem_odp_lock(odp);
        bindings::rroce_mmu_interval_set_seq(mni, cur_seq);
        bindings::rroce_umem_odp_unmap(odp, (*range).start as u64, (*range).end as u64);
        bindings::rroce_umem_odp_unlock(odp);
    }
    true
}
