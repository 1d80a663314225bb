// SPDX-License-Identifier: GPL-2.0

//! A kernel QP's posts. Kernel consumers post from any context, even with
//! interrupts off (ib_mad posts under a spinlock), where the QP's mutex
//! cannot be taken: a post goes into a slot made with the QP, under a
//! spinlock taken with interrupts off, and the QP takes it out when it
//! runs. Posting allocates nothing, so it fails only when the queue is full.

use crate::kernel_ext::irq::lock_irqsave;
use crate::work::{RecvWqe, SendWqe};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

/// `n` empty slots, made before anything is put in them.
pub(crate) fn empty_slots<T>(n: usize) -> Result<KVVec<Option<T>>> {
    let mut slots = KVVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        slots.push(None, GFP_KERNEL)?;
    }
    Ok(slots)
}

/// Work requests in posting order, in slots made beforehand.
struct Slots<T> {
    slots: KVVec<Option<T>>,
    front: usize,
    len: usize,
}

impl<T> Slots<T> {
    /// Adds `item` behind the others; gives it back if every slot is taken.
    fn push(&mut self, item: T) -> Result<(), T> {
        let n = self.slots.len();
        if self.len == n {
            return Err(item);
        }
        match self.slots.get_mut((self.front + self.len) % n) {
            Some(slot) => *slot = Some(item),
            None => return Err(item),
        }
        self.len += 1;
        Ok(())
    }

    /// Moves the oldest one, if any, into `into`, which is empty: a swap,
    /// where taking it out of its slot and returning it compiled to four
    /// copies of it, all with interrupts off.
    fn pop_into(&mut self, into: &mut Option<T>) {
        if self.len == 0 {
            return;
        }
        if let Some(slot) = self.slots.get_mut(self.front) {
            core::mem::swap(slot, into);
            self.front = (self.front + 1) % self.slots.len();
            self.len -= 1;
        }
    }
}

/// One direction of a kernel QP: posted work requests not yet taken, and
/// how many are outstanding (posted, not completed), against the capacity
/// the consumer asked for.
pub(crate) struct PostList<T> {
    posted: Pin<KBox<SpinLock<Slots<T>>>>,
    outstanding: AtomicU32,
    capacity: u32,
}

impl<T> PostList<T> {
    /// Room for `capacity` outstanding requests.
    pub(crate) fn new(capacity: u32) -> Result<Self> {
        let slots = Slots {
            slots: empty_slots(capacity as usize)?,
            front: 0,
            len: 0,
        };
        Ok(Self {
            posted: KBox::pin_init(new_spinlock!(slots, "rroce_posts"), GFP_KERNEL)?,
            outstanding: AtomicU32::new(0),
            capacity,
        })
    }

    /// Posts `wr`; `ENOMEM` when the queue is full, as verbs consumers expect.
    pub(crate) fn post(&self, wr: T) -> Result {
        if self.outstanding.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
            return Err(ENOMEM);
        }
        // An outstanding request is in a slot or taken out: there is room.
        lock_irqsave(&self.posted).push(wr).map_err(|_| {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
            ENOMEM
        })
    }

    /// The next posted work request, oldest first.
    pub(crate) fn take(&self) -> Option<T> {
        let mut item = None;
        lock_irqsave(&self.posted).pop_into(&mut item);
        item
    }

    /// A work request taken earlier has completed.
    pub(crate) fn completed(&self) {
        self.outstanding.fetch_sub(1, Ordering::AcqRel);
    }

    /// How many are posted and not completed.
    pub(crate) fn outstanding(&self) -> u32 {
        self.outstanding.load(Ordering::Acquire)
    }
}

/// A kernel QP's send and receive queues, and whether the QP waits on its
/// device's list of QPs to run.
pub(crate) struct KernelPosts {
    pub(crate) send: PostList<SendWqe>,
    pub(crate) recv: PostList<RecvWqe>,
    due: AtomicBool,
}

impl KernelPosts {
    pub(crate) fn new(send_capacity: u32, recv_capacity: u32) -> Result<Self> {
        Ok(Self {
            send: PostList::new(send_capacity)?,
            recv: PostList::new(recv_capacity)?,
            due: AtomicBool::new(false),
        })
    }

    /// Marks the QP due to run; returns whether it was not already.
    pub(crate) fn set_due(&self) -> bool {
        !self.due.swap(true, Ordering::AcqRel)
    }

    /// The QP runs now: what is posted from here on needs another run.
    pub(crate) fn clear_due(&self) {
        self.due.store(false, Ordering::Release);
    }
}
