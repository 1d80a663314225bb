// SPDX-License-Identifier: GPL-2.0

//! Port counters, as `rdma statistic show link DEV/PORT` shows them
//! (`struct rdma_hw_stats`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use kernel::prelude::*;

/// The descriptors of a driver's counters: their names, which must outlive
/// every device's stats structure, so the [`super::Registry`] keeps them.
///
/// # Invariants
///
/// Each `name` points to a `'static` C string.
pub(crate) struct StatDescs(KVec<bindings::rdma_stat_desc>);

// SAFETY: The descriptors only point to static strings, and are never
// changed after creation.
unsafe impl Send for StatDescs {}
// SAFETY: As above.
unsafe impl Sync for StatDescs {}

impl StatDescs {
    /// Descriptors for counters named `names`.
    pub(crate) fn new(names: &'static [&'static CStr]) -> Result<Self> {
        let mut descs = KVec::with_capacity(names.len(), GFP_KERNEL)?;
        for name in names {
            // INVARIANT: `name` is static.
            descs.push(
                bindings::rdma_stat_desc {
                    name: name.as_char_ptr(),
                    ..Default::default()
                },
                GFP_KERNEL,
            )?;
        }
        Ok(Self(descs))
    }

    /// A new stats structure for one port, which ib_core owns and frees.
    pub(super) fn alloc_port_stats(&self) -> *mut bindings::rdma_hw_stats {
        // SAFETY: The descriptors outlive the devices that use them (the
        // registry outlives its devices), and stay unchanged.
        unsafe {
            bindings::rdma_alloc_hw_stats_struct(
                self.0.as_ptr(),
                self.0.len() as _,
                bindings::RDMA_HW_STATS_DEFAULT_LIFESPAN as _,
            )
        }
    }
}

/// The values of a stats structure, for the driver to fill in.
///
/// # Safety
///
/// `stats` comes from [`StatDescs::alloc_port_stats`] and is not otherwise
/// accessed during `'a`.
pub(super) unsafe fn values<'a>(stats: *mut bindings::rdma_hw_stats) -> &'a mut [u64] {
    // SAFETY: rdma_alloc_hw_stats_struct allocates `num_counters` values.
    unsafe {
        let n = (*stats).num_counters as usize;
        core::slice::from_raw_parts_mut((*stats).value.as_mut_ptr(), n)
    }
}
