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
use core::{marker::PhantomData, ptr::NonNull};
use kernel::types::{ARef, AlwaysRefCounted, Opaque};

/// A registered RDMA device of driver `T`.
///
/// # Invariants
///
/// Wraps the `ib_device` at the start of a `Container<T>` whose `registry`
/// and `data` are initialised; a `&Device<T>` is only handed out while
/// ib_core guarantees the device is not deallocated (during a callback, or
/// while a reference is held: an `ARef<Device<T>>`).
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

// SAFETY: `ib_device`s are counted by their `refcount`, which
// `ib_device_put` drops; the device is not freed before it reaches zero.
unsafe impl<T> AlwaysRefCounted for Device<T> {
    fn inc_ref(&self) {
        // SAFETY: The device is alive while `self` is borrowed, so its count
        // is not zero.
        unsafe { bindings::rroce_ib_device_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::ib_device_put(obj.cast().as_ptr()) };
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
    pub(super) unsafe fn into_device<T>(self) -> ARef<Device<T>> {
        let ib = core::mem::ManuallyDrop::new(self).0;
        // SAFETY: The reference `self` owned passes on; `Device<T>` is a
        // transparent wrapper of `ib_device`, and the caller guarantees the
        // type invariant's container.
        unsafe { ARef::from_raw(ib.cast()) }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference.
        unsafe { bindings::ib_device_put(self.0.as_ptr()) };
    }
}
