// SPDX-License-Identifier: GPL-2.0

//! The `ib_device_ops` of a driver: one `unsafe extern "C"` trampoline per
//! callback, which turns ib_core's raw pointers into borrowed Rust types,
//! calls the [`Driver`] method, and maps its `Result` to an errno. This file
//! holds the ops table and the device-level callbacks; the per-object ones
//! are in the files beside it, which extend [`Adapter`] and share this
//! file's imports.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

mod ah;
mod cq;
mod hw_stats;
mod mr;
mod pd;
mod qp;
mod srq;
mod ucontext;

use self::{ah::AhSlot, cq::CqSlot, qp::QpSlot, srq::SrqSlot};
use super::{
    container::Container,
    kverbs,
    notifier::{CqNotifier, QpNotifier, SrqNotifier},
    object::Object,
    qp::write_cap,
    srq::{SrqAttr, SrqMask},
    stats,
    ucontext::UserContext,
    work::QpHandle,
    Access, Av, CqAttr, Device, Driver, LinkLayer, MwType, QpChange, QpCqs, QpInit, UData,
    UserRegion,
};
use crate::bindings;
use core::marker::PhantomData;
use kernel::{
    error::{from_result, to_result},
    ffi,
    prelude::*,
    sync::Arc,
};

/// The `ib_device_ops` trampolines of driver `T`.
pub(super) struct Adapter<T: Driver>(PhantomData<T>);

type UContextObject<T> = Object<bindings::ib_ucontext, <T as Driver>::UContext>;
type PdObject<T> = Object<bindings::ib_pd, <T as Driver>::Pd>;
type CqObject<T> = Object<bindings::ib_cq, CqSlot<T>>;
type MrObject<T> = Object<bindings::ib_mr, <T as Driver>::Mr>;
type MwObject<T> = Object<bindings::ib_mw, <T as Driver>::Mw>;
type QpObject<T> = Object<bindings::ib_qp, QpSlot<T>>;
type AhObject<T> = Object<bindings::ib_ah, AhSlot<T>>;
type SrqObject<T> = Object<bindings::ib_srq, SrqSlot<T>>;

/// `Some(f)` if the driver implements the method `has` names, else `None`:
/// an op the driver leaves out stays NULL.
macro_rules! op_if {
    ($has:expr, $f:expr) => {
        if $has {
            Some($f)
        } else {
            None
        }
    };
}

