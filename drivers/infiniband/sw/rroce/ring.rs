// SPDX-License-Identifier: GPL-2.0

//! The queues shared with a process (CQ, SQ, RQ): rings laid out as the rxe
//! user ABI's `struct rxe_queue_buf`, in memory the process maps.

use crate::kernel_ext::rdma::{SharedMem, UserContext, UserMapping};
use crate::proto::queue::{Ring, INDEX_MASK_OFFSET, LOG2_ELEM_SIZE_OFFSET};
use kernel::{prelude::*, sync::Arc};

/// A ring in shared memory, offered to one process's mmap.
pub(crate) struct UserRing {
    /// The ring's geometry.
    ring: Ring,
    /// The memory, which the data path will read and write.
    _mem: Arc<SharedMem>,
    mapping: UserMapping,
}

impl UserRing {
    /// A ring of at least `num_elem` elements of `elem_size` bytes, with
    /// its header written, mappable by `uctx`.
    pub(crate) fn new(uctx: &UserContext, num_elem: u32, elem_size: u32) -> Result<Self> {
        let ring = Ring::new(num_elem, elem_size).ok_or(EINVAL)?;
        let mem = Arc::new(SharedMem::new(ring.buf_size())?, GFP_KERNEL)?;
        mem.store_u32(LOG2_ELEM_SIZE_OFFSET, ring.log2_elem_size())?;
        mem.store_u32(INDEX_MASK_OFFSET, ring.index_mask())?;
        let mapping = UserMapping::new(uctx, mem.clone())?;
        Ok(Self {
            ring,
            _mem: mem,
            mapping,
        })
    }

    /// How many elements it holds (one slot always stays free).
    pub(crate) fn capacity(&self) -> u32 {
        self.ring.capacity()
    }

    /// Where the process maps it.
    pub(crate) fn mapping(&self) -> &UserMapping {
        &self.mapping
    }
}
