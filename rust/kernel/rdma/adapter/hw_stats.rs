// SPDX-License-Identifier: GPL-2.0

//! Trampolines for the port counters (`rdma statistic`), and the counter
//! sets QPs bind to (`rdma statistic qp`).

use super::{qp::QpObject, *};

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

    /// # Safety
    ///
    /// Called by ib_core, under the counter's lock, for one of our QPs and
    /// a counter of its device.
    pub(super) unsafe extern "C" fn counter_bind_qp(
        counter: *mut bindings::rdma_counter,
        qp: *mut bindings::ib_qp,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive, and the counter ours to
            // change under its lock, during the call.
            unsafe {
                let id = ((*counter).id != 0).then_some((*counter).id);
                let dev = Self::device((*qp).device);
                (*counter).id = T::counter_bind_qp(dev, &QpObject::<T>::data(qp).data, id)?;
                // ib_core leaves this to the driver, and unbinds, lists and
                // releases the counter by it.
                (*qp).counter = counter;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, under the counter's lock, for one of our QPs
    /// bound to a counter.
    pub(super) unsafe extern "C" fn counter_unbind_qp(qp: *mut bindings::ib_qp) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The QP is ours and alive during the call.
            unsafe {
                T::counter_unbind_qp(Self::device((*qp).device), &QpObject::<T>::data(qp).data)?;
                (*qp).counter = core::ptr::null_mut();
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core for a counter of one of our devices, once no QP is
    /// bound to it.
    pub(super) unsafe extern "C" fn counter_dealloc(
        counter: *mut bindings::rdma_counter,
    ) -> ffi::c_int {
        // SAFETY: The counter and its device are alive during the call. A
        // counter whose bind failed has no id, and no set.
        unsafe {
            if (*counter).id != 0 {
                T::counter_dealloc(Self::device((*counter).device), (*counter).id);
            }
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core for a new counter of one of our devices.
    pub(super) unsafe extern "C" fn counter_alloc_stats(
        counter: *mut bindings::rdma_counter,
    ) -> *mut bindings::rdma_hw_stats {
        // SAFETY: The counter's device is ours and alive during the call.
        // The set has the port's counters, at the port's indices, which is
        // how ib_core adds them up.
        unsafe { Self::device((*counter).device) }
            .container()
            .registry
            .stat_descs
            .alloc_port_stats()
    }

    /// # Safety
    ///
    /// Called by ib_core, under the counter's lock, for a counter with
    /// stats from `counter_alloc_stats`.
    pub(super) unsafe extern "C" fn counter_update_stats(
        counter: *mut bindings::rdma_counter,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: The counter, its device and its stats are alive, and
            // the stats not otherwise accessed under the counter's lock,
            // during the call.
            unsafe {
                let values = stats::values((*counter).stats);
                if (*counter).id != 0 {
                    T::counter_values(Self::device((*counter).device), (*counter).id, values)?;
                }
            }
            Ok(0)
        })
    }
}
