// SPDX-License-Identifier: GPL-2.0

//! The sysfs attributes a device adds to those of ib_core
//! (`ib_device_ops.device_group`):
//!
//! - `parent`, the name of the netdev of its port 1, as rdma_rxe and siw
//!   show it and tools such as SPDK's scripts read it (Ethernet devices);
//! - the driver's switches ([`Driver::SWITCHES`]): settings of one device
//!   that root turns on and off (`0`/`1`, `n`/`y`, `off`/`on`).
//!
//! The attributes are constants of [`Attributes<T>`], built when the module
//! is compiled, so the group needs no memory or lockdep key of its own.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use super::{Device, Driver, LinkLayer};
use crate::bindings;
use core::{
    marker::PhantomData,
    mem::offset_of,
    ptr::{null_mut, NonNull},
};
use kernel::{
    error::{
        code::{EINVAL, ENODEV},
        to_result,
    },
    ffi,
};

/// The most switches a driver has; more are left out.
const MAX_SWITCHES: usize = 4;

/// A switch's attribute, and which of the driver's switches it is.
#[repr(C)]
struct SwitchAttribute {
    attr: bindings::device_attribute,
    index: usize,
}

/// The attribute group of driver `T`'s devices.
pub(super) struct Attributes<T: Driver>(PhantomData<T>);

impl<T: Driver> Attributes<T> {
    /// Whether `T`'s devices have any of these attributes.
    pub(super) const ANY: bool =
        matches!(T::LINK_LAYER, LinkLayer::Ethernet) || !T::SWITCHES.is_empty();

    /// The group, as `ib_device_ops.device_group` takes it.
    pub(super) const GROUP: &'static bindings::attribute_group = &bindings::attribute_group {
        attrs: Self::ATTRS.as_ptr().cast_mut(),
        // SAFETY: All-zero is valid for the rest: no name, no visibility hooks.
        ..unsafe { core::mem::zeroed() }
    };

    const PARENT: &'static bindings::device_attribute =
        &attribute(kernel::c_str!("parent"), 0o444, Some(parent_show), None);

    /// One constant, so that every switch attribute lies in one array,
    /// where `switch_show` and `switch_store` find their index.
    const SWITCHES: &'static [SwitchAttribute; MAX_SWITCHES] = &{
        const UNUSED: SwitchAttribute = SwitchAttribute {
            attr: attribute(kernel::c_str!(""), 0, None, None),
            index: 0,
        };
        let mut switches = [UNUSED; MAX_SWITCHES];
        let mut i = 0;
        while i < T::SWITCHES.len() && i < MAX_SWITCHES {
            switches[i] = SwitchAttribute {
                attr: attribute(
                    T::SWITCHES[i],
                    0o644,
                    Some(Self::switch_show),
                    Some(Self::switch_store),
                ),
                index: i,
            };
            i += 1;
        }
        switches
    };

    /// The attributes, NULL-terminated.
    const ATTRS: &'static [*mut bindings::attribute; MAX_SWITCHES + 2] = &{
        let mut attrs = [null_mut(); MAX_SWITCHES + 2];
        let mut n = 0;
        if matches!(T::LINK_LAYER, LinkLayer::Ethernet) {
            attrs[n] = attribute_ptr(Self::PARENT);
            n += 1;
        }
        let mut i = 0;
        while i < T::SWITCHES.len() && i < MAX_SWITCHES {
            attrs[n] = attribute_ptr(&Self::SWITCHES[i].attr);
            n += 1;
            i += 1;
        }
        attrs
    };

    /// # Safety
    ///
    /// Called by sysfs for one of [`Self::SWITCHES`] of a `T` device's
    /// `struct device`, with `buf` a page.
    unsafe extern "C" fn switch_show(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
        buf: *mut ffi::c_char,
    ) -> isize {
        // SAFETY: Guaranteed by the caller.
        let (dev, index) = unsafe { Self::switch_of(device, attr) };
        let text = if T::switch(dev, index) {
            b"1\n"
        } else {
            b"0\n"
        };
        // SAFETY: `buf` is a page, far longer than `text`.
        unsafe { core::ptr::copy_nonoverlapping(text.as_ptr().cast(), buf, text.len()) };
        text.len() as isize
    }

    /// # Safety
    ///
    /// Called by sysfs for one of [`Self::SWITCHES`] of a `T` device's
    /// `struct device`, with `buf` holding `count` bytes and a NUL.
    unsafe extern "C" fn switch_store(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
        buf: *const ffi::c_char,
        count: usize,
    ) -> isize {
        // SAFETY: Guaranteed by the caller.
        let (dev, index) = unsafe { Self::switch_of(device, attr) };
        let mut on = false;
        // SAFETY: `buf` is NUL-terminated; `on` is a valid `bool`.
        let parsed = to_result(unsafe { kernel::bindings::kstrtobool(buf, &mut on) });
        match parsed
            .map_err(|_| EINVAL)
            .and_then(|()| T::set_switch(dev, index, on))
        {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// The device and the switch index of a switch attribute.
    ///
    /// # Safety
    ///
    /// `device` is a `T` device's, alive while sysfs calls its attribute
    /// `attr`, one of [`Self::SWITCHES`].
    unsafe fn switch_of<'a>(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
    ) -> (&'a Device<T>, usize) {
        // SAFETY: `attr` is the `attr` of a `SwitchAttribute`.
        let switch = unsafe {
            &*attr
                .byte_sub(offset_of!(SwitchAttribute, attr))
                .cast::<SwitchAttribute>()
        };
        // SAFETY: `device` is an `ib_device`'s, and only `T` devices carry
        // this group; sysfs keeps the device alive during the call.
        let dev = unsafe { Device::from_raw(bindings::rroce_rdma_device_to_ibdev(device)) };
        (dev, switch.index)
    }
}

