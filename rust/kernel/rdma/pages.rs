// SPDX-License-Identifier: GPL-2.0

//! Memory as the data path copies it: pages in order, each mapped for a
//! moment to copy to or from it, or to run an atomic on it.

use crate::bindings;
use crate::kernel_ext::fill::Fill;
use core::ptr::NonNull;
use kernel::{page::PAGE_SIZE, prelude::*};

/// An IB atomic operation on 8 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AtomicOp {
    /// Store `swap` if the value equals `compare`.
    CompareSwap { compare: u64, swap: u64 },
    /// Add `add`.
    FetchAdd { add: u64 },
    /// Store `value` at once, after every earlier store (a release store:
    /// IBTA's ATOMIC WRITE).
    StoreRelease { value: u64 },
}

/// Pages in order, holding `len` bytes from offset `first` in the first,
/// which any byte is found in one step: pinned user memory, or the kernel
/// memory of a fast-registration MR.
///
/// # Invariants
///
/// `first` < `PAGE_SIZE`, and `first + len` bytes fit in `pages`; each page
/// is valid while its owner (a pinned umem, or the verbs contract of a
/// fast-registration MR) says so.
pub(super) struct Pages {
    pub(super) pages: KVec<PagePtr>,
    pub(super) first: usize,
    pub(super) len: usize,
}

/// A page of user or kernel memory.
#[derive(Clone, Copy)]
pub(super) struct PagePtr(NonNull<bindings::page>);

impl PagePtr {
    /// The page at `page`.
    pub(super) fn new(page: NonNull<bindings::page>) -> Self {
        Self(page)
    }

    /// Runs `f` with the page mapped at a kernel address, for this thread
    /// only (`kmap_local_page`).
    ///
    /// # Safety
    ///
    /// The page is valid for the call.
    unsafe fn with_mapped<R>(self, f: impl FnOnce(*mut u8) -> R) -> R {
        // SAFETY: Guaranteed by the caller.
        let va = unsafe { bindings::rroce_kmap_local_page(self.0.as_ptr()) };
        let r = f(va.cast());
        // SAFETY: Mapped just above, on this thread, and not used again.
        unsafe { bindings::rroce_kunmap_local(va) };
        r
    }
}

impl Pages {
    /// No pages, keeping the room for them.
    pub(super) fn clear(&mut self) {
        // SAFETY: Shrinking to nothing; `PagePtr` has nothing to drop.
        unsafe { self.pages.set_len(0) };
        // INVARIANT: No bytes in no pages.
        self.first = 0;
        self.len = 0;
    }
}

// SAFETY: By the invariant of `Pages`.
unsafe impl PageRun for Pages {
    fn first(&self) -> usize {
        self.first
    }

    fn len(&self) -> usize {
        self.len
    }

    fn page(&self, index: usize) -> PagePtr {
        self.pages[index]
    }
}

/// Bytes laid out over pages in order: `len()` bytes from offset `first()`
/// in the first page. The copies and atomics of every kind of memory.
///
/// # Safety
///
/// Implementers guarantee that `first()` < `PAGE_SIZE` and that `page(i)`
/// is a valid page for each `i` < `(first() + len()).div_ceil(PAGE_SIZE)`,
/// while `self` is borrowed.
pub(super) unsafe trait PageRun {
    /// The offset of the first byte in the first page.
    fn first(&self) -> usize;

    /// The number of bytes.
    fn len(&self) -> usize;

    /// The page `index` of the run.
    fn page(&self, index: usize) -> PagePtr;

    /// Calls `f` with each page piece of `offset..offset + len`: the page,
    /// the offset in it, and the piece's offset from `offset` and length.
    fn pieces(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(PagePtr, usize, usize, usize),
    ) -> Result {
        if offset.checked_add(len).ok_or(EFAULT)? > self.len() {
            return Err(EFAULT);
        }
        let mut done = 0;
        while done < len {
            let pos = self.first() + offset + done;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done);
            // In the run: `pos` < `first + len`.
            f(self.page(pos / PAGE_SIZE), in_page, done, n);
            done += n;
        }
        Ok(())
    }

    /// Copies `src` into the run at `offset`; `EFAULT` past its end.
    fn write(&self, offset: usize, src: &[u8]) -> Result {
        self.pieces(offset, src.len(), |page, in_page, at, n| {
            // SAFETY: A valid page, by the trait's contract; `in_page + n`
            // <= PAGE_SIZE and `at + n` <= `src.len()`. The page is user or
            // DMA memory, which no Rust reference covers.
            unsafe {
                page.with_mapped(|va| {
                    core::ptr::copy_nonoverlapping(src.as_ptr().add(at), va.add(in_page), n)
                })
            }
        })
    }

    /// Appends `len` bytes of the run at `offset` to `dst`; `EFAULT` past
    /// the end of either.
    fn read(&self, offset: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        if len > dst.remaining() {
            return Err(EFAULT);
        }
        let mut res = Ok(());
        self.pieces(offset, len, |page, in_page, _, n| {
            // SAFETY: A valid page, by the trait's contract, and `in_page +
            // n` <= PAGE_SIZE: its `n` bytes are readable while mapped, and
            // are user or DMA memory, which `dst` does not overlap.
            let r = unsafe { page.with_mapped(|va| dst.put_raw(va.add(in_page), n)) };
            res = res.and(r);
        })?;
        res
    }

    /// Runs `op` on the 8 bytes at `offset`, which must be 8-byte aligned
    /// in the address space (`EINVAL`) and inside (`EFAULT`); returns the
    /// original value (for a store, the value stored).
    fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        if (self.first() + offset) % 8 != 0 {
            return Err(EINVAL);
        }
        let mut orig = 0;
        self.pieces(offset, 8, |page, in_page, _, _| {
            // SAFETY: A valid page, by the trait's contract; aligned, so the
            // 8 bytes lie in this one page. The kernel's atomics, not Rust's:
            // peers and the CPU's other users of the memory follow the LKMM.
            orig = unsafe {
                page.with_mapped(|va| {
                    let word = va.add(in_page).cast::<u64>();
                    match op {
                        AtomicOp::CompareSwap { compare, swap } => {
                            bindings::rroce_cmpxchg64(word, compare, swap)
                        }
                        AtomicOp::FetchAdd { add } => bindings::rroce_fetch_add64(word, add),
                        AtomicOp::StoreRelease { value } => {
                            bindings::rroce_store_release64(word, value);
                            value
                        }
                    }
                })
            };
        })?;
        Ok(orig)
    }
}
