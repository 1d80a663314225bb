// SPDX-License-Identifier: GPL-2.0

//! The devices of one driver: creating and registering them, and removing
//! them all when the driver goes.
//!
//! A driver implements [`Driver`] for its per-device data. [`Registry::add`]
//! (in `registry/add.rs`, which installs the ops table) allocates an
//! `ib_device` with that data right behind it, fills in the ops table from
//! the trait, and registers it. From then on ib_core owns the
//! device: it is removed by `rdma link delete`, by
//! [`Device::unregister_queued`](super::Device::unregister_queued), or when
//! the [`Registry`] is torn down at module unload, and in each case ib_core
//! calls `dealloc_driver`, where the data is dropped.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

mod add;

pub(crate) use self::add::DeviceParams;

use super::{stats::StatDescs, Driver};
use crate::bindings;
use core::ptr::addr_of_mut;
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// A `*mut ib_device` kept in a [`Registry`].
///
/// # Invariants
///
/// The device is allocated while it is listed (see [`Registry`]).
struct RawDevice(*mut bindings::ib_device);
// SAFETY: The pointer is only dereferenced under the rules of `Registry`.
unsafe impl Send for RawDevice {}

/// The devices of driver `T`, so that unloading the driver removes them all.
///
/// A device is listed from just before its registration until its
/// `dealloc_driver`, which delists it under the same lock; so a device found
/// in the list under the lock is still allocated.
#[pin_data]
pub(crate) struct Registry<T: Driver> {
    #[pin]
    devices: Mutex<KVec<RawDevice>>,
    #[pin]
    shared: T::Shared,
    module: &'static ThisModule,
    pub(super) stat_descs: StatDescs,
}

impl<T: Driver> Registry<T> {
    /// An empty registry for the devices of `module`.
    pub(crate) fn new(
        module: &'static ThisModule,
        shared: impl PinInit<T::Shared, Error>,
    ) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                devices <- new_mutex!(KVec::new()),
                shared <- shared,
                module,
                stat_descs: StatDescs::new(T::COUNTER_NAMES)?,
            }),
            GFP_KERNEL,
        )
    }

    /// The state all devices share.
    pub(crate) fn shared(&self) -> &T::Shared {
        &self.shared
    }

    /// Unregisters every device, waiting for each to be gone.
    pub(crate) fn remove_all(&self) {
        loop {
            let ib = {
                let devices = self.devices.lock();
                let Some(dev) = devices.first() else { break };
                // Keep the memory alive past the lock: `dealloc_driver` may
                // run concurrently (e.g. from a queued unregistration).
                // SAFETY: Listed under the lock, so still allocated.
                unsafe { bindings::get_device(addr_of_mut!((*dev.0).__bindgen_anon_1.dev)) };
                dev.0
            };
            // SAFETY: We hold a reference on `ib`. Unregistering an already
            // unregistered device is a no-op; either way it is delisted
            // once its `dealloc_driver` has run, which this waits for.
            unsafe {
                bindings::ib_unregister_device(ib);
                bindings::put_device(addr_of_mut!((*ib).__bindgen_anon_1.dev));
            }
        }
    }

    /// The module whose devices these are.
    pub(super) fn module(&self) -> &'static ThisModule {
        self.module
    }

    /// Lists `ib`, a device about to be registered.
    ///
    /// # Safety
    ///
    /// `ib` stays allocated until its `dealloc_driver` delists it.
    pub(super) unsafe fn enlist(&self, ib: *mut bindings::ib_device) -> Result {
        // INVARIANT: Guaranteed by the caller.
        self.devices.lock().push(RawDevice(ib), GFP_KERNEL)?;
        Ok(())
    }

    /// Delists `ib`, from its `dealloc_driver`.
    pub(super) fn delist(&self, ib: *mut bindings::ib_device) {
        let mut devices = self.devices.lock();
        if let Some(i) = devices.iter().position(|d| d.0 == ib) {
            let last = devices.len() - 1;
            devices.as_mut_slice().swap(i, last);
            // SAFETY: Shrinking by one forgets the last element, the device
            // just delisted; `RawDevice` has nothing to drop.
            unsafe { devices.set_len(last) };
        }
    }
}
