// SPDX-License-Identifier: GPL-2.0

//! A list that holds one item without an allocation. Most work requests
//! have one SGE: a vector for it, copied from the ring and then resolved
//! to its MR, cost two allocations a request, on the path of every
//! message.

use kernel::alloc::AllocError;
use kernel::prelude::*;

/// Items in order: none or one in place, more in a vector.
pub(crate) enum Few<T> {
    Empty,
    One(T),
    Many(KVec<T>),
}

impl<T> Few<T> {
    /// An empty list with room for `n` items.
    pub(crate) fn with_capacity(n: usize) -> Result<Self, AllocError> {
        Ok(if n <= 1 {
            Self::Empty
        } else {
            Self::Many(KVec::with_capacity(n, GFP_KERNEL)?)
        })
    }

    /// Appends `item`.
    pub(crate) fn push(&mut self, item: T) -> Result<(), AllocError> {
        match self {
            Self::Empty => *self = Self::One(item),
            Self::Many(v) => v.push(item, GFP_KERNEL)?,
            Self::One(_) => {
                let mut v = KVec::with_capacity(2, GFP_KERNEL)?;
                // Within the capacity just taken: these allocate nothing.
                if let Self::One(first) = core::mem::replace(self, Self::Empty) {
                    v.push(first, GFP_KERNEL)?;
                }
                v.push(item, GFP_KERNEL)?;
                *self = Self::Many(v);
            }
        }
        Ok(())
    }
}

impl<T> core::ops::Deref for Few<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Self::Empty => &[],
            Self::One(item) => core::slice::from_ref(item),
            Self::Many(v) => v,
        }
    }
}
