// SPDX-License-Identifier: GPL-2.0

//! A list that keeps a few items in place and more in a vector.
//!
//! Nearly every work request names one or two pieces of memory. Vectors
//! for them, taken and freed for each message, were 184 of the 1 257
//! kernel samples of rroce's 64-byte SENDs.

use core::mem::MaybeUninit;
use kernel::alloc::Flags;
use kernel::prelude::*;

/// Items in order: up to `N` in the value, more in a vector, sized once by
/// [`Few::with_capacity`].
pub(crate) struct Few<T, const N: usize>(Store<T, N>);

/// # Invariants
///
/// In `Inline`, `len <= N` and the first `len` of `items` are initialised.
enum Store<T, const N: usize> {
    Inline {
        items: [MaybeUninit<T>; N],
        len: usize,
    },
    Heap(KVec<T>),
}

impl<T, const N: usize> Few<T, N> {
    /// An empty list with room for `N` items.
    pub(crate) const fn new() -> Self {
        // INVARIANT: No item is initialised.
        Self(Store::Inline {
            items: [const { MaybeUninit::uninit() }; N],
            len: 0,
        })
    }

    /// An empty list with room for `n` items: in place if `n <= N`.
    pub(crate) fn with_capacity(n: usize, flags: Flags) -> Result<Self> {
        Ok(if n <= N {
            Self::new()
        } else {
            Self(Store::Heap(KVec::with_capacity(n, flags)?))
        })
    }

    /// Appends `item`; `EINVAL` past the room kept in place.
    pub(crate) fn push(&mut self, item: T, flags: Flags) -> Result {
        match &mut self.0 {
            Store::Inline { items, len } => {
                items.get_mut(*len).ok_or(EINVAL)?.write(item);
                // INVARIANT: Item `len` was just initialised, and it was
                // below `N`.
                *len += 1;
            }
            Store::Heap(v) => v.push(item, flags)?,
        }
        Ok(())
    }
}

impl<T, const N: usize> core::ops::Deref for Few<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.0 {
            Store::Inline { items, len } => {
                // SAFETY: By the invariant the first `len <= N` items are
                // initialised, and `MaybeUninit<T>` has the layout of `T`.
                unsafe { core::slice::from_raw_parts(items.as_ptr().cast::<T>(), *len) }
            }
            Store::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> Drop for Few<T, N> {
    fn drop(&mut self) {
        if let Store::Inline { items, len } = &mut self.0 {
            let live = core::ptr::slice_from_raw_parts_mut(items.as_mut_ptr().cast::<T>(), *len);
            // SAFETY: By the invariant these items are initialised; nothing
            // reads them after this.
            unsafe { core::ptr::drop_in_place(live) };
        }
    }
}
