// SPDX-License-Identifier: GPL-2.0

//! A registered RDMA device: the handle a driver's callbacks get.
//!
//! What needs only the `ib_device` lives here. What needs the driver's data
//! behind it (its receive queue, its timer, [`Device::data`]) is in
//! [`container`](super::container), which knows the layout.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::PortEvent;
use crate::{bindings, kernel_ext::net::NetDevice};
use core::{marker::PhantomData, ops::Deref, ptr::NonNull};
use kernel::types::{ARef, Opaque};

/// A registered RDMA device of driver `T`.
///
/// # Invariants
///
/// Wraps the `ib_device` at the start of a `Container<T>` whose `registry`
/// and `data` are initialised; a `&Device<T>` is only handed out while
/// ib_core guarantees the device is not deallocated (during a callback, or
/// while a reference is held: a [`DeviceRef`]).
#[repr(transparent)]
pub(crate) struct Device<T>(Opaque<bindings::ib_device>, PhantomData<T>);

impl<T> Device<T> {
    /// # Safety
    ///
    /// `ptr` is the `ib_device` of a live `Container<T>` for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // SAFETY: `Device<T>` is a transparent wrapper of `ib_device`.
        unsafe { &*ptr.cast() }
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The netdev of `port`, if it is still associated.
    pub(crate) fn netdev(&self, port: u32) -> Option<ARef<NetDevice>> {
        // SAFETY: The device is alive by the type invariant; the core returns
        // a held reference (or null), which `from_held` takes over.
        unsafe { NetDevice::from_held(bindings::ib_device_get_netdev(self.as_raw(), port)) }
    }

    /// Tells ib_core's clients (and through uverbs, userspace) about `port`.
    pub(crate) fn dispatch_port_event(&self, port: u32, event: PortEvent) {
        let mut ev = bindings::ib_event {
            device: self.as_raw(),
            event: event as bindings::ib_event_type,
            ..Default::default()
        };
        ev.element.port_num = port;
        // SAFETY: `ev` is a valid event for a live device.
        unsafe { bindings::ib_dispatch_event(&ev) };
    }

    /// Unregisters the device from a work item, so callers that hold locks
    /// ib_core needs (e.g. RTNL in a netdev notifier) do not deadlock.
    pub(crate) fn unregister_queued(&self) {
        // SAFETY: The device is alive by the type invariant.
        unsafe { bindings::ib_unregister_device_queued(self.as_raw()) };
    }
}

/// A reference on a registered device of driver `T`, as
/// `ib_device_get_by_netdev` gives one. Not made from a `&Device<T>`: a
/// callback's device may be unregistering, its count already zero.
///
/// # Invariants
///
/// `held` is a device that heads a `Container<T>`.
pub(crate) struct DeviceRef<T> {
    held: Held,
    _driver: PhantomData<T>,
}

impl<T> Deref for DeviceRef<T> {
    type Target = Device<T>;

    fn deref(&self) -> &Device<T> {
        // SAFETY: By the type invariant, and `held` keeps the device
        // allocated while `self` is borrowed.
        unsafe { Device::from_raw(self.held.as_raw()) }
    }
}

/// A reference on a device from `ib_device_get_by_netdev`, whichever
/// driver's it is.
///
/// # Invariants
///
/// Owns one reference on a registered `ib_device`.
pub(super) struct Held(NonNull<bindings::ib_device>);

impl Held {
    /// The device of driver id `driver_id` bound to `netdev`, if any.
    pub(super) fn by_netdev(netdev: &NetDevice, driver_id: u32) -> Option<Self> {
        // SAFETY: `netdev` is alive; a returned device comes with a reference.
        let ib = unsafe { bindings::ib_device_get_by_netdev(netdev.as_raw(), driver_id) };
        // INVARIANT: The reference is ours.
        NonNull::new(ib).map(Self)
    }

    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.0.as_ptr()
    }

    /// The reference, as a device of driver `T`.
    ///
    /// # Safety
    ///
    /// The device heads a `Container<T>`.
    pub(super) unsafe fn into_device<T>(self) -> DeviceRef<T> {
        // INVARIANT: Guaranteed by the caller.
        DeviceRef {
            held: self,
            _driver: PhantomData,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}
