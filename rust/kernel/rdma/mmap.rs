// SPDX-License-Identifier: GPL-2.0

//! Memory shared with userspace through `mmap` of the uverbs file: the
//! queue rings of the rxe user ABI.
//!
//! Buffers come from `vmalloc_user` and are offered to one user context
//! through ib_core's `rdma_user_mmap_entry` bookkeeping, which hands out the
//! mmap offsets, finds the entry again on `mmap`, and tells us when the last
//! reference is gone (`mmap_free`). The mapped pages hold references of
//! their own, so a buffer freed while still mapped stays valid memory for
//! the process until it unmaps it.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::UserContext;
use crate::bindings;
use core::{
    ptr::{addr_of_mut, NonNull},
    sync::atomic::{AtomicBool, AtomicU32, Ordering},
};
use kernel::{
    ffi,
    page::{PAGE_SHIFT, PAGE_SIZE},
    prelude::*,
    sync::Arc,
    types::Opaque,
};

/// Zeroed memory that userspace may map and change at any time.
///
/// # Invariants
///
/// `ptr` points to `size` bytes from `vmalloc_user`, a multiple of the page
/// size, owned by this object.
pub(crate) struct SharedMem {
    ptr: NonNull<u8>,
    size: usize,
}

// SAFETY: The memory is plain pages; every access is an atomic one.
unsafe impl Send for SharedMem {}
// SAFETY: As above.
unsafe impl Sync for SharedMem {}

impl SharedMem {
    /// At least `size` bytes, rounded up to whole pages.
    pub(crate) fn new(size: usize) -> Result<Self> {
        let size = size.checked_next_multiple_of(PAGE_SIZE).ok_or(EINVAL)?;
        if size == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Any size may be asked for; failure is a null pointer.
        let ptr = NonNull::new(unsafe { bindings::rroce_vmalloc_user(size as _) }.cast())
            .ok_or(ENOMEM)?;
        // INVARIANT: Allocated just above, `size` bytes.
        Ok(Self { ptr, size })
    }

