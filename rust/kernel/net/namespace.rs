// SPDX-License-Identifier: GPL-2.0

//! Network namespaces (`struct net`), and hearing of their end.
//!
//! Kernel sockets hold no reference on their namespace: whoever keeps one
//! open must close it when its namespace exits, which is what
//! [`PernetRegistration`] reports.
//!
//! C header: [`include/net/net_namespace.h`](srctree/include/net/net_namespace.h)

use super::{with_rtnl, NetDevice};
use crate::bindings;
use core::marker::PhantomData;
use kernel::{error::to_result, prelude::*, types::Opaque};

/// A network namespace, borrowed.
///
/// # Invariants
///
/// The wrapped `net` is alive for the lifetime of the reference.
#[repr(transparent)]
pub(crate) struct Net(Opaque<bindings::net>);

impl Net {
    /// # Safety
    ///
    /// `ptr` points to a live `net` that stays alive for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::net) -> &'a Self {
        // SAFETY: `Net` is a transparent wrapper of `net`, valid for `'a` by
        // the caller's guarantee.
        unsafe { &*ptr.cast() }
    }

    /// The initial namespace, which never ends.
    pub(crate) fn initial() -> &'static Self {
        // SAFETY: `init_net` is a static of the kernel that lives for ever.
        unsafe { Self::from_raw(core::ptr::addr_of_mut!(bindings::init_net)) }
    }

    /// The C pointer, for the abstractions that pass it on.
    pub(crate) fn as_raw(&self) -> *mut bindings::net {
        self.0.get()
    }

    /// A number that names this namespace and no other, ever: unlike its
    /// address, it is not reused when the namespace is gone.
    pub(crate) fn cookie(&self) -> u64 {
        // SAFETY: By the type invariant the namespace is alive; the cookie
        // is written once, before the namespace is visible.
        unsafe { (*self.as_raw()).net_cookie }
    }
}

impl NetDevice {
    /// Calls `f` with the namespace the device is in, under the RTNL lock:
    /// the device cannot move to another one meanwhile, and its namespace
    /// cannot end before the device has left it.
    ///
    /// The caller must not hold RTNL.
    pub(crate) fn with_net<R>(&self, f: impl FnOnce(&Net) -> R) -> R {
        with_rtnl(|| {
            // SAFETY: The device is alive (type invariant); under RTNL it
            // stays in its namespace, which lives while it holds a device.
            f(unsafe { Net::from_raw(bindings::rroce_dev_net(self.as_raw())) })
        })
    }
}

/// Hears of network namespaces that end.
pub(crate) trait NetExit {
    /// Called once for each namespace that ends, after its network devices
    /// have been removed or moved out, and for every namespace when the
    /// [`PernetRegistration`] goes. May sleep.
    fn exit(net: &Net);
}

/// A registration of `T` with the network namespaces (`pernet_operations`);
/// unregistered on drop.
///
/// # Invariants
///
/// `ops` is registered with `register_pernet_subsys` for the life of the
/// object, and pinned.
pub(crate) struct PernetRegistration<T: NetExit> {
    ops: Pin<KBox<Opaque<bindings::pernet_operations>>>,
    _p: PhantomData<T>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl<T: NetExit> Send for PernetRegistration<T> {}
// SAFETY: No method uses `&self`.
unsafe impl<T: NetExit> Sync for PernetRegistration<T> {}

impl<T: NetExit> PernetRegistration<T> {
    /// Registers `T` to hear of every namespace that ends from now on.
    pub(crate) fn new() -> Result<Self> {
        let ops = KBox::pin(
            Opaque::new(bindings::pernet_operations {
                exit: Some(Self::exit),
                ..Default::default()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `ops` is pinned and, once registered, stays so until drop.
        to_result(unsafe { bindings::register_pernet_subsys(ops.get()) })?;
        // INVARIANT: Registered just above.
        Ok(Self {
            ops,
            _p: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the namespace core with a namespace that is ending.
    unsafe extern "C" fn exit(net: *mut bindings::net) {
        // SAFETY: The namespace is alive until its exit calls return.
        T::exit(unsafe { Net::from_raw(net) });
    }
}

impl<T: NetExit> Drop for PernetRegistration<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ops` is registered. This calls
        // `exit` for every namespace and waits for calls in flight.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
    }
}
