// SPDX-License-Identifier: GPL-2.0

//! Registering a device: [`Registry::add`] allocates its [`Container`],
//! installs the ops table [`Adapter`] builds for the driver, and hands the
//! device to ib_core.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::super::{adapter::Adapter, container::Container, notifier, sysfs::Attributes};
use super::{Driver, Registry};
use crate::{bindings, kernel_ext::net::NetDevice};
use core::ptr::addr_of_mut;
use kernel::{error::to_result, ffi, prelude::*, sync::Arc};

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

impl<T: Driver> Registry<T> {
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
            bindings::rroce_skb_queue_head_init((*container).rx_spare.get());
            bindings::rroce_skb_queue_head_init((*container).rx_kept.get());
            bindings::rroce_init_work((*container).rx_work.get(), Some(Container::<T>::rx_work));
            bindings::rroce_init_work(
                (*container).kick_work.get(),
                Some(Container::<T>::kick_work),
            );
            bindings::rroce_init_delayed_work((*container).tick.get(), Some(Container::<T>::tick));
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
            ops.owner = self.module().as_ptr().cast();
            if Attributes::<T>::ANY {
                ops.device_group = Attributes::<T>::GROUP;
            }
            bindings::ib_set_device_ops(ib, &ops);
            (*ib).node_type = bindings::RDMA_NODE_IB_CA as _;
            (*ib).phys_port_cnt = 1;
            (*ib).num_comp_vectors = notifier::comp_vectors() as _;
            (*ib).local_dma_lkey = 0;
            (*ib).node_guid = u64::from_ne_bytes(params.node_guid);
            (*ib).uverbs_cmd_mask |= T::UVERBS_CMD_MASK;
            let desc = params.node_desc.as_bytes();
            let n = desc.len().min((*ib).node_desc.len() - 1);
            for (dst, src) in (*ib).node_desc.iter_mut().zip(&desc[..n]) {
                *dst = *src as ffi::c_char;
            }
        }
        // SAFETY: `dealloc_driver` delists the device before it is freed.
        unsafe { self.enlist(ib) }.inspect_err(|_| {
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
}
