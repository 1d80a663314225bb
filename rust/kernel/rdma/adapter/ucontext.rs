// SPDX-License-Identifier: GPL-2.0

//! Trampolines for user contexts: opened and closed by uverbs.

use super::*;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn alloc_ucontext(
        uctx: *mut bindings::ib_ucontext,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed context of `size_ib_ucontext`
            // bytes whose `device` is ours, and a valid udata.
            unsafe {
                let data =
                    T::alloc_ucontext(Self::device((*uctx).device), &UData::from_raw(udata))?;
                UContextObject::<T>::write(uctx, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn dealloc_ucontext(uctx: *mut bindings::ib_ucontext) {
        // SAFETY: ib_core deallocates a context once, after a successful alloc.
        unsafe { UContextObject::<T>::drop_data(uctx) };
    }

    /// With this op, unregistering a device does not wait for its users to
    /// close it: uverbs sends them `IB_EVENT_DEVICE_FATAL` and cuts them off.
    /// ib_core itself revokes what was mapped through `rdma_user_mmap_*`, so
    /// there is nothing left for the driver to do.
    ///
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn disassociate_ucontext(_uctx: *mut bindings::ib_ucontext) {}
}
