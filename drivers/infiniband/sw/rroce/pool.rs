// SPDX-License-Identifier: GPL-2.0

//! Object numbers and the objects they name.
//!
//! A [`Pool`] is what a device keeps of one kind of object (QPs, MRs, MWs,
//! AHs): numbers from a fixed range, given out by the kernel's ID allocator
//! so that no number names two live objects, and the live objects by number,
//! where the data path finds them. Both take memory only for the numbers in
//! use, so a range may be as large as the wire allows.
//!
//! Numbers are given out in turn, as the C rxe's (`xa_alloc_cyclic`), not
//! lowest first: a number given back is taken again only once the rest of
//! the range has been. A QP's number names it on the wire and to the peer's
//! connection manager, which refuses a new connection from a QP number it
//! still holds a connection of (a stale connection, `ECONNREFUSED`), and a
//! late packet of the old QP should not find a new one.

use crate::kernel_ext::ida::Ida;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_spinlock,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{Arc, SpinLock},
};

/// A protection domain's number, which the MRs, memory windows, AHs and QPs
/// created in it carry: an object may only use another of the same PD.
/// 64 bits, so that a process allocating PDs for ever never reaches
/// another's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PdNum(u64);

impl PdNum {
    /// PD number `n`.
    pub(crate) const fn new(n: u64) -> Self {
        Self(n)
    }

    /// The number, to store where a PD may change (an MR's).
    pub(crate) const fn get(self) -> u64 {
        self.0
    }
}

/// Numbers `first..=last`, each taken or free.
#[pin_data]
struct Numbers {
    #[pin]
    taken: Ida,
    first: u32,
    last: u32,
    /// Where the search for the next number starts: past the last taken.
    next: AtomicU32,
}

impl Numbers {
    /// All of `first..=last` free.
    fn new(first: u32, last: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            taken <- Ida::new(),
            next: AtomicU32::new(first),
            first,
            last,
        })
    }

    /// The first free number from where the last search ended, or failing
    /// that from `first`, now taken; `ENOMEM` when none is left. Two
    /// searches at once may start from one place: the IDA still gives each
    /// its own number.
    fn alloc(&self) -> Result<u32> {
        let from = match self.next.load(Ordering::Relaxed) {
            n if (self.first..=self.last).contains(&n) => n,
            _ => self.first,
        };
        let n = match self.taken.alloc(from, self.last) {
            Err(e) if e == ENOSPC && from > self.first => self.taken.alloc(self.first, self.last),
            n => n,
        }
        .map_err(|e| if e == ENOSPC { ENOMEM } else { e })?;
        self.next.store(n.wrapping_add(1), Ordering::Relaxed);
        Ok(n)
    }

    /// Gives `index` back; one outside `first..=last` was never given.
    fn free(&self, index: u32) {
        if (self.first..=self.last).contains(&index) {
            self.taken.free(index);
        }
    }
}

/// Live objects by number, where the data path finds them; the map holds a
/// reference, so a lookup never sees a freed object. A spinlock: a lookup
/// is a few steps down a tree, taken for every packet.
#[pin_data]
struct ObjectMap<V: Send + Sync> {
    #[pin]
    map: SpinLock<RBTree<u32, Arc<V>>>,
}

impl<V: Send + Sync> ObjectMap<V> {
    /// An empty map.
    fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            map <- new_spinlock!(RBTree::new()),
        })
    }

    /// Adds `value` as number `n`, which is not in use.
    fn insert(&self, n: u32, value: Arc<V>) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(n, value);
        self.map.lock().insert(node);
        Ok(())
    }

    /// Adds `value` as number `n`, unless that is in use: `EBUSY`.
    fn insert_new(&self, n: u32, value: Arc<V>) -> Result {
        let node = RBTreeNodeReservation::new(GFP_KERNEL)?.into_node(n, value);
        let mut map = self.map.lock();
        if map.get(&n).is_some() {
            return Err(EBUSY);
        }
        map.insert(node);
        Ok(())
    }

    /// The object numbered `n`.
    fn get(&self, n: u32) -> Option<Arc<V>> {
        self.map.lock().get(&n).cloned()
    }

    /// Takes number `n` out of the map.
    fn remove(&self, n: u32) -> Option<Arc<V>> {
        self.map.lock().remove(&n)
    }

    /// Calls `f` on every object in the map when it is reached, in number
    /// order, without the map's lock held: `f` may sleep, and drop the last
    /// reference to another object.
    fn for_each(&self, mut f: impl FnMut(&V)) {
        let mut from = 0;
        loop {
            let next = {
                let mut map = self.map.lock();
                map.cursor_lower_bound(&from).map(|c| {
                    let (n, v) = c.current();
                    (*n, v.clone())
                })
            };
            let Some((n, v)) = next else {
                return;
            };
            f(&v);
            match n.checked_add(1) {
                Some(n) => from = n,
                None => return,
            }
        }
    }

    /// Every object, at one moment.
    fn snapshot(&self) -> Result<KVec<Arc<V>>> {
        let map = self.map.lock();
        let mut all = KVec::new();
        for v in map.values() {
            all.push(v.clone(), GFP_ATOMIC)?;
        }
        Ok(all)
    }
}

/// Live objects of one kind, under numbers from a fixed range.
#[pin_data]
pub(crate) struct Pool<V: Send + Sync> {
    #[pin]
    numbers: Numbers,
    #[pin]
    objects: ObjectMap<V>,
}

impl<V: Send + Sync> Pool<V> {
    /// An empty pool of numbers `first..=last`.
    pub(crate) fn new(first: u32, last: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            numbers <- Numbers::new(first, last),
            objects <- ObjectMap::new(),
        })
    }

    /// Adds the object `make` builds for a free number, under that number;
    /// `ENOMEM` when none is left. If `make` fails, nothing is taken.
    pub(crate) fn add(&self, make: impl FnOnce(u32) -> Result<Arc<V>>) -> Result<(u32, Arc<V>)> {
        let n = self.numbers.alloc()?;
        make(n)
            .and_then(|v| {
                self.objects.insert(n, v.clone())?;
                Ok((n, v))
            })
            .inspect_err(|_| self.numbers.free(n))
    }

    /// Adds `value` under `n`, a number outside the range that only one
    /// object may have at a time (QP1); `EBUSY` if one has it.
    pub(crate) fn add_reserved(&self, n: u32, value: Arc<V>) -> Result {
        self.objects.insert_new(n, value)
    }

    /// The object numbered `n`.
    pub(crate) fn get(&self, n: u32) -> Option<Arc<V>> {
        self.objects.get(n)
    }

    /// Takes object `n` out of the data path's sight; its number stays
    /// taken until [`Pool::free`], so that what still refers to the old
    /// object by number can be cleaned up first.
    pub(crate) fn withdraw(&self, n: u32) -> Option<Arc<V>> {
        self.objects.remove(n)
    }

    /// Gives number `n` back; numbers outside the range were never taken.
    pub(crate) fn free(&self, n: u32) {
        self.numbers.free(n);
    }

    /// Withdraws object `n` and gives its number back.
    pub(crate) fn remove(&self, n: u32) -> Option<Arc<V>> {
        let v = self.withdraw(n);
        self.free(n);
        v
    }

    /// Calls `f` on every object, one at a time and without the pool's lock
    /// held.
    pub(crate) fn for_each(&self, f: impl FnMut(&V)) {
        self.objects.for_each(f);
    }

    /// Every object, at one moment.
    pub(crate) fn snapshot(&self) -> Result<KVec<Arc<V>>> {
        self.objects.snapshot()
    }
}
