// SPDX-License-Identifier: GPL-2.0

//! Trampolines for the port counters (`rdma statistic`).

use super::*;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core for a port of one of our devices.
    pub(super) unsafe extern "C" fn alloc_hw_port_stats(
        ib: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        // SAFETY: The device is ours and alive during the call.
        unsafe { Self::device(ib) }
            .container()
            .registry
            .stat_descs
            .alloc_port_stats()
    }

    /// # Safety
    ///
    /// Called by ib_core, under the stats' lock, with stats from
    /// `alloc_hw_port_stats`.
    pub(super) unsafe extern "C" fn get_hw_stats(
        ib: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        _port: u32,
        _index: ffi::c_int,
    ) -> ffi::c_int {
        // SAFETY: The device is ours and alive, and ib_core holds the
        // stats' lock, during the call.
        let (dev, values) = unsafe { (Self::device(ib), stats::values(stats)) };
        T::counters(dev, values);
        values.len() as ffi::c_int
    }
}
