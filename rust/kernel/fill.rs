// SPDX-License-Identifier: GPL-2.0

//! A buffer written front to back, whose unwritten bytes cannot be read:
//! what lets a packet be built in a fresh skb without zeroing it first,
//! and take its CRC as it is copied in.

use super::crc32::Crc32;
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
    sum: Option<Sum<'a>>,
}

/// A CRC-32 carried over the bytes appended, from [`Fill::sum`] on.
struct Sum<'a> {
    crc: &'a Crc32,
    state: u32,
    /// What the CRC takes before the next bytes appended.
    head: &'a [u8],
}

impl<'a> Fill<'a> {
    /// Nothing written yet into `buf`.
    pub(crate) fn new(buf: &'a mut [MaybeUninit<u8>]) -> Self {
        // INVARIANT: No byte is claimed to be initialised.
        Self {
            buf,
            done: 0,
            sum: None,
        }
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

    /// Appends `n` bytes by `write`, which gets a `Fill` of its own for
    /// them and must fill it: `EFAULT` if they do not fit or it leaves some
    /// unwritten. That `Fill` lasts only this call, so it can take a
    /// [`Fill::sum`] over data that does not outlive `self`'s buffer; a sum
    /// of `self`'s does not take the part's bytes.
    pub(crate) fn part<'p, T, E: From<Error>>(
        &'p mut self,
        n: usize,
        write: impl FnOnce(&mut Fill<'p>) -> Result<T, E>,
    ) -> Result<T, E> {
        if n > self.remaining() {
            return Err(EFAULT.into());
        }
        let Fill { buf, done, .. } = self;
        let mut part = Fill::new(&mut buf[*done..*done + n]);
        let out = write(&mut part)?;
        if !part.is_full() {
            return Err(EFAULT.into());
        }
        // INVARIANT: `part` wrote all `n` bytes after `done`.
        *done += n;
        Ok(out)
    }

    /// Carries a CRC-32 by `crc` over what is appended from now on: from
    /// state 0 over `head` first (whole 64-byte blocks, for
    /// [`Crc32::copy`]), and then over each byte as it is copied in.
    pub(crate) fn sum(&mut self, crc: &'a Crc32, head: &'a [u8]) {
        self.sum = Some(Sum {
            crc,
            state: 0,
            head,
        });
    }

    /// The CRC that [`Fill::sum`] started, which stops there.
    pub(crate) fn take_sum(&mut self) -> Option<u32> {
        let sum = self.sum.take()?;
        if sum.head.is_empty() {
            return Some(sum.state);
        }
        Some(sum.crc.update(sum.state, sum.head))
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
        // SAFETY: `done + n <= buf.len()`.
        let dst = unsafe { self.buf.as_mut_ptr().add(self.done).cast() };
        match &mut self.sum {
            // SAFETY: `dst` has room for `n` bytes, which the caller
            // guarantees of `src`.
            None => unsafe { core::ptr::copy_nonoverlapping(src, dst, n) },
            Some(sum) => {
                let head = core::mem::take(&mut sum.head);
                // SAFETY: As above.
                sum.state = unsafe { sum.crc.copy(sum.state, head, dst, src, n) };
            }
        }
        // INVARIANT: The `n` bytes after `done` were just written.
        self.done += n;
        Ok(())
    }
}
