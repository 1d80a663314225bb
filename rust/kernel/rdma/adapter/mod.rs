// SPDX-License-Identifier: GPL-2.0

//! The `ib_device_ops` of a driver: one `unsafe extern "C"` trampoline per
//! callback, which turns ib_core's raw pointers into borrowed Rust types,
//! calls the [`Driver`] method, and maps its `Result` to an errno. This file
//! defines [`Adapter`] and the imports its files share; `ops.rs` holds the
//! ops table, `device.rs` the device-level callbacks, and the other files
//! those of one kind of object each.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

mod ah;
mod cq;
mod device;
mod hw_stats;
mod mr;
mod ops;
mod pd;
mod qp;
mod srq;
mod ucontext;

use super::{
    container::Container,
    kverbs, mmap,
    notifier::{CqNotifier, QpNotifier, SrqNotifier},
    object::Object,
    qp::write_cap,
    srq::{SrqAttr, SrqMask},
    stats,
    ucontext::UserContext,
    work::QpHandle,
    Access, Av, CqAttr, Device, DeviceChange, Driver, LinkLayer, MadAnswer, MrAdvice, MrKeys,
    MrRange, MwType, PortChange, QpChange, QpCqs, QpInit, UData, UserRegion, MAD_SIZE,
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
type MrObject<T> = Object<bindings::ib_mr, <T as Driver>::Mr>;
type MwObject<T> = Object<bindings::ib_mw, <T as Driver>::Mw>;

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// `ib` is a device of ours during one of its callbacks.
    unsafe fn device<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: ib_core keeps the device alive during its callbacks, and
        // only our devices carry these ops.
        unsafe { Device::from_raw(ib) }
    }
}
