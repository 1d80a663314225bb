// SPDX-License-Identifier: GPL-2.0

//! Trampolines for address handles, user and kernel.

use super::*;

/// An `ib_ah` with its slot.
pub(super) type AhObject<T> = Object<bindings::ib_ah, AhSlot<T>>;

/// An AH's data behind its `ib_ah`: its address vector and port, which
/// kernel UD work requests and `query_ah` read, and for a user AH the
/// driver's data.
pub(super) struct AhSlot<T: Driver> {
    pub(super) av: Av,
    pub(super) port: u32,
    pub(super) data: Option<T::Ah>,
}

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for an AH of our devices.
    pub(super) unsafe extern "C" fn create_user_ah(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed AH of `size_ib_ah` bytes with
            // its device and PD set, and attributes whose source GID it
            // resolved.
            unsafe {
                let dev = Self::device((*ah).device);
                let pd = PdObject::<T>::data((*ah).pd);
                let attr = &*(*init).ah_attr;
                let av = Av::from_raw(attr)?;
                let udata = UData::from_raw(udata);
                let data = T::create_user_ah(dev, pd, &av, &udata)?;
                AhObject::<T>::write(
                    ah,
                    AhSlot {
                        av,
                        port: attr.port_num,
                        data: Some(data),
                    },
                );
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, once, for an AH `create_user_ah` made.
    pub(super) unsafe extern "C" fn destroy_ah(
        ah: *mut bindings::ib_ah,
        _flags: u32,
    ) -> ffi::c_int {
        // SAFETY: The data is initialised and never used again.
        let slot = unsafe { AhObject::<T>::take(ah) };
        if let Some(data) = slot.data {
            // SAFETY: The device is alive during the call.
            T::destroy_ah(unsafe { Self::device((*ah).device) }, data);
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a kernel AH of our
    /// devices, possibly in atomic context: nothing here sleeps or
    /// allocates.
    pub(super) unsafe extern "C" fn create_ah(
        ah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        _udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a zeroed AH of `size_ib_ah` bytes and
            // attributes whose source GID it resolved.
            unsafe {
                let attr = &*(*init).ah_attr;
                let av = Av::from_raw(attr)?;
                AhObject::<T>::write(
                    ah,
                    AhSlot {
                        av,
                        port: attr.port_num,
                        data: None,
                    },
                );
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for a live AH of ours.
    pub(super) unsafe extern "C" fn query_ah(
        ah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> ffi::c_int {
        // SAFETY: The AH is alive during the call, and `attr` valid for
        // writes.
        let (slot, attr) = unsafe { (AhObject::<T>::data(ah), &mut *attr) };
        slot.av.write_to(attr, slot.port);
        0
    }
}
