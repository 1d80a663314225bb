// SPDX-License-Identifier: GPL-2.0

//! Hearing of a device's removal while its users still see their rings.
//!
//! When a device goes (`rdma link delete`, its netdev gone, the driver
//! unloaded), uverbs destroys every object its processes hold and zaps their
//! ring mappings; a process busy-polling a CQ then reads zeros and waits
//! forever. ib_core removes a device from its clients (`struct ib_client`)
//! in the reverse order of their registration, and uverbs, whose symbols
//! drivers use, registers first: so a client of the driver's own hears of
//! the removal before uverbs, in time to complete outstanding work.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{container::Container, Device, Driver};
use crate::bindings;
use core::marker::PhantomData;
use kernel::{error::to_result, ffi, prelude::*, types::Opaque};

/// An `ib_client` that calls [`Driver::removing`] for the devices of `T`.
///
/// # Invariants
///
/// `client` is registered with `ib_register_client` for the life of the
/// object and pinned in memory.
pub(super) struct RemovalClient<T: Driver> {
    client: Pin<KBox<Opaque<bindings::ib_client>>>,
    _p: PhantomData<T>,
}

// SAFETY: Registration and unregistration may happen on any thread.
unsafe impl<T: Driver> Send for RemovalClient<T> {}
// SAFETY: The object has no methods that use `&self`.
unsafe impl<T: Driver> Sync for RemovalClient<T> {}

impl<T: Driver> RemovalClient<T> {
    pub(super) fn new(name: &'static CStr) -> Result<Self> {
        let client = KBox::pin(
            Opaque::new(bindings::ib_client {
                name: name.as_char_ptr(),
                add: Some(Self::add),
                remove: Some(Self::remove),
                // SAFETY: All-zero is a valid `ib_client`: no callbacks,
                // and the fields ib_core initialises at registration.
                ..unsafe { core::mem::zeroed() }
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `client` is pinned and stays registered until drop.
        to_result(unsafe { bindings::ib_register_client(client.get()) })?;
        // INVARIANT: Registered just above.
        Ok(Self {
            client,
            _p: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with a valid device, of any driver.
    unsafe extern "C" fn add(ib: *mut bindings::ib_device) -> ffi::c_int {
        // An error keeps ib_core from calling `remove` for the device.
        // SAFETY: Guaranteed by the caller.
        if unsafe { Container::<T>::owns(ib) } {
            0
        } else {
            crate::kernel_ext::errno::eopnotsupp().to_errno()
        }
    }

    /// # Safety
    ///
    /// Called by ib_core while it removes `ib`, one of ours (see `add`).
    unsafe extern "C" fn remove(ib: *mut bindings::ib_device, _data: *mut ffi::c_void) {
        // SAFETY: ib_core keeps the device alive while it removes it, and
        // `add` accepted only devices of `T`.
        T::removing(unsafe { Device::from_raw(ib) });
    }
}

impl<T: Driver> Drop for RemovalClient<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the client is registered. This calls
        // `remove` for devices still registered and waits for calls in flight.
        unsafe { bindings::ib_unregister_client(self.client.get()) };
    }
}
