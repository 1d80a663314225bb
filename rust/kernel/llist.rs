// SPDX-License-Identifier: GPL-2.0

//! A queue that any context may add to, and one consumer drains: the
//! kernel's lock-free `llist`, holding boxed values.
//!
//! C header: [`include/linux/llist.h`](srctree/include/linux/llist.h)

use crate::bindings;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{alloc::Flags, prelude::*, types::Opaque};

/// A node: the list link, then the value.
#[repr(C)]
struct Node<T> {
    link: Opaque<bindings::llist_node>,
    value: T,
}

/// A multi-producer, single-consumer queue of `T`.
///
/// # Invariants
///
/// Every node on the list is a leaked `KBox<Node<T>>`.
pub(crate) struct AtomicQueue<T> {
    head: Opaque<bindings::llist_head>,
    _p: PhantomData<KBox<T>>,
}

// SAFETY: Values move between threads through the queue.
unsafe impl<T: Send> Send for AtomicQueue<T> {}
// SAFETY: `push` is safe from any context concurrently (llist_add is
// lock-free); `drain` takes `&mut` access to the consumer's side by taking
// everything at once with an atomic exchange.
unsafe impl<T: Send> Sync for AtomicQueue<T> {}

impl<T> AtomicQueue<T> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        // INVARIANT: An empty list (`first` null) holds no node.
        Self {
            head: Opaque::new(bindings::llist_head {
                first: core::ptr::null_mut(),
            }),
            _p: PhantomData,
        }
    }

    /// Adds `value`; `flags` allocates its node (`GFP_ATOMIC` in atomic
    /// context).
    pub(crate) fn push(&self, value: T, flags: Flags) -> Result {
        let node = KBox::new(
            Node {
                link: Opaque::uninit(),
                value,
            },
            flags,
        )?;
        let node = KBox::into_raw(node);
        // SAFETY: The node is ours to give to the list, which keeps it until
        // `drain` takes it back; `link` is its first field.
        unsafe { bindings::rroce_llist_add(node.cast(), self.head.get()) };
        Ok(())
    }

    /// Takes every value, oldest first, and hands each to `f`.
    pub(crate) fn drain(&self, mut f: impl FnMut(T)) {
        // SAFETY: Detaches the whole list atomically; the nodes are ours.
        let mut first = unsafe {
            let newest = bindings::rroce_llist_del_all(self.head.get());
            bindings::llist_reverse_order(newest)
        };
        while let Some(node) = NonNull::new(first) {
            // SAFETY: By the type invariant each node is a leaked box, whose
            // first field is the link; we read the next link before freeing.
            let node = unsafe {
                first = (*node.as_ptr()).next;
                KBox::from_raw(node.as_ptr().cast::<Node<T>>())
            };
            f(KBox::into_inner(node).value);
        }
    }
}

impl<T> Drop for AtomicQueue<T> {
    fn drop(&mut self) {
        self.drain(drop);
    }
}