impl<T: Driver> Adapter<T> {
    pub(super) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VERSION,
        dealloc_driver: Some(Container::<T>::dealloc_driver),
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        query_pkey: op_if!(T::HAS_QUERY_PKEY, Self::query_pkey),
        get_port_immutable: Some(Self::get_port_immutable),
        get_link_layer: Some(Self::get_link_layer),
        alloc_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::alloc_ucontext),
        dealloc_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::dealloc_ucontext),
        disassociate_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::disassociate_ucontext),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        create_cq: Some(Self::create_cq),
        destroy_cq: Some(Self::destroy_cq),
        req_notify_cq: Some(Self::req_notify_cq),
        resize_cq: op_if!(T::HAS_RESIZE_CQ, Self::resize_cq),
        rereg_user_mr: op_if!(T::HAS_REREG_USER_MR, Self::rereg_user_mr),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        alloc_mr: op_if!(T::HAS_ALLOC_MR, Self::alloc_mr),
        map_mr_sg: op_if!(T::HAS_MAP_MR_SG, Self::map_mr_sg),
        dereg_mr: Some(Self::dereg_mr),
        alloc_mw: op_if!(T::HAS_ALLOC_MW, Self::alloc_mw),
        dealloc_mw: op_if!(T::HAS_ALLOC_MW, Self::dealloc_mw),
        create_qp: Some(Self::create_qp),
        destroy_qp: Some(Self::destroy_qp),
        modify_qp: Some(Self::modify_qp),
        query_qp: op_if!(T::HAS_QUERY_QP, Self::query_qp),
        attach_mcast: op_if!(T::HAS_ATTACH_MCAST, Self::attach_mcast),
        detach_mcast: op_if!(T::HAS_DETACH_MCAST, Self::detach_mcast),
        post_send: Some(Self::post_send),
        create_user_ah: op_if!(T::HAS_CREATE_USER_AH, Self::create_user_ah),
        create_ah: Some(Self::create_ah),
        post_recv: Some(Self::post_recv),
        poll_cq: Some(Self::poll_cq),
        alloc_hw_port_stats: op_if!(Self::HAS_COUNTERS, Self::alloc_hw_port_stats),
        get_hw_stats: op_if!(Self::HAS_COUNTERS, Self::get_hw_stats),
        destroy_ah: Some(Self::destroy_ah),
        create_srq: op_if!(T::HAS_CREATE_SRQ, Self::create_srq),
        modify_srq: op_if!(T::HAS_MODIFY_SRQ, Self::modify_srq),
        query_srq: op_if!(T::HAS_QUERY_SRQ, Self::query_srq),
        destroy_srq: op_if!(T::HAS_CREATE_SRQ, Self::destroy_srq),
        post_srq_recv: op_if!(T::HAS_CREATE_SRQ, Self::post_srq_recv),
        mmap: op_if!(T::HAS_ALLOC_UCONTEXT, super::mmap::mmap),
        mmap_free: op_if!(T::HAS_ALLOC_UCONTEXT, super::mmap::mmap_free),
        size_ib_ucontext: UContextObject::<T>::SIZE,
        size_ib_pd: PdObject::<T>::SIZE,
        size_ib_cq: CqObject::<T>::SIZE,
        size_ib_qp: QpObject::<T>::SIZE,
        size_ib_ah: AhObject::<T>::SIZE,
        size_ib_srq: SrqObject::<T>::SIZE,
        size_ib_mw: MwObject::<T>::SIZE,
        // SAFETY: All-zero is a valid `ib_device_ops`: no callbacks.
        ..unsafe { core::mem::zeroed() }
    };

    /// Whether the device has port counters: their names and values.
    const HAS_COUNTERS: bool = T::HAS_COUNTERS && !T::COUNTER_NAMES.is_empty();

    /// # Safety
    ///
    /// `ib` is a device of ours during one of its callbacks.
    unsafe fn device<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: ib_core keeps the device alive during its callbacks, and
        // only our devices carry these ops.
        unsafe { Device::from_raw(ib) }
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_device(
        ib: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours with a valid (or null) udata.
            let (dev, udata) = unsafe { (Self::device(ib), UData::from_raw(udata)) };
            let a = T::query_device(dev, &udata)?;
            // SAFETY: `attr` is valid for writes during the callback.
            unsafe { a.write_to(&mut *attr) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_port(
        ib: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let dev = unsafe { Self::device(ib) };
            let a = T::query_port(dev, port)?;
            // SAFETY: `attr` is valid for writes during the callback.
            let attr = unsafe { &mut *attr };
            a.write_to(attr);
            if matches!(T::LINK_LAYER, LinkLayer::Ethernet) {
                // Fails once the netdev is gone; a port without one has no
                // speed to report, and the driver has said it is down.
                // SAFETY: The device is ours and alive; the outputs are fields of `attr`.
                let _ = unsafe {
                    bindings::ib_get_eth_speed(
                        ib,
                        port,
                        &mut attr.active_speed,
                        &mut attr.active_width,
                    )
                };
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn query_pkey(
        ib: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours; `pkey` is valid for writes.
            unsafe { *pkey = T::query_pkey(Self::device(ib), port, index)? };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn get_port_immutable(
        ib: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> ffi::c_int {
        from_result(|| {
            // SAFETY: A callback of ours.
            let p = T::port_immutable(unsafe { Self::device(ib) }, port)?;
            // SAFETY: `imm` is valid for writes during the callback.
            unsafe { p.write_to(&mut *imm) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core, with valid arguments, for one of our devices.
    pub(super) unsafe extern "C" fn get_link_layer(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> bindings::rdma_link_layer {
        T::LINK_LAYER as bindings::rdma_link_layer
    }
}
