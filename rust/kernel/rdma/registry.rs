// SPDX-License-Identifier: GPL-2.0

//! The devices of one driver: creating and registering them, and removing
//! them all when the driver goes.
//!
//! A driver implements [`Driver`] for its per-device data. [`Registry::add`]
//! allocates an `ib_device` with that data right behind it, fills in the ops
//! table from the trait, and registers it. From then on ib_core owns the
//! device: it is removed by `rdma link delete`, by
//! [`Device::unregister_queued`](super::Device::unregister_queued), or when
//! the [`Registry`] is torn down at module unload, and in each case ib_core
//! calls `dealloc_driver`, where the data is dropped.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{adapter::Adapter, device::Container, stats::StatDescs, Driver};
use crate::{bindings, kernel_ext::net::NetDevice};
use core::ptr::addr_of_mut;
use kernel::{
    error::to_result,
    ffi, new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// What a new device is told about itself besides its data.
pub(crate) struct DeviceParams<'a> {
    /// The device name, e.g. `rroce0`.
    pub(crate) name: &'a CStr,
    /// The netdev of port 1.
    pub(crate) netdev: &'a NetDevice,
    /// `node_desc`, shown by `ibv_devinfo -v`.
    pub(crate) node_desc: &'a CStr,
    /// The node GUID, big-endian.
    pub(crate) node_guid: [u8; 8],
}

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

    /// Creates and registers a device with data `init`.
    pub(crate) fn add(
        self: &Arc<Self>,
        params: &DeviceParams<'_>,
        init: impl PinInit<T, Error>,
    ) -> Result {
        let size = core::mem::size_of::<Container<T>>();
        const { assert!(core::mem::align_of::<Container<T>>() <= 8) };
        // SAFETY: Allocates a zeroed `ib_device` at the start of `size` bytes.
        let ib = unsafe { bindings::_ib_alloc_device(size) };
        if ib.is_null() {
            return Err(ENOMEM);
        }
        let container = ib.cast::<Container<T>>();
        // SAFETY: The fields lie inside the allocation; the work items'
        // functions find the container from them.
        unsafe {
            bindings::rroce_skb_queue_head_init((*container).rx_queue.get());
            bindings::rroce_init_work((*container).rx_work.get(), Some(Adapter::<T>::rx_work));
            bindings::rroce_init_delayed_work((*container).tick.get(), Some(Adapter::<T>::tick));
        }
        // SAFETY: `data` lies inside the allocation and is uninitialised.
        if let Err(e) = unsafe { init.__pinned_init(addr_of_mut!((*container).data)) } {
            // SAFETY: No ops are set yet, so this frees without calling back.
            unsafe { bindings::ib_dealloc_device(ib) };
            return Err(e);
        }
        // SAFETY: `registry` lies inside the allocation and is uninitialised.
        unsafe { addr_of_mut!((*container).registry).write(self.clone()) };

        // From here on, `ib_dealloc_device` runs `dealloc_driver`, which
        // drops `registry` and `data` and delists the device.
        // SAFETY: `ib` is a valid, unregistered device that we own.
        unsafe {
            let mut ops = Adapter::<T>::OPS;
            ops.owner = self.module.as_ptr().cast();
            bindings::ib_set_device_ops(ib, &ops);
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as _;
            (*ib).phys_port_cnt = 1;
            (*ib).num_comp_vectors = 1;
            (*ib).local_dma_lkey = 0;
            (*ib).node_guid = u64::from_ne_bytes(params.node_guid);
            (*ib).uverbs_cmd_mask |= T::UVERBS_CMD_MASK;
            let desc = params.node_desc.as_bytes();
            let n = desc.len().min((*ib).node_desc.len() - 1);
            for (dst, src) in (*ib).node_desc.iter_mut().zip(&desc[..n]) {
                *dst = *src as ffi::c_char;
            }
        }
        self.devices
            .lock()
            .push(RawDevice(ib), GFP_KERNEL)
            .inspect_err(|_| {
                // SAFETY: Not registered; `dealloc_driver` drops the data.
                unsafe { bindings::ib_dealloc_device(ib) };
            })?;

        // SAFETY: `ib` is valid and `netdev` is alive; on failure nothing
        // has been registered, so the device is ours to free.
        let err = unsafe {
            let mut err = bindings::ib_device_set_netdev(ib, params.netdev.as_raw(), 1);
            if err == 0 {
                err = bindings::ib_register_device(
                    ib,
                    params.name.as_char_ptr(),
                    core::ptr::null_mut(),
                );
            }
            if err != 0 {
                bindings::ib_dealloc_device(ib);
            }
            err
        };
        to_result(err)
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
