// SPDX-License-Identifier: GPL-2.0

//! Trampolines for protection domains.

use super::*;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn alloc_pd(
        pd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: As for `alloc_ucontext`, with `size_ib_pd`.
            unsafe {
                let data = T::alloc_pd(Self::device((*pd).device), &UData::from_raw(udata))?;
                PdObject::<T>::write(pd, data);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an object of our devices.
    pub(super) unsafe extern "C" fn dealloc_pd(
        pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        // SAFETY: ib_core deallocates a PD once, after a successful alloc.
        unsafe { PdObject::<T>::drop_data(pd) };
        0
    }
}
