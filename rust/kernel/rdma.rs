// SPDX-License-Identifier: GPL-2.0

//! RDMA core (`ib_core`) definitions.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;

/// The driver id rdma-core's rxe provider binds to (`RDMA_DRIVER_RXE`).
pub(crate) const DRIVER_ID_RXE: u32 = bindings::rdma_driver_id_RDMA_DRIVER_RXE;

/// An InfiniBand path MTU (`enum ib_mtu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Mtu {
    /// 256 bytes.
    Mtu256 = bindings::ib_mtu_IB_MTU_256,
    /// 512 bytes.
    Mtu512 = bindings::ib_mtu_IB_MTU_512,
    /// 1024 bytes.
    Mtu1024 = bindings::ib_mtu_IB_MTU_1024,
    /// 2048 bytes.
    Mtu2048 = bindings::ib_mtu_IB_MTU_2048,
    /// 4096 bytes.
    Mtu4096 = bindings::ib_mtu_IB_MTU_4096,
}

impl Mtu {
    /// The largest path MTU whose packets, with all RoCEv2 headers, fit in a
    /// netdev MTU of `netdev_mtu` bytes (ib_core's `iboe_get_mtu`), or `None`
    /// if not even 256 bytes fit.
    pub(crate) fn for_netdev_mtu(netdev_mtu: u32) -> Option<Mtu> {
        let netdev_mtu = i32::try_from(netdev_mtu).unwrap_or(i32::MAX);
        // SAFETY: `iboe_get_mtu` is a pure function of its argument.
        let mtu = unsafe { bindings::rroce_iboe_get_mtu(netdev_mtu) };
        [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096]
            .into_iter()
            .find(|m| *m as bindings::ib_mtu == mtu)
    }

    /// The MTU in bytes, as ib_core computes it.
    pub(crate) fn bytes(self) -> u32 {
        // SAFETY: `ib_mtu_enum_to_int` is a pure function of its argument,
        // and `self` is a valid `enum ib_mtu` by construction.
        let bytes = unsafe { bindings::rroce_ib_mtu_enum_to_int(self as bindings::ib_mtu) };
        // A valid `enum ib_mtu` never maps to the C error value -1.
        bytes.unsigned_abs()
    }
}
