// SPDX-License-Identifier: GPL-2.0

//! Keys as the device's tables read them: an MR's or memory window's index
//! in the top bits, and low bits that must match the object's key now.
//!
//! ib_core, the rings and the wire carry keys as numbers; the driver takes
//! them as [`Lkey`]s (what work requests' SGEs name) or [`Rkey`]s (what
//! peers' requests and invalidations name) as soon as it reads them, and
//! turns either into a [`Key`] only to look it up.

use crate::kernel_ext::rdma::{Lkey, Rkey};

/// The bits of a key below its index: 20 bits of index, and 12 random
/// bits (the C rxe has 8) that a stale or guessed key must match.
const INDEX_SHIFT: u32 = 12;

/// The low bits of a key that its consumer chooses
/// (`ib_update_fast_reg_key`, a window bind's new rkey).
const CONSUMER_BITS: u32 = 0xff;

/// An MR's or memory window's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key(u32);

impl Key {
    /// The key with `index` in its top bits and `low` below.
    pub(crate) const fn new(index: u32, low: u32) -> Self {
        Self((index << INDEX_SHIFT) | (low & ((1 << INDEX_SHIFT) - 1)))
    }

    /// The index of the MR or window it names.
    pub(crate) const fn index(self) -> u32 {
        self.0 >> INDEX_SHIFT
    }

    /// Whether `other` is this key but for the consumer's bits.
    pub(crate) const fn same_but_consumer_bits(self, other: Key) -> bool {
        self.0 & !CONSUMER_BITS == other.0 & !CONSUMER_BITS
    }

    /// This key with the consumer's bits of `from`.
    pub(crate) const fn with_consumer_bits(self, from: Key) -> Self {
        Self(self.0 & !CONSUMER_BITS | from.0 & CONSUMER_BITS)
    }

    /// The key as work requests name it.
    pub(crate) const fn lkey(self) -> Lkey {
        Lkey::new(self.0)
    }

    /// The key as peers name it.
    pub(crate) const fn rkey(self) -> Rkey {
        Rkey::new(self.0)
    }
}

impl From<Lkey> for Key {
    fn from(k: Lkey) -> Self {
        Self(k.get())
    }
}

impl From<Rkey> for Key {
    fn from(k: Rkey) -> Self {
        Self(k.get())
    }
}
