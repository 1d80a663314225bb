// SPDX-License-Identifier: GPL-2.0

//! `rdma link add NAME type TYPE netdev NETDEV`: the RDMA netlink link ops.
//!
//! C header: [`include/rdma/rdma_netlink.h`](srctree/include/rdma/rdma_netlink.h)

use super::{removal::RemovalClient, Driver, Registry};
use crate::{
    bindings,
    kernel_ext::net::{
        namespace::{Net, NetExit, PernetRegistration},
        NetDevice,
    },
};
use core::{
    marker::PhantomData,
    ptr::null_mut,
    sync::atomic::{AtomicPtr, Ordering},
};
use kernel::{
    error::from_result,
    ffi,
    prelude::*,
    sync::{Arc, ArcBorrow},
    types::Opaque,
};

/// A driver whose devices `rdma link add` creates.
pub(crate) trait NewLink: Driver {
    /// The link type, as in `rdma link add ... type TYPE`.
    const TYPE: &'static CStr;

    /// Where the driver's [`Registration`] is found from the `newlink`
    /// callback, which has no context argument: a `static` of the driver.
    fn global() -> &'static Global<Self>;

    /// Creates device `name` on `netdev` and adds it to `devices`. ib_core
    /// has already checked that `netdev` exists and that `name` is free.
    fn new_link(devices: &Arc<Registry<Self>>, name: &CStr, netdev: &NetDevice) -> Result;

    /// Network namespace `net` ends: its devices have been removed or moved
    /// out, though the devices of the driver that were on them may still be
    /// on their way out. Whatever the driver keeps in `net` goes now.
    fn net_exit(devices: &Registry<Self>, net: &Net);
}

/// The registry of a driver's devices while its [`Registration`] exists.
///
/// # Invariants
///
/// Null, or a pointer from `Arc::into_raw` that owns one reference, set and
/// cleared by a [`Registration<T>`].
pub(crate) struct Global<T: Driver>(AtomicPtr<Registry<T>>);

impl<T: Driver> Global<T> {
    /// An empty slot, for a `static`.
    pub(crate) const fn new() -> Self {
        Self(AtomicPtr::new(null_mut()))
    }
}

/// The driver's devices and its link type, registered together, and the
/// driver's ear for ending network namespaces; dropping it unregisters the
/// link type, then removes every device of the driver.
pub(crate) struct Registration<T: NewLink> {
    devices: Arc<Registry<T>>,
    removal: Option<RemovalClient<T>>,
    net_exits: Option<PernetRegistration<NetExits<T>>>,
    link: Option<LinkRegistration<T>>,
}

impl<T: NewLink> Registration<T> {
    /// Registers link type `T::TYPE` for the devices of `module`, which
    /// share `shared`.
    pub(crate) fn new(
        module: &'static ThisModule,
        shared: impl PinInit<T::Shared, Error>,
    ) -> Result<Self> {
        let devices = Registry::new(module, shared)?;
        let ptr = Arc::into_raw(devices.clone()).cast_mut();
        // INVARIANT: The slot takes over the reference `into_raw` leaked.
        if let Err(ptr) =
            T::global()
                .0
                .compare_exchange(null_mut(), ptr, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: Not stored: give the reference back.
            drop(unsafe { Arc::from_raw(ptr) });
            return Err(EBUSY);
        }
        // From here on, a failure drops `this`, which undoes what was done.
        let mut this = Self {
            devices,
            removal: None,
            net_exits: None,
            link: None,
        };
        // Before the link type: every device is to hear of its removal.
        this.removal = Some(RemovalClient::new(T::TYPE)?);
        this.net_exits = Some(PernetRegistration::new()?);
        this.link = Some(LinkRegistration::new()?);
        Ok(this)
    }
}

impl<T: Driver> Global<T> {
    fn clear(&self) {
        let ptr = self.0.swap(null_mut(), Ordering::AcqRel);
        if !ptr.is_null() {
            // SAFETY: By the type invariant the slot owned this reference.
            drop(unsafe { Arc::from_raw(ptr) });
        }
    }
}

impl<T: NewLink> Drop for Registration<T> {
    fn drop(&mut self) {
        // No new devices: this waits for `newlink` calls in flight.
        drop(self.link.take());
        self.devices.remove_all();
        drop(self.net_exits.take());
        drop(self.removal.take());
        T::global().clear();
    }
}

/// A registered link type; unregisters itself on drop.
///
/// # Invariants
///
/// `ops` is registered with `rdma_link_register` for the life of the object
/// and pinned in memory.
struct LinkRegistration<T: NewLink> {
    ops: Pin<KBox<Opaque<bindings::rdma_link_ops>>>,
    _p: PhantomData<T>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl<T: NewLink> Send for LinkRegistration<T> {}
// SAFETY: The object has no methods that use `&self`.
unsafe impl<T: NewLink> Sync for LinkRegistration<T> {}

impl<T: NewLink> LinkRegistration<T> {
    fn new() -> Result<Self> {
        let ops = KBox::pin(
            Opaque::new(bindings::rdma_link_ops {
                type_: T::TYPE.as_char_ptr(),
                newlink: Some(Self::newlink),
                ..Default::default()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `ops` is pinned and stays registered until drop.
        unsafe { bindings::rdma_link_register(ops.get()) };
        // INVARIANT: Registered just above.
        Ok(Self {
            ops,
            _p: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by ib_core's netlink handler with a valid name and netdev.
    unsafe extern "C" fn newlink(
        name: *const ffi::c_char,
        netdev: *mut bindings::net_device,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: ib_core passes a NUL-terminated name that lives for the call.
            let name = unsafe { CStr::from_char_ptr(name) };
            // SAFETY: ib_core holds the netdev for the duration of the call.
            let netdev = unsafe { NetDevice::from_raw(netdev) };
            let ptr = T::global().0.load(Ordering::Acquire);
            if ptr.is_null() {
                return Err(ENODEV);
            }
            // SAFETY: By the invariant of `Global`, `ptr` came from
            // `Arc::into_raw` and its reference is only given back after
            // `rdma_link_unregister` has waited for this call.
            let devices: Arc<Registry<T>> = unsafe { ArcBorrow::from_raw(ptr) }.into();
            T::new_link(&devices, name, netdev)?;
            Ok(0)
        })
    }
}

/// Passes the end of each network namespace on to [`NewLink::net_exit`].
struct NetExits<T>(PhantomData<T>);

impl<T: NewLink> NetExit for NetExits<T> {
    fn exit(net: &Net) {
        let ptr = T::global().0.load(Ordering::Acquire);
        if ptr.is_null() {
            return;
        }
        // SAFETY: By the invariant of `Global`, `ptr` came from
        // `Arc::into_raw` and its reference is only given back after the
        // `PernetRegistration` that calls this has been dropped, which waits
        // for calls in flight.
        let devices = unsafe { ArcBorrow::from_raw(ptr) };
        T::net_exit(&devices, net);
    }
}

impl<T: NewLink> Drop for LinkRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the ops are registered. This waits
        // for newlink calls in flight.
        unsafe { bindings::rdma_link_unregister(self.ops.get()) };
    }
}
