// SPDX-License-Identifier: GPL-2.0

//! Implicit on-demand paging: one MR over the whole address space of a
//! process (`ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND)`).
//!
//! ib_core's implicit umem has no pages of its own; the address space is
//! cut into chunks of [`CHUNK`] bytes, each an on-demand umem of its own
//! (`ib_umem_odp_alloc_child`), made when the device first touches it. So
//! the memory an implicit MR costs follows what peers and work requests
//! touch, not the size of the address space; and as a peer chooses what it
//! touches, at most [`MAX_CHILDREN`] are kept: making one more first lets
//! all go, to be made again as they are touched.

use super::{
    odp::OdpUmem,
    pages::{AtomicOp, PageRun},
    Device,
};
use crate::bindings;
use crate::kernel_ext::fill::Fill;
use core::ptr::NonNull;
use kernel::{
    error::from_err_ptr,
    new_mutex,
    prelude::*,
    rbtree::RBTree,
    sync::{Arc, Mutex},
};

/// The bytes of each child: 2 MiB, whose page lists take 8 KiB.
const CHUNK: usize = 2 << 20;
/// The children kept at most: 8 GiB of address space, 32 MiB of lists.
const MAX_CHILDREN: usize = 4096;

/// The address space of a process, mapped on demand a chunk at a time.
///
/// # Invariants
///
/// `root` comes from a successful `rroce_umem_odp_alloc_implicit` and is
/// released once, on drop, after every child.
pub(crate) struct ImplicitOdp {
    root: NonNull<bindings::ib_umem_odp>,
    writable: bool,
    children: Pin<KBox<Mutex<Children>>>,
}

/// The children kept, by chunk number, and how many they are.
struct Children {
    tree: RBTree<usize, Arc<OdpUmem>>,
    len: usize,
}

// SAFETY: The root is only read, to make children, which are `Send` and
// `Sync`; it may be released from any thread.
unsafe impl Send for ImplicitOdp {}
// SAFETY: As above; the children are behind a mutex.
unsafe impl Sync for ImplicitOdp {}

impl ImplicitOdp {
    /// The address space of the calling process, with the rights `access`
    /// (`enum ib_access_flags`), writable if `writable`.
    pub(super) fn get<T>(dev: &Device<T>, access: u32, writable: bool) -> Result<Self> {
        if !super::odp::supported() {
            return Err(crate::kernel_ext::errno::eopnotsupp());
        }
        let children = Children {
            tree: RBTree::new(),
            len: 0,
        };
        let children = KBox::pin_init(new_mutex!(children), GFP_KERNEL)?;
        // SAFETY: The device is alive; the call returns a pointer or an
        // error.
        let root = from_err_ptr(unsafe {
            bindings::rroce_umem_odp_alloc_implicit(dev.as_raw(), access as _)
        })?;
        // INVARIANT: Just made, released on drop.
        Ok(Self {
            root: NonNull::new(root).ok_or(ENOMEM)?,
            writable,
            children,
        })
    }

    /// The child of chunk `index`, made now if it is not yet.
    fn child(&self, index: usize) -> Result<Arc<OdpUmem>> {
        if let Some(child) = self.children.lock().tree.get(&index) {
            return Ok(child.clone());
        }
        let start = index.checked_mul(CHUNK).ok_or(EFAULT)?;
        // Made without the lock: making it may take the mm's `mmap_lock`.
        // SAFETY: `root` is an implicit umem, alive until every child is
        // gone, by the type invariant.
        let child = unsafe { OdpUmem::child(self.root, start, CHUNK, self.writable) }?;
        let child = Arc::new(child, GFP_KERNEL)?;
        let mut children = self.children.lock();
        if let Some(made) = children.tree.get(&index) {
            // Another thread made it meanwhile; ours goes once unlocked.
            return Ok(made.clone());
        }
        // Those let go are released once unlocked, or once the accesses
        // in progress that hold them are done.
        let gone = (children.len == MAX_CHILDREN).then(|| {
            children.len = 0;
            core::mem::replace(&mut children.tree, RBTree::new())
        });
        let inserted = children
            .tree
            .try_create_and_insert(index, child.clone(), GFP_KERNEL);
        if inserted.is_ok() {
            children.len += 1;
        }
        drop(children);
        drop(gone);
        inserted?;
        Ok(child)
    }

    /// Calls `f` on each child's piece of `offset..offset + len`, in order,
    /// with the offset in the child, the offset from `offset` and the length.
    fn pieces(
        &self,
        offset: usize,
        len: usize,
        mut f: impl FnMut(&OdpUmem, usize, usize, usize) -> Result,
    ) -> Result {
        let end = offset.checked_add(len).ok_or(EFAULT)?;
        let mut at = offset;
        while at < end {
            let in_chunk = at % CHUNK;
            let n = (CHUNK - in_chunk).min(end - at);
            f(&*self.child(at / CHUNK)?, in_chunk, at - offset, n)?;
            at += n;
        }
        Ok(())
    }

    /// Copies `src` to address `offset`.
    pub(super) fn write(&self, offset: usize, src: &[u8]) -> Result {
        self.pieces(offset, src.len(), |child, off, at, n| {
            child.lock(off, n, true)?.write(0, &src[at..at + n])
        })
    }

    /// Appends the `len` bytes at address `offset` to `dst`.
    pub(super) fn read(&self, offset: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        if len > dst.remaining() {
            return Err(EFAULT);
        }
        self.pieces(offset, len, |child, off, _, n| {
            child.lock(off, n, false)?.read(0, n, dst)
        })
    }

    /// Runs `op` on the 8 aligned bytes at address `offset`, which lie in
    /// one chunk.
    pub(super) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        if offset % 8 != 0 {
            return Err(EINVAL);
        }
        let child = self.child(offset / CHUNK)?;
        let orig = child.lock(offset % CHUNK, 8, true)?.atomic(0, op);
        orig
    }

    /// Maps the `len` bytes at address `offset` ahead of use, as
    /// [`OdpUmem::prefetch`].
    pub(super) fn prefetch(&self, offset: usize, len: usize, write: bool, fault: bool) -> Result {
        self.pieces(offset, len, |child, off, _, n| {
            child.prefetch(off, n, write, fault)
        })
    }
}

impl Drop for ImplicitOdp {
    fn drop(&mut self) {
        // Each child unmaps its pages and removes its notifier as it goes,
        // which may sleep: not under the lock.
        let children = core::mem::replace(&mut self.children.lock().tree, RBTree::new());
        drop(children);
        // SAFETY: By the type invariant this is the one release, and no
        // child is left.
        unsafe { bindings::rroce_umem_odp_release_implicit(self.root.as_ptr()) };
    }
}
