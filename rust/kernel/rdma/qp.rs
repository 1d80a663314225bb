// SPDX-License-Identifier: GPL-2.0

//! Queue pair creation attributes (`struct ib_qp_init_attr`).
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;

/// The transport service of a QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpType {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// Anything else (GSI, XRC, raw packet, ...), by its C value.
    Other(u32),
}

impl QpType {
    fn from_raw(t: bindings::ib_qp_type) -> Self {
        match t {
            bindings::ib_qp_type_IB_QPT_RC => Self::Rc,
            bindings::ib_qp_type_IB_QPT_UC => Self::Uc,
            bindings::ib_qp_type_IB_QPT_UD => Self::Ud,
            other => Self::Other(other),
        }
    }
}

/// The sizes of a QP's queues (`struct ib_qp_cap`): asked for on creation,
/// and replaced by what the driver actually provides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCaps {
    /// Send work requests.
    pub(crate) max_send_wr: u32,
    /// Receive work requests.
    pub(crate) max_recv_wr: u32,
    /// Scatter/gather entries per send work request.
    pub(crate) max_send_sge: u32,
    /// Scatter/gather entries per receive work request.
    pub(crate) max_recv_sge: u32,
    /// Bytes of inline data per send work request.
    pub(crate) max_inline_data: u32,
}

/// What a QP is created with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpInit {
    /// The transport service.
    pub(crate) qp_type: QpType,
    /// Queue sizes.
    pub(crate) caps: QpCaps,
    /// Whether receives come from a shared receive queue.
    pub(crate) has_srq: bool,
    /// `IB_QP_CREATE_*` flags.
    pub(crate) create_flags: u32,
}

impl QpInit {
    /// Reads the C attributes.
    ///
    /// # Safety
    ///
    /// `a` points to valid attributes.
    pub(super) unsafe fn from_raw(a: *const bindings::ib_qp_init_attr) -> Self {
        // SAFETY: Guaranteed by the caller.
        let a = unsafe { &*a };
        Self {
            qp_type: QpType::from_raw(a.qp_type),
            caps: QpCaps {
                max_send_wr: a.cap.max_send_wr,
                max_recv_wr: a.cap.max_recv_wr,
                max_send_sge: a.cap.max_send_sge,
                max_recv_sge: a.cap.max_recv_sge,
                max_inline_data: a.cap.max_inline_data,
            },
            has_srq: !a.srq.is_null(),
            create_flags: a.create_flags,
        }
    }

    /// Reports `caps` back through the C attributes.
    ///
    /// # Safety
    ///
    /// `a` points to valid, writable attributes.
    pub(super) unsafe fn write_caps(caps: &QpCaps, a: *mut bindings::ib_qp_init_attr) {
        // SAFETY: Guaranteed by the caller.
        let cap = unsafe { &mut (*a).cap };
        cap.max_send_wr = caps.max_send_wr;
        cap.max_recv_wr = caps.max_recv_wr;
        cap.max_send_sge = caps.max_send_sge;
        cap.max_recv_sge = caps.max_recv_sge;
        cap.max_inline_data = caps.max_inline_data;
    }
}
