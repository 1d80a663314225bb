// SPDX-License-Identifier: GPL-2.0

//! Allocation of small object numbers (MR key indices, QP numbers): a
//! bitmap, so a number is never given to two live objects.

use kernel::{
    new_mutex,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{Arc, Mutex},
};

const WORD_BITS: u32 = 64;

/// Numbers `first..=last`, each taken or free.
#[pin_data]
pub(crate) struct IndexTable {
    #[pin]
    used: Mutex<KVec<u64>>,
    first: u32,
    last: u32,
}

impl IndexTable {
    /// All of `first..=last` free; `last` must be below 2^24.
    pub(crate) fn new(first: u32, last: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            used <- new_mutex!(KVec::from_elem(
                0u64,
                (last / WORD_BITS + 1) as usize,
                GFP_KERNEL
            )?),
            first,
            last,
        })
    }

    /// A free number, now taken; `ENOMEM` when none is left.
    pub(crate) fn alloc(&self) -> Result<u32> {
        let mut used = self.used.lock();
        let start = (self.first / WORD_BITS) as usize;
        for (word, bits) in (start..).zip(used.iter_mut().skip(start)) {
            let mut free = !*bits;
            if word == start {
                // Numbers below `first` in the first word are never given.
                free &= u64::MAX << (self.first % WORD_BITS);
            }
            let index = word as u32 * WORD_BITS + free.trailing_zeros();
            if free != 0 && index <= self.last {
                *bits |= 1 << free.trailing_zeros();
                return Ok(index);
            }
        }
        Err(ENOMEM)
    }

    /// Gives `index` back.
    pub(crate) fn free(&self, index: u32) {
        if let Some(bits) = self.used.lock().get_mut((index / WORD_BITS) as usize) {
            *bits &= !(1 << (index % WORD_BITS));
        }
    }
}

/// Live objects by number, where the data path finds them; the map holds a
/// reference, so a lookup never sees a freed object.
#[pin_data]
pub(crate) struct ObjectMap<V: Send + Sync> {
    #[pin]
    map: Mutex<RBTree<u32, Arc<V>>>,
}

impl<V: Send + Sync> ObjectMap<V> {
    /// An empty map.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            map <- new_mutex!(RBTree::new()),
        })
    }

    /// Adds `value` as number `n`, which is not in use.
    pub(crate) fn insert(&self, n: u32, value: Arc<V>) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(n, value);
        self.map.lock().insert(node);
        Ok(())
    }

    /// The object numbered `n`.
    pub(crate) fn get(&self, n: u32) -> Option<Arc<V>> {
        self.map.lock().get(&n).cloned()
    }

    /// Takes number `n` out of the map.
    pub(crate) fn remove(&self, n: u32) -> Option<Arc<V>> {
        self.map.lock().remove(&n)
    }

    /// Calls `f` on every object, under the map's lock: `f` must not take a
    /// lock that is held while looking an object up.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&V)) {
        for v in self.map.lock().values() {
            f(v);
        }
    }

    /// Every object, at one moment.
    pub(crate) fn snapshot(&self) -> Result<KVec<Arc<V>>> {
        let map = self.map.lock();
        let mut all = KVec::new();
        for v in map.values() {
            all.push(v.clone(), GFP_ATOMIC)?;
        }
        Ok(all)
    }
}
