// SPDX-License-Identifier: GPL-2.0

//! The ops table of a driver: its trampolines, or NULL for what it lacks.

use super::{ah::AhObject, cq::CqObject, qp::QpObject, srq::SrqObject, *};

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
    pub(in super::super) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID,
        uverbs_abi_ver: T::UVERBS_ABI_VERSION,
        dealloc_driver: Some(Container::<T>::dealloc_driver),
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        query_pkey: op_if!(T::HAS_QUERY_PKEY, Self::query_pkey),
        modify_device: op_if!(T::HAS_MODIFY_DEVICE, Self::modify_device),
        modify_port: op_if!(T::HAS_MODIFY_PORT, Self::modify_port),
        process_mad: op_if!(T::HAS_PROCESS_MAD, Self::process_mad),
        get_port_immutable: Some(Self::get_port_immutable),
        get_link_layer: Some(Self::get_link_layer),
        alloc_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::alloc_ucontext),
        dealloc_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::dealloc_ucontext),
        disassociate_ucontext: op_if!(T::HAS_ALLOC_UCONTEXT, Self::disassociate_ucontext),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        create_cq: Some(Self::create_cq),
        pre_destroy_cq: Some(Self::pre_destroy_cq),
        destroy_cq: Some(Self::destroy_cq),
        req_notify_cq: Some(Self::req_notify_cq),
        resize_cq: op_if!(T::HAS_RESIZE_CQ, Self::resize_cq),
        rereg_user_mr: op_if!(T::HAS_REREG_USER_MR, Self::rereg_user_mr),
        get_dma_mr: Some(Self::get_dma_mr),
        reg_user_mr: Some(Self::reg_user_mr),
        alloc_mr: op_if!(T::HAS_ALLOC_MR, Self::alloc_mr),
        map_mr_sg: op_if!(T::HAS_MAP_MR_SG, Self::map_mr_sg),
        dereg_mr: Some(Self::dereg_mr),
        advise_mr: op_if!(T::HAS_ADVISE_MR, Self::advise_mr),
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
        query_ah: Some(Self::query_ah),
        post_recv: Some(Self::post_recv),
        poll_cq: Some(Self::poll_cq),
        alloc_hw_port_stats: op_if!(Self::HAS_COUNTERS, Self::alloc_hw_port_stats),
        get_hw_stats: op_if!(Self::HAS_COUNTERS, Self::get_hw_stats),
        counter_bind_qp: op_if!(Self::HAS_QP_COUNTERS, Self::counter_bind_qp),
        counter_unbind_qp: op_if!(Self::HAS_QP_COUNTERS, Self::counter_unbind_qp),
        counter_dealloc: op_if!(Self::HAS_QP_COUNTERS, Self::counter_dealloc),
        counter_alloc_stats: op_if!(Self::HAS_QP_COUNTERS, Self::counter_alloc_stats),
        counter_update_stats: op_if!(Self::HAS_QP_COUNTERS, Self::counter_update_stats),
        destroy_ah: Some(Self::destroy_ah),
        create_srq: op_if!(T::HAS_CREATE_SRQ, Self::create_srq),
        modify_srq: op_if!(T::HAS_MODIFY_SRQ, Self::modify_srq),
        query_srq: op_if!(T::HAS_QUERY_SRQ, Self::query_srq),
        destroy_srq: op_if!(T::HAS_CREATE_SRQ, Self::destroy_srq),
        post_srq_recv: op_if!(T::HAS_CREATE_SRQ, Self::post_srq_recv),
        mmap: op_if!(T::HAS_ALLOC_UCONTEXT, mmap::mmap),
        mmap_free: op_if!(T::HAS_ALLOC_UCONTEXT, mmap::mmap_free),
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

    /// Whether QPs can count apart (`rdma statistic qp`), in sets of the
    /// port's counters.
    const HAS_QP_COUNTERS: bool = Self::HAS_COUNTERS
        && T::HAS_COUNTER_BIND_QP
        && T::HAS_COUNTER_UNBIND_QP
        && T::HAS_COUNTER_VALUES;
}
