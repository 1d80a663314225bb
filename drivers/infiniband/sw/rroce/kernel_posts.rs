// SPDX-License-Identifier: GPL-2.0

//! A kernel QP's posts. Kernel consumers post from any context, even with
//! interrupts off (ib_mad posts under a spinlock), where the QP's mutex
//! cannot be taken: a post goes onto a lock-free list, and the QP takes it
//! off under its lock when it runs.

use crate::kernel_ext::llist::AtomicQueue;
use crate::work::{RecvWqe, SendWqe};
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use kernel::prelude::*;

/// Work requests in posting order: what the QP took off a lock-free queue
/// and has not used yet. Slots for as many as the queue may hold are made
/// with the QP, so that taking them off allocates nothing and loses none.
pub(crate) struct Fifo<T> {
    slots: KVVec<Option<T>>,
    front: usize,
    len: usize,
}

impl<T> Fifo<T> {
    /// Room for `capacity`: as many as a [`PostList`] of that capacity
    /// lets be posted.
    pub(crate) fn with_capacity(capacity: u32) -> Result<Self> {
        let n = capacity as usize;
        let mut slots = KVVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(None, GFP_KERNEL)?;
        }
        Ok(Self::in_slots(slots))
    }

    /// None, for a queue no kernel consumer posts to.
    pub(crate) fn none() -> Self {
        Self::in_slots(KVVec::new())
    }

    fn in_slots(slots: KVVec<Option<T>>) -> Self {
        Self {
            slots,
            front: 0,
            len: 0,
        }
    }

    /// Takes the oldest one, if any, after moving in what `queue` holds
    /// once all taken before are used: the queue then holds no more than
    /// the slots, as a post counts against the capacity until it is used.
    pub(crate) fn pop(&mut self, queue: &AtomicQueue<T>) -> Option<T> {
        if self.len == 0 {
            self.front = 0;
            let (slots, len) = (&mut self.slots, &mut self.len);
            queue.drain(|item| {
                if let Some(slot) = slots.get_mut(*len) {
                    *slot = Some(item);
                    *len += 1;
                }
            });
        }
        let item = self.slots.get_mut(self.front)?.take()?;
        self.front += 1;
        self.len -= 1;
        Some(item)
    }
}

/// One direction of a kernel QP: posted work requests, and how many are
/// outstanding, against the capacity the consumer asked for.
pub(crate) struct PostList<T> {
    posted: AtomicQueue<T>,
    outstanding: AtomicU32,
    capacity: u32,
}

impl<T> PostList<T> {
    pub(crate) fn new(capacity: u32) -> Self {
        Self {
            posted: AtomicQueue::new(),
            outstanding: AtomicU32::new(0),
            capacity,
        }
    }

    /// Posts `wr`; `ENOMEM` when the queue is full, as verbs consumers expect.
    pub(crate) fn post(&self, wr: T) -> Result {
        if self.outstanding.fetch_add(1, Ordering::AcqRel) >= self.capacity {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
            return Err(ENOMEM);
        }
        self.posted.push(wr, GFP_ATOMIC).inspect_err(|_| {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
        })
    }

    /// The next posted work request, oldest first.
    pub(crate) fn take(&self, fifo: &mut Fifo<T>) -> Option<T> {
        fifo.pop(&self.posted)
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
    pub(crate) fn new(send_capacity: u32, recv_capacity: u32) -> Self {
        Self {
            send: PostList::new(send_capacity),
            recv: PostList::new(recv_capacity),
            due: AtomicBool::new(false),
        }
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
