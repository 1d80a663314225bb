// SPDX-License-Identifier: GPL-2.0

//! The device-level callbacks: attributes of the device and its ports.

use super::*;
use crate::kernel_ext::errno::eopnotsupp;

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

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn modify_device(
        ib: *mut bindings::ib_device,
        mask: ffi::c_int,
        attr: *mut bindings::ib_device_modify,
    ) -> ffi::c_int {
        const GUID: u32 = bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_SYS_IMAGE_GUID;
        const DESC: u32 = bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC;
        from_result(|| {
            let mask = mask as u32;
            if mask & !(GUID | DESC) != 0 {
                return Err(eopnotsupp());
            }
            // SAFETY: `attr` is valid for reads during the callback.
            let attr = unsafe { &*attr };
            let change = DeviceChange {
                sys_image_guid: (mask & GUID != 0).then(|| attr.sys_image_guid.to_be_bytes()),
                node_desc: (mask & DESC != 0).then_some(attr.node_desc),
            };
            // SAFETY: A callback of ours.
            T::modify_device(unsafe { Self::device(ib) }, &change)?;
            if let Some(desc) = change.node_desc {
                // SAFETY: The device is ours and alive. As in C drivers,
                // the bytes are written in place: sysfs and ib_mad read
                // them as bytes, and see the old or the new description.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        desc.as_ptr(),
                        core::ptr::addr_of_mut!((*ib).node_desc).cast::<u8>(),
                        desc.len(),
                    )
                };
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn modify_port(
        ib: *mut bindings::ib_device,
        port: u32,
        mask: ffi::c_int,
        attr: *mut bindings::ib_port_modify,
    ) -> ffi::c_int {
        const RESET_QKEY: u32 = bindings::ib_port_modify_flags_IB_PORT_RESET_QKEY_CNTR;
        from_result(|| {
            let mask = mask as u32;
            // Shutting a port down or choosing its init type is not ours.
            // Resetting the Q_Key violation counter has nothing to do:
            // `PortAttr` reports none.
            if mask & !RESET_QKEY != 0 {
                return Err(eopnotsupp());
            }
            // SAFETY: `attr` is valid for reads during the callback.
            let attr = unsafe { &*attr };
            let change = PortChange {
                set_cap: attr.set_port_cap_mask,
                clr_cap: attr.clr_port_cap_mask,
            };
            // SAFETY: A callback of ours.
            T::modify_port(unsafe { Self::device(ib) }, port, &change)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices:
    /// `in_mad` and `out_mad` are whole, distinct `struct ib_mad`s.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe extern "C" fn process_mad(
        ib: *mut bindings::ib_device,
        _flags: ffi::c_int,
        port: u32,
        _in_wc: *const bindings::ib_wc,
        _in_grh: *const bindings::ib_grh,
        in_mad: *const bindings::ib_mad,
        out_mad: *mut bindings::ib_mad,
        _out_mad_size: *mut usize,
        _out_mad_pkey_index: *mut u16,
    ) -> ffi::c_int {
        const _: () = assert!(core::mem::size_of::<bindings::ib_mad>() == MAD_SIZE);
        // SAFETY: Both MADs are valid for the callback and are bytes
        // throughout: a header of integers without padding, then data.
        let (request, reply) = unsafe {
            (
                &*in_mad.cast::<[u8; MAD_SIZE]>(),
                &mut *out_mad.cast::<[u8; MAD_SIZE]>(),
            )
        };
        // SAFETY: A callback of ours.
        let answer = T::process_mad(unsafe { Self::device(ib) }, port, request, reply);
        let result = match answer {
            MadAnswer::Pass => bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS,
            MadAnswer::Reply => {
                bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS
                    | bindings::ib_mad_result_IB_MAD_RESULT_REPLY
            }
        };
        result as ffi::c_int
    }
}
