// SPDX-License-Identifier: GPL-2.0

//! Network devices, the RTNL lock and the netdevice notifier chain.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)

use crate::bindings;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    ffi,
    prelude::*,
    types::{ARef, AlwaysRefCounted, Opaque},
};

/// Runs `f` under the RTNL lock, which serialises changes to network
/// devices. The caller must not hold it.
pub(crate) fn with_rtnl<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: Any sleeping context may take RTNL; the caller holds none.
    unsafe { bindings::rtnl_lock() };
    let result = f();
    // SAFETY: Taken above.
    unsafe { bindings::rtnl_unlock() };
    result
}

/// A network device (`struct net_device`), borrowed.
///
/// # Invariants
///
/// The wrapped `net_device` is registered, or at least alive, for the lifetime
/// of the reference: callers obtain `&NetDevice` only from a held reference
/// (an `ARef<NetDevice>`) or from a callback during which the core holds one.
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

impl NetDevice {
    /// Borrows a C `net_device`.
    ///
    /// # Safety
    ///
    /// `ptr` points to a live `net_device` that stays alive for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // SAFETY: `NetDevice` is a transparent wrapper of `net_device`, and
        // the caller guarantees that `ptr` is valid for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// The C pointer, for the abstractions that pass it on.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface name, e.g. `eth0`.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: By the type invariant the device is alive; `name` is a
        // NUL-terminated array that lives as long as the device.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr()) }
    }

    /// The MTU in bytes.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: By the type invariant the device is alive; `mtu` is a plain
        // integer that the core may change concurrently, hence the volatile read.
        unsafe { core::ptr::addr_of!((*self.as_raw()).mtu).read_volatile() }
    }

    /// Whether this is an Ethernet device (`ARPHRD_ETHER`).
    pub(crate) fn is_ethernet(&self) -> bool {
        // SAFETY: By the type invariant the device is alive; `type_` is set
        // before registration and does not change.
        unsafe { u32::from((*self.as_raw()).type_) == bindings::ARPHRD_ETHER }
    }

    /// Whether the device is a VLAN on top of another one.
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: By the type invariant the device is alive.
        unsafe { bindings::rroce_is_vlan_dev(self.as_raw()) }
    }

    /// Whether the device is administratively up (`IFF_UP`).
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: By the type invariant the device is alive.
        let flags = unsafe { bindings::dev_get_flags(self.as_raw()) };
        flags & bindings::net_device_flags_IFF_UP != 0
    }

    /// Whether the device can pass traffic: running and with a carrier.
    pub(crate) fn is_running_with_carrier(&self) -> bool {
        // SAFETY: By the type invariant the device is alive.
        unsafe { bindings::rroce_netif_oper_up(self.as_raw()) }
    }

    /// The EUI-64 built from the device's MAC address, as RDMA drivers use
    /// for node and port GUIDs (big-endian bytes).
    pub(crate) fn eui64(&self) -> [u8; 8] {
        let mut eui = [0u8; 8];
        // SAFETY: By the type invariant the device is alive; `eui` has room
        // for the 8 bytes the helper writes.
        unsafe { bindings::rroce_netdev_eui64(self.as_raw(), eui.as_mut_ptr()) };
        eui
    }
}

// SAFETY: `dev_hold` and `dev_put` count the references that keep a
// `net_device` alive, and may be called from any thread.
unsafe impl AlwaysRefCounted for NetDevice {
    fn inc_ref(&self) {
        // SAFETY: The device is alive while `self` is borrowed.
        unsafe { bindings::rroce_dev_hold(self.as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::rroce_dev_put(obj.cast().as_ptr()) };
    }
}

impl NetDevice {
    /// Takes over a reference the caller holds; `None` for null.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or points to a `net_device` on which the caller holds
    /// one reference that it hands over.
    pub(crate) unsafe fn from_held(ptr: *mut bindings::net_device) -> Option<ARef<Self>> {
        // SAFETY: The caller hands over its reference; `NetDevice` is a
        // transparent wrapper of `net_device`.
        NonNull::new(ptr).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }
}

/// The netdevice events a [`NetdevNotifier`] sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetdevEvent {
    /// The device came up (`NETDEV_UP`).
    Up,
    /// The device went down (`NETDEV_DOWN`).
    Down,
    /// The carrier or another state changed (`NETDEV_CHANGE`).
    Change,
    /// The MTU changed (`NETDEV_CHANGEMTU`).
    ChangeMtu,
    /// The device is being unregistered (`NETDEV_UNREGISTER`).
    Unregister,
    /// Anything else.
    Other,
}

impl NetdevEvent {
    fn from_raw(event: ffi::c_ulong) -> Self {
        match u32::try_from(event) {
            Ok(bindings::netdev_cmd_NETDEV_UP) => Self::Up,
            Ok(bindings::netdev_cmd_NETDEV_DOWN) => Self::Down,
            Ok(bindings::netdev_cmd_NETDEV_CHANGE) => Self::Change,
            Ok(bindings::netdev_cmd_NETDEV_CHANGEMTU) => Self::ChangeMtu,
            Ok(bindings::netdev_cmd_NETDEV_UNREGISTER) => Self::Unregister,
            _ => Self::Other,
        }
    }
}

/// Reacts to events of every network device in the system.
pub(crate) trait NetdevNotifier {
    /// Called with the RTNL lock held, for every device and event.
    fn notify(event: NetdevEvent, dev: &NetDevice);
}

/// A registered netdevice notifier; unregisters itself on drop.
///
/// # Invariants
///
/// `block` is registered with `register_netdevice_notifier` for the whole
/// life of the object, and is pinned in memory.
pub(crate) struct NotifierRegistration<T: NetdevNotifier> {
    block: Pin<KBox<Opaque<bindings::notifier_block>>>,
    _p: PhantomData<T>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl<T: NetdevNotifier> Send for NotifierRegistration<T> {}
// SAFETY: The object has no methods that use `&self`.
unsafe impl<T: NetdevNotifier> Sync for NotifierRegistration<T> {}

impl<T: NetdevNotifier> NotifierRegistration<T> {
    /// Registers `T` on the netdevice notifier chain. `T::notify` is first
    /// called with `Up` for each device already up (the core replays them).
    pub(crate) fn new() -> Result<Self> {
        let block = KBox::pin(
            Opaque::new(bindings::notifier_block {
                notifier_call: Some(Self::callback),
                ..Default::default()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `block` is pinned and outlives the registration, which the
        // drop below undoes.
        kernel::error::to_result(unsafe { bindings::register_netdevice_notifier(block.get()) })?;
        // INVARIANT: Registered just above.
        Ok(Self {
            block,
            _p: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the netdevice notifier chain with a `netdev_notifier_info`.
    unsafe extern "C" fn callback(
        _block: *mut bindings::notifier_block,
        event: ffi::c_ulong,
        info: *mut ffi::c_void,
    ) -> ffi::c_int {
        // SAFETY: The netdevice notifier chain passes a `netdev_notifier_info`.
        let dev = unsafe { bindings::rroce_netdev_notifier_info_to_dev(info) };
        // SAFETY: The core holds the device for the duration of the callback.
        T::notify(NetdevEvent::from_raw(event), unsafe {
            NetDevice::from_raw(dev)
        });
        bindings::NOTIFY_DONE as ffi::c_int
    }
}

impl<T: NetdevNotifier> Drop for NotifierRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the block is registered.
        unsafe { bindings::unregister_netdevice_notifier(self.block.get()) };
    }
}
