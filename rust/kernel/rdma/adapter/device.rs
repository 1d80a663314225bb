// SPDX-License-Identifier: GPL-2.0

//! The device-level callbacks: attributes of the device and its ports.

use super::*;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_device(
        ib: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours with a valid (or null) udata.
            let (dev, udata) = unsafe { (Self::device(ib), UData::from_raw(udata)) };
            let a = T::query_device(dev, &udata)?;
            // SAFETY: `attr` is valid for writes during the callback.
            unsafe { a.write_to(&mut *attr) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_port(
        ib: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let dev = unsafe { Self::device(ib) };
            let a = T::query_port(dev, port)?;
            // SAFETY: `attr` is valid for writes during the callback.
            let attr = unsafe { &mut *attr };
            a.write_to(attr);
            if matches!(T::LINK_LAYER, LinkLayer::Ethernet) {
                // Fails once the netdev is gone; a port without one has no
                // speed to report, and the driver has said it is down.
                // SAFETY: The device is ours and alive; the outputs are fields of `attr`.
                let _ = unsafe {
                    bindings::ib_get_eth_speed(
                        ib,
                        port,
                        &mut attr.active_speed,
                        &mut attr.active_width,
                    )
                };
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_pkey(
        ib: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours; `pkey` is valid for writes.
            unsafe { *pkey = T::query_pkey(Self::device(ib), port, index)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn get_port_immutable(
        ib: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let p = T::port_immutable(unsafe { Self::device(ib) }, port)?;
            // SAFETY: `imm` is valid for writes during the callback.
            unsafe { p.write_to(&mut *imm) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn get_link_layer(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> bindings::rdma_link_layer {
        T::LINK_LAYER as bindings::rdma_link_layer
    }
}
