// SPDX-License-Identifier: GPL-2.0

//! The sysfs attributes a device adds to those of ib_core
//! (`ib_device_ops.device_group`):
//!
//! - `parent`, the name of the netdev of its port 1, as rdma_rxe and siw
//!   show it and tools such as SPDK's scripts read it (Ethernet devices);
//! - the driver's settings ([`Driver::SETTINGS`]) of one device, which root
//!   writes: switches (`0`/`1`, `n`/`y`, `off`/`on`) and numbers (`u32`,
//!   decimal, or hex with `0x`).
//!
//! The attributes are constants of [`Attributes<T>`], built when the module
//! is compiled, so the group needs no memory or lockdep key of its own.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use super::{driver::SettingKind, Device, Driver, LinkLayer};
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
    str::CStr,
};

/// The most settings a driver has; more are left out.
const MAX_SETTINGS: usize = 8;

/// A setting's attribute, and which of the driver's settings it is.
#[repr(C)]
struct SettingAttribute {
    attr: bindings::device_attribute,
    index: usize,
}

/// The attribute group of driver `T`'s devices.
pub(super) struct Attributes<T: Driver>(PhantomData<T>);

impl<T: Driver> Attributes<T> {
    /// Whether `T`'s devices have `parent`, and how many settings.
    const HAS_PARENT: bool = matches!(T::LINK_LAYER, LinkLayer::Ethernet);
    const NUM_SETTINGS: usize = if T::SETTINGS.len() < MAX_SETTINGS {
        T::SETTINGS.len()
    } else {
        MAX_SETTINGS
    };

    /// Whether `T`'s devices have any of these attributes.
    pub(super) const ANY: bool = Self::HAS_PARENT || Self::NUM_SETTINGS > 0;

    /// The group, as `ib_device_ops.device_group` takes it.
    pub(super) const GROUP: &'static bindings::attribute_group = &bindings::attribute_group {
        attrs: Self::ATTRS.as_ptr().cast_mut(),
        // SAFETY: All-zero is valid for the rest: no name, no visibility hooks.
        ..unsafe { core::mem::zeroed() }
    };

    const PARENT: &'static bindings::device_attribute =
        &attribute(kernel::c_str!("parent"), 0o444, Some(parent_show), None);

    /// One constant, so that every setting's attribute lies in one array,
    /// where `setting_show` and `setting_store` find their index.
    const SETTINGS: &'static [SettingAttribute; MAX_SETTINGS] = &{
        const UNUSED: SettingAttribute = SettingAttribute {
            attr: attribute(kernel::c_str!(""), 0, None, None),
            index: 0,
        };
        let mut settings = [UNUSED; MAX_SETTINGS];
        let mut i = 0;
        while i < Self::NUM_SETTINGS {
            settings[i] = SettingAttribute {
                attr: attribute(
                    T::SETTINGS[i].name,
                    0o644,
                    Some(Self::setting_show),
                    Some(Self::setting_store),
                ),
                index: i,
            };
            i += 1;
        }
        settings
    };

    /// The attributes, NULL-terminated.
    const ATTRS: &'static [*mut bindings::attribute; MAX_SETTINGS + 2] = &{
        let mut attrs = [null_mut(); MAX_SETTINGS + 2];
        let mut n = 0;
        if Self::HAS_PARENT {
            attrs[n] = attribute_ptr(Self::PARENT);
            n += 1;
        }
        let mut i = 0;
        while i < Self::NUM_SETTINGS {
            attrs[n] = attribute_ptr(&Self::SETTINGS[i].attr);
            n += 1;
            i += 1;
        }
        attrs
    };

    /// # Safety
    ///
    /// Called by sysfs for one of [`Self::SETTINGS`] of a `T` device's
    /// `struct device`, with `buf` a page.
    unsafe extern "C" fn setting_show(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
        buf: *mut ffi::c_char,
    ) -> isize {
        // SAFETY: Guaranteed by the caller.
        let (dev, index) = unsafe { Self::setting_of(device, attr) };
        let mut text = [0u8; 12];
        let len = decimal(T::setting(dev, index), &mut text);
        // SAFETY: `buf` is a page, far longer than `text`.
        unsafe { core::ptr::copy_nonoverlapping(text.as_ptr().cast(), buf, len) };
        len as isize
    }

    /// # Safety
    ///
    /// Called by sysfs for one of [`Self::SETTINGS`] of a `T` device's
    /// `struct device`, with `buf` holding `count` bytes and a NUL.
    unsafe extern "C" fn setting_store(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
        buf: *const ffi::c_char,
        count: usize,
    ) -> isize {
        // SAFETY: Guaranteed by the caller.
        let (dev, index) = unsafe { Self::setting_of(device, attr) };
        let Some(setting) = T::SETTINGS.get(index) else {
            return EINVAL.to_errno() as isize;
        };
        let value = match setting.kind {
            SettingKind::Switch => {
                let mut on = false;
                // SAFETY: `buf` is NUL-terminated; `on` is a valid `bool`.
                to_result(unsafe { kernel::bindings::kstrtobool(buf, &mut on) }).map(|()| on.into())
            }
            SettingKind::Number => {
                let mut n = 0;
                // SAFETY: `buf` is NUL-terminated (a newline before the NUL
                // is allowed); `n` is a valid `u32`.
                to_result(unsafe { kernel::bindings::kstrtouint(buf, 0, &mut n) }).map(|()| n)
            }
        };
        match value
            .map_err(|_| EINVAL)
            .and_then(|value| T::set_setting(dev, index, value))
        {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// The device and the setting's index of a setting's attribute.
    ///
    /// # Safety
    ///
    /// `device` is a `T` device's, alive while sysfs calls its attribute
    /// `attr`, one of [`Self::SETTINGS`].
    unsafe fn setting_of<'a>(
        device: *mut bindings::device,
        attr: *mut bindings::device_attribute,
    ) -> (&'a Device<T>, usize) {
        // SAFETY: `attr` is the `attr` of a `SettingAttribute`.
        let setting = unsafe {
            &*attr
                .byte_sub(offset_of!(SettingAttribute, attr))
                .cast::<SettingAttribute>()
        };
        // SAFETY: `device` is an `ib_device`'s, and only `T` devices carry
        // this group; sysfs keeps the device alive during the call.
        let dev = unsafe { Device::from_raw(bindings::rroce_rdma_device_to_ibdev(device)) };
        (dev, setting.index)
    }
}

/// Writes `n` and a newline into `text`; returns how many bytes.
fn decimal(mut n: u32, text: &mut [u8; 12]) -> usize {
    let mut digits = [0u8; 10];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for (dst, src) in text.iter_mut().zip(digits[..len].iter().rev()) {
        *dst = *src;
    }
    text[len] = b'\n';
    len + 1
}

/// A `device_attribute` of `name`, `mode` and callbacks.
// With lockdep, `struct attribute` has more fields, which stay zero.
#[allow(clippy::needless_update)]
const fn attribute(
    name: &'static CStr,
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
