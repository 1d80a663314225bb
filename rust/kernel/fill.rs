// SPDX-License-Identifier: GPL-2.0

//! A buffer written front to back, whose unwritten bytes cannot be read:
//! what lets a packet be built in a fresh skb without zeroing it first.

use core::mem::MaybeUninit;
use kernel::prelude::*;

/// Bytes being written in order, from the first.
///
/// # Invariants
///
/// `buf[..done]` is initialised, and `done <= buf.len()`.
pub(crate) struct Fill<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    done: usize,
}

impl<'a> Fill<'a> {
    /// Nothing written yet into `buf`.
    pub(crate) fn new(buf: &'a mut [MaybeUninit<u8>]) -> Self {
        // INVARIANT: No byte is claimed to be initialised.
        Self { buf, done: 0 }
    }

    /// Overwrites `buf`, which is initialised already.
    pub(crate) fn over(buf: &'a mut [u8]) -> Self {
        let len = buf.len();
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`; a `Fill` only
        // ever writes initialised bytes, so `buf` stays initialised.
        let buf = unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast(), len) };
        Self::new(buf)
    }

    /// How many bytes are left to write.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.done
    }

    /// Whether every byte has been written.
    pub(crate) fn is_full(&self) -> bool {
        self.remaining() == 0
    }

    /// Appends `src`; `EFAULT` if it does not fit.
    #[inline]
    pub(crate) fn put(&mut self, src: &[u8]) -> Result {
        // SAFETY: `src` is a valid slice, not inside `buf`, which `&mut`
        // keeps apart.
        unsafe { self.put_raw(src.as_ptr(), src.len()) }
    }

    /// Appends `n` bytes copied from `src`; `EFAULT` if they do not fit.
    ///
    /// # Safety
    ///
    /// `src` is valid for reading `n` bytes, which do not overlap the
    /// buffer. Another CPU or a device may write them meanwhile (user or
    /// DMA memory): the copy then holds some mix of the old and new bytes.
    #[inline]
    pub(crate) unsafe fn put_raw(&mut self, src: *const u8, n: usize) -> Result {
        if n > self.remaining() {
            return Err(EFAULT);
        }
        // SAFETY: `done + n <= buf.len()`; the caller guarantees `src`.
        unsafe {
            core::ptr::copy_nonoverlapping(src, self.buf.as_mut_ptr().add(self.done).cast(), n)
        };
        // INVARIANT: The `n` bytes after `done` were just written.
        self.done += n;
        Ok(())
    }
}