/// A `device_attribute` of `name`, `mode` and callbacks.
// With lockdep, `struct attribute` has more fields, which stay zero.
#[allow(clippy::needless_update)]
const fn attribute(
    name: &'static kernel::str::CStr,
    mode: u16,
    show: Option<
        unsafe extern "C" fn(
            *mut bindings::device,
            *mut bindings::device_attribute,
            *mut ffi::c_char,
        ) -> isize,
    >,
    store: Option<
        unsafe extern "C" fn(
            *mut bindings::device,
            *mut bindings::device_attribute,
            *const ffi::c_char,
            usize,
        ) -> isize,
    >,
) -> bindings::device_attribute {
    bindings::device_attribute {
        attr: bindings::attribute {
            name: name.as_char_ptr().cast(),
            mode,
            // SAFETY: All-zero is valid for the rest (the lockdep key of a
            // static attribute, which sysfs does not need).
            ..unsafe { core::mem::zeroed() }
        },
        show,
        store,
    }
}

/// `attr` as a group lists it. C only reads it.
const fn attribute_ptr(attr: &'static bindings::device_attribute) -> *mut bindings::attribute {
    (&attr.attr as *const bindings::attribute).cast_mut()
}

/// # Safety
///
/// Called by sysfs for the `parent` attribute of an `ib_device`'s `struct
/// device`, with `buf` a page.
unsafe extern "C" fn parent_show(
    device: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *mut ffi::c_char,
) -> isize {
    // SAFETY: `device` is an `ib_device`'s, alive while sysfs shows it.
    let ib = unsafe { bindings::rroce_rdma_device_to_ibdev(device) };
    // SAFETY: The device is alive; the result is a held netdev or null.
    let Some(netdev) = NonNull::new(unsafe { bindings::ib_device_get_netdev(ib, 1) }) else {
        return ENODEV.to_errno() as isize;
    };
    // SAFETY: We hold the netdev; `name` is NUL-terminated within it, at
    // most `IFNAMSIZ` bytes, far less than the page `buf` is.
    unsafe {
        let name = &(*netdev.as_ptr()).name;
        let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
        core::ptr::copy_nonoverlapping(name.as_ptr(), buf, len);
        *buf.add(len) = b'\n' as ffi::c_char;
        bindings::rroce_dev_put(netdev.as_ptr());
        (len + 1) as isize
    }
}
