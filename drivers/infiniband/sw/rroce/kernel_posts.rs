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
/// and has not used yet.
pub(crate) struct Fifo<T> {
    items: KVec<Option<T>>,
    front: usize,
}

impl<T> Fifo<T> {
    pub(crate) fn new() -> Self {
        Self {
            items: KVec::new(),
            front: 0,
        }
    }

    /// Takes the oldest one, if any, after moving in what `queue` holds.
    pub(crate) fn pop(&mut self, queue: &AtomicQueue<T>) -> Option<T> {
        if self.front == self.items.len() {
            self.items = KVec::new();
            self.front = 0;
            // A failed allocation leaves the rest on the queue for later.
            queue.drain(|item| {
                let _ = self.items.push(Some(item), GFP_KERNEL);
            });
        }
        let item = self.items.get_mut(self.front)?.take();
        self.front += 1;
        item
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
