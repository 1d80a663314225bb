// SPDX-License-Identifier: GPL-2.0

//! The sysfs attributes a device adds to those of ib_core
//! (`ib_device_ops.device_group`): `parent`, the name of the netdev of its
//! port 1, as rdma_rxe and siw show it and tools such as SPDK's scripts
//! read it.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h)

use crate::bindings;
use core::ptr::{addr_of, null_mut, NonNull};
use kernel::{error::code::ENODEV, ffi};

/// A C attribute table that only C reads, once the module is loaded.
#[repr(transparent)]
struct Shared<T>(T);

// SAFETY: The tables hold pointers to other statics and to functions; no
// one writes them after they are built, and C only reads them.
unsafe impl<T> Sync for Shared<T> {}

// With lockdep, `struct attribute` has more fields, which stay zero.
#[allow(clippy::needless_update)]
static PARENT: Shared<bindings::device_attribute> = Shared(bindings::device_attribute {
    attr: bindings::attribute {
        name: c"parent".as_ptr().cast(),
        mode: 0o444,
        // SAFETY: All-zero is valid for the rest (the lockdep key of a
        // static attribute, which sysfs does not need).
        ..unsafe { core::mem::zeroed() }
    },
    show: Some(parent_show),
    store: None,
});

static ATTRS: Shared<[*mut bindings::attribute; 2]> =
    Shared([addr_of!(PARENT.0.attr).cast_mut(), null_mut()]);

/// The group for `ib_device_ops.device_group`.
static GROUP: Shared<bindings::attribute_group> = Shared(bindings::attribute_group {
    attrs: addr_of!(ATTRS.0)
        .cast::<*mut bindings::attribute>()
        .cast_mut(),
    // SAFETY: All-zero is valid for the rest: no name, no visibility hooks.
    ..unsafe { core::mem::zeroed() }
});

/// The group, as `ib_device_ops.device_group` takes it.
pub(super) fn group() -> *const bindings::attribute_group {
    &GROUP.0
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