    /// The size in bytes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The aligned 32-bit word at `offset`, if it lies inside.
    fn word(&self, offset: usize) -> Option<&AtomicU32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.size {
            return None;
        }
        // SAFETY: In bounds and aligned (vmalloc memory is page aligned);
        // userspace's concurrent changes are why this is an atomic.
        Some(unsafe { AtomicU32::from_ptr(self.ptr.as_ptr().add(offset).cast()) })
    }

    /// Loads the word at `offset` with acquire ordering, so that every store
    /// userspace made before its release store is visible. `EINVAL` outside.
    pub(crate) fn load_u32(&self, offset: usize) -> Result<u32> {
        Ok(self.word(offset).ok_or(EINVAL)?.load(Ordering::Acquire))
    }

    /// The range `offset..offset + len`, if it lies inside.
    fn range(&self, offset: usize, len: usize) -> Result<*mut u8> {
        if offset.checked_add(len).ok_or(EINVAL)? > self.size {
            return Err(EINVAL);
        }
        // SAFETY: In bounds, by the check above.
        Ok(unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// Copies bytes at `offset` out into `buf`: a snapshot, which userspace
    /// cannot change afterwards. `EINVAL` outside.
    pub(crate) fn read(&self, offset: usize, buf: &mut [u8]) -> Result {
        let src = self.range(offset, buf.len())?;
        // SAFETY: In bounds; userspace may write concurrently, which, as
        // with the kernel's `memcpy` from shared memory, can only make the
        // snapshot's bytes arbitrary, and every byte value is valid in `buf`.
        unsafe { core::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Copies `bytes` in at `offset`. `EINVAL` outside.
    pub(crate) fn write(&self, offset: usize, bytes: &[u8]) -> Result {
        let dst = self.range(offset, bytes.len())?;
        // SAFETY: In bounds; `bytes` is kernel memory, which cannot overlap
        // this vmalloc area. Concurrent userspace reads see old or new bytes.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        Ok(())
    }

    /// Replaces the word at `offset` by `new` if it is `old` (acquire and
    /// release); whether it did. `EINVAL` outside.
    pub(crate) fn compare_exchange_u32(&self, offset: usize, old: u32, new: u32) -> Result<bool> {
        Ok(self
            .word(offset)
            .ok_or(EINVAL)?
            .compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok())
    }

    /// Stores `value` at `offset` with release ordering, so that userspace,
    /// reading it with acquire, sees every earlier store. `EINVAL` outside.
    pub(crate) fn store_u32(&self, offset: usize, value: u32) -> Result {
        self.word(offset)
            .ok_or(EINVAL)?
            .store(value, Ordering::Release);
        Ok(())
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own this `vmalloc_user` memory.
        unsafe { bindings::vfree(self.ptr.as_ptr().cast()) };
    }
}

/// What ib_core keeps for one mapping, with the memory it maps.
#[repr(C)]
struct Entry {
    rdma: Opaque<bindings::rdma_user_mmap_entry>,
    mem: Arc<SharedMem>,
}

/// A [`SharedMem`] that one user context may map; withdrawn on drop.
///
/// # Invariants
///
/// `entry` was inserted into its context with `rdma_user_mmap_entry_insert`
/// and, until `withdrawn` is set, not yet removed; ib_core frees it through
/// [`mmap_free`].
pub(crate) struct UserMapping {
    entry: NonNull<Entry>,
    offset: u64,
    size: u32,
    withdrawn: AtomicBool,
}

// SAFETY: Removal may happen on any thread.
unsafe impl Send for UserMapping {}
// SAFETY: The shared methods read plain fields, and `withdraw` removes the
// entry once, whoever calls it.
unsafe impl Sync for UserMapping {}

impl UserMapping {
    /// Offers `mem` to `uctx`'s mmap.
    pub(crate) fn new(uctx: &UserContext, mem: Arc<SharedMem>) -> Result<Self> {
        let size = mem.size();
        let size32 = u32::try_from(size).map_err(|_| EINVAL)?;
        let entry = KBox::into_raw(KBox::new(
            Entry {
                rdma: Opaque::uninit(),
                mem,
            },
            GFP_KERNEL,
        )?);
        // SAFETY: `entry` is a fresh allocation; the core initialises the
        // `rdma` part, which must start zeroed.
        let err = unsafe {
            let rdma = Opaque::raw_get(addr_of_mut!((*entry).rdma));
            rdma.write(Default::default());
            bindings::rdma_user_mmap_entry_insert(uctx.as_raw(), rdma, size)
        };
        if err != 0 {
            // SAFETY: Not inserted, so still ours alone.
            drop(unsafe { KBox::from_raw(entry) });
            return Err(Error::from_errno(err));
        }
        // SAFETY: Inserted: `start_pgoff` is set and the entry is alive
        // until we remove it.
        // `usize` to `u64` loses nothing on any Linux architecture.
        let offset = (unsafe { (*(*entry).rdma.get()).start_pgoff } as u64) << PAGE_SHIFT;
        Ok(Self {
            // SAFETY: `KBox::into_raw` never returns null.
            entry: unsafe { NonNull::new_unchecked(entry) },
            offset,
            size: size32,
            withdrawn: AtomicBool::new(false),
        })
    }

    /// The `mmap` offset userspace uses for this mapping.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The length userspace maps.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// Takes the mapping out of its user context now, as the object that
    /// owns it is destroyed: ib_core frees the context right after, and
    /// the memory may outlive it in a work item that still holds it.
    pub(crate) fn withdraw(&self) {
        if self.withdrawn.swap(true, Ordering::AcqRel) {
            return;
        }
        // SAFETY: By the type invariant the entry is inserted, and the swap
        // makes this the only removal; after it we never touch the entry.
        unsafe {
            bindings::rdma_user_mmap_entry_remove(Opaque::raw_get(addr_of_mut!(
                (*self.entry.as_ptr()).rdma
            )))
        };
    }
}

impl Drop for UserMapping {
    fn drop(&mut self) {
        self.withdraw();
    }
}

/// `ib_device_ops.mmap`: maps the buffer of the entry at the vma's offset.
///
/// # Safety
///
/// Called by uverbs with a valid context and vma.
pub(super) unsafe extern "C" fn mmap(
    uctx: *mut bindings::ib_ucontext,
    vma: *mut bindings::vm_area_struct,
) -> ffi::c_int {
    // SAFETY: The core checks the offset and that the vma's size is the
    // entry's, and returns the entry with a reference, or null.
    let rdma = unsafe { bindings::rdma_user_mmap_entry_get(uctx, vma) };
    if rdma.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: All our entries are `Entry`s, with `rdma` first (`repr(C)`),
    // kept alive by the reference taken above.
    let err = unsafe {
        let entry = &*rdma.cast::<Entry>();
        bindings::remap_vmalloc_range(vma, entry.mem.ptr.as_ptr().cast(), 0)
    };
    // SAFETY: Returns the reference taken above.
    unsafe { bindings::rdma_user_mmap_entry_put(rdma) };
    err
}

/// `ib_device_ops.mmap_free`: the last reference to an entry is gone.
///
/// # Safety
///
/// Called by ib_core once per entry, after which it never uses it again.
pub(super) unsafe extern "C" fn mmap_free(rdma: *mut bindings::rdma_user_mmap_entry) {
    // SAFETY: Our entries come from `KBox::into_raw` in `UserMapping::new`.
    drop(unsafe { KBox::from_raw(rdma.cast::<Entry>()) });
}
