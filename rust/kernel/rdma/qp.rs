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
    /// The general services QP, QP1 (ib_mad's, for the CM): UD on QPN 1.
    Gsi,
    /// Anything else (GSI, XRC, raw packet, ...), by its C value.
    Other(u32),
}

impl QpType {
    /// Whether it carries datagrams (UD or GSI).
    pub(crate) fn is_ud(self) -> bool {
        matches!(self, Self::Ud | Self::Gsi)
    }

    fn from_raw(t: bindings::ib_qp_type) -> Self {
        match t {
            bindings::ib_qp_type_IB_QPT_RC => Self::Rc,
            bindings::ib_qp_type_IB_QPT_UC => Self::Uc,
            bindings::ib_qp_type_IB_QPT_UD => Self::Ud,
            bindings::ib_qp_type_IB_QPT_GSI => Self::Gsi,
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

/// What a query reports of a QP.
pub(crate) struct QpQuery {
    /// Its attributes.
    pub(crate) attr: QpAttr,
    /// The address vector its packets go to (RC and UC).
    pub(crate) av: Av,
    /// Its capacities.
    pub(crate) caps: QpCaps,
    /// Whether every send request completes, signalled or not.
    pub(crate) sq_sig_all: bool,
}

/// What a QP is created with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpInit {
    /// The transport service.
    pub(crate) qp_type: QpType,
    /// Queue sizes.
    pub(crate) caps: QpCaps,
    /// `IB_QP_CREATE_*` flags.
    pub(crate) create_flags: u32,
    /// Whether every send request completes, signalled or not.
    pub(crate) sq_sig_all: bool,
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
            sq_sig_all: a.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
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
        write_cap(caps, unsafe { &mut (*a).cap });
    }
}

/// A QP state (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum QpState {
    /// Just created, or reset.
    #[default]
    Reset = bindings::ib_qp_state_IB_QPS_RESET,
    /// Receives may be posted.
    Init = bindings::ib_qp_state_IB_QPS_INIT,
    /// Ready to receive.
    Rtr = bindings::ib_qp_state_IB_QPS_RTR,
    /// Ready to send.
    Rts = bindings::ib_qp_state_IB_QPS_RTS,
    /// Send queue drained.
    Sqd = bindings::ib_qp_state_IB_QPS_SQD,
    /// Send queue error.
    Sqe = bindings::ib_qp_state_IB_QPS_SQE,
    /// Error.
    Err = bindings::ib_qp_state_IB_QPS_ERR,
}

impl QpState {
    fn from_raw(s: bindings::ib_qp_state) -> Option<Self> {
        [
            Self::Reset,
            Self::Init,
            Self::Rtr,
            Self::Rts,
            Self::Sqd,
            Self::Sqe,
            Self::Err,
        ]
        .into_iter()
        .find(|x| *x as u32 == s)
    }
}

/// Which attributes a modify sets (`enum ib_qp_attr_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QpMask(u32);

impl QpMask {
    /// `state`.
    pub(crate) const STATE: Self = Self(bindings::ib_qp_attr_mask_IB_QP_STATE);
    /// The current state the caller believes in.
    pub(crate) const CUR_STATE: Self = Self(bindings::ib_qp_attr_mask_IB_QP_CUR_STATE);
    /// `access`.
    pub(crate) const ACCESS_FLAGS: Self = Self(bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS);
    /// `pkey_index`.
    pub(crate) const PKEY_INDEX: Self = Self(bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX);
    /// `port`.
    pub(crate) const PORT: Self = Self(bindings::ib_qp_attr_mask_IB_QP_PORT);
    /// `qkey`.
    pub(crate) const QKEY: Self = Self(bindings::ib_qp_attr_mask_IB_QP_QKEY);
    /// The address vector (not kept yet: it comes with the data path).
    pub(crate) const AV: Self = Self(bindings::ib_qp_attr_mask_IB_QP_AV);
    /// `path_mtu`.
    pub(crate) const PATH_MTU: Self = Self(bindings::ib_qp_attr_mask_IB_QP_PATH_MTU);
    /// `timeout`.
    pub(crate) const TIMEOUT: Self = Self(bindings::ib_qp_attr_mask_IB_QP_TIMEOUT);
    /// `retry_cnt`.
    pub(crate) const RETRY_CNT: Self = Self(bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT);
    /// `rnr_retry`.
    pub(crate) const RNR_RETRY: Self = Self(bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY);
    /// `rq_psn`.
    pub(crate) const RQ_PSN: Self = Self(bindings::ib_qp_attr_mask_IB_QP_RQ_PSN);
    /// `max_rd_atomic`.
    pub(crate) const MAX_QP_RD_ATOMIC: Self =
        Self(bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC);
    /// `min_rnr_timer`.
    pub(crate) const MIN_RNR_TIMER: Self = Self(bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER);
    /// `sq_psn`.
    pub(crate) const SQ_PSN: Self = Self(bindings::ib_qp_attr_mask_IB_QP_SQ_PSN);
    /// `max_dest_rd_atomic`.
    pub(crate) const MAX_DEST_RD_ATOMIC: Self =
        Self(bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC);
    /// `dest_qpn`.
    pub(crate) const DEST_QPN: Self = Self(bindings::ib_qp_attr_mask_IB_QP_DEST_QPN);

    /// Whether `bit` is set.
    pub(crate) fn has(self, bit: Self) -> bool {
        self.0 & bit.0 != 0
    }

    /// Whether no bit outside `allowed` is set.
    pub(crate) fn within(self, allowed: &[Self]) -> bool {
        let all = allowed.iter().fold(0, |acc, b| acc | b.0);
        self.0 & !all == 0
    }
}

/// A QP number (`qp_num`, `dest_qp_num`, `src_qp`): 24 bits on the wire,
/// given its own type so that it is taken for nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Qpn(u32);

impl Qpn {
    /// The QP number `n`, as the wire, a ring or ib_core gave it.
    pub(crate) const fn new(n: u32) -> Self {
        Self(n)
    }

    /// The number, for the wire, a ring or ib_core.
    pub(crate) const fn get(self) -> u32 {
        self.0
    }
}

/// The attributes of a QP that modify sets and query reports.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpAttr {
    pub(crate) state: QpState,
    /// `IB_ACCESS_*` rights for remote requests.
    pub(crate) access: u32,
    pub(crate) pkey_index: u16,
    pub(crate) port: u32,
    pub(crate) qkey: u32,
    /// `enum ib_mtu`, as given.
    pub(crate) path_mtu: u32,
    pub(crate) dest_qpn: Qpn,
    pub(crate) rq_psn: u32,
    pub(crate) sq_psn: u32,
    pub(crate) max_rd_atomic: u8,
    pub(crate) max_dest_rd_atomic: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) timeout: u8,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
}

/// A RoCEv2 address vector: where a QP's (or an AH's) packets go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Av {
    /// The source GID: an IPv6 or IPv4-mapped address of the netdev.
    pub(crate) sgid: [u8; 16],
    /// The destination GID.
    pub(crate) dgid: [u8; 16],
    /// Its index in the GID table, as given (for query).
    pub(crate) sgid_index: u8,
    pub(crate) flow_label: u32,
    pub(crate) hop_limit: u8,
    pub(crate) traffic_class: u8,
}

impl Av {
    /// Reads a RoCE address vector; `EINVAL` without a source GID.
    ///
    /// # Safety
    ///
    /// `ah` points to valid attributes whose `sgid_attr`, if set, is valid.
    pub(super) unsafe fn from_raw(ah: &bindings::rdma_ah_attr) -> kernel::error::Result<Self> {
        let grh = &ah.grh;
        if grh.sgid_attr.is_null() {
            return Err(kernel::error::code::EINVAL);
        }
        // SAFETY: Guaranteed by the caller; `ib_gid` is a union of plain
        // bytes, so `raw` is always initialised.
        let (sgid, dgid) = unsafe { ((*grh.sgid_attr).gid.raw, grh.dgid.raw) };
        Ok(Self {
            sgid,
            dgid,
            sgid_index: grh.sgid_index,
            flow_label: grh.flow_label,
            hop_limit: grh.hop_limit,
            traffic_class: grh.traffic_class,
        })
    }

    /// Writes the vector into `ah` as a RoCE address of `port` with a GRH.
    /// The source GID's attribute is left as it is: ib_core's query paths
    /// clear it and expect the driver to leave it.
    pub(super) fn write_to(&self, ah: &mut bindings::rdma_ah_attr, port: u32) {
        ah.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
        ah.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
        ah.port_num = port;
        let grh = &mut ah.grh;
        grh.dgid.raw = self.dgid;
        grh.sgid_index = self.sgid_index;
        grh.flow_label = self.flow_label;
        grh.hop_limit = self.hop_limit;
        grh.traffic_class = self.traffic_class;
    }
}

/// A requested modification: the attributes named by `mask`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpChange {
    pub(crate) mask: QpMask,
    pub(crate) attr: QpAttr,
    /// The address vector (with `QpMask::AV`).
    pub(crate) av: Option<Av>,
    /// The current state the caller believes in (with `QpMask::CUR_STATE`).
    pub(crate) cur_state: Option<QpState>,
}

impl QpChange {
    /// Reads the C attributes; `EINVAL` for a state that does not exist.
    ///
    /// # Safety
    ///
    /// `a` points to valid attributes.
    pub(super) unsafe fn from_raw(
        a: *const bindings::ib_qp_attr,
        mask: u32,
    ) -> kernel::error::Result<Self> {
        use kernel::error::code::EINVAL;
        // SAFETY: Guaranteed by the caller.
        let a = unsafe { &*a };
        let mask = QpMask(mask);
        let state = |s, bit| {
            if mask.has(bit) {
                QpState::from_raw(s).map(Some).ok_or(EINVAL)
            } else {
                Ok(None)
            }
        };
        Ok(Self {
            mask,
            attr: QpAttr {
                state: state(a.qp_state, QpMask::STATE)?.unwrap_or_default(),
                access: a.qp_access_flags as u32,
                pkey_index: a.pkey_index,
                port: a.port_num,
                qkey: a.qkey,
                path_mtu: a.path_mtu,
                dest_qpn: Qpn::new(a.dest_qp_num),
                rq_psn: a.rq_psn,
                sq_psn: a.sq_psn,
                max_rd_atomic: a.max_rd_atomic,
                max_dest_rd_atomic: a.max_dest_rd_atomic,
                min_rnr_timer: a.min_rnr_timer,
                timeout: a.timeout,
                retry_cnt: a.retry_cnt,
                rnr_retry: a.rnr_retry,
            },
            cur_state: state(a.cur_qp_state, QpMask::CUR_STATE)?,
            av: if mask.has(QpMask::AV) {
                // SAFETY: With `IB_QP_AV`, ib_core resolved the source GID.
                Some(unsafe { Av::from_raw(&a.ah_attr) }?)
            } else {
                None
            },
        })
    }

    /// Whether ib_core's table of the QP state machine (IBA 10.3) allows
    /// going from `cur` to this change's state with exactly these attributes.
    pub(crate) fn transition_ok(&self, cur: QpState, qp_type: QpType) -> bool {
        let next = if self.mask.has(QpMask::STATE) {
            self.attr.state
        } else {
            cur
        };
        let qp_type = match qp_type {
            QpType::Rc => bindings::ib_qp_type_IB_QPT_RC,
            QpType::Uc => bindings::ib_qp_type_IB_QPT_UC,
            QpType::Ud => bindings::ib_qp_type_IB_QPT_UD,
            QpType::Gsi => bindings::ib_qp_type_IB_QPT_GSI,
            QpType::Other(t) => t,
        };
        // SAFETY: A pure function of its arguments.
        unsafe { bindings::ib_modify_qp_is_ok(cur as _, next as _, qp_type, self.mask.0) }
    }
}

impl QpAttr {
    /// Takes over the attributes `change` sets.
    pub(crate) fn apply(&mut self, change: &QpChange) {
        let (m, a) = (change.mask, &change.attr);
        let set = |bit| m.has(bit);
        if set(QpMask::STATE) {
            self.state = a.state;
        }
        if set(QpMask::ACCESS_FLAGS) {
            self.access = a.access;
        }
        if set(QpMask::PKEY_INDEX) {
            self.pkey_index = a.pkey_index;
        }
        if set(QpMask::PORT) {
            self.port = a.port;
        }
        if set(QpMask::QKEY) {
            self.qkey = a.qkey;
        }
        if set(QpMask::PATH_MTU) {
            self.path_mtu = a.path_mtu;
        }
        if set(QpMask::DEST_QPN) {
            self.dest_qpn = a.dest_qpn;
        }
        if set(QpMask::RQ_PSN) {
            self.rq_psn = a.rq_psn;
        }
        if set(QpMask::SQ_PSN) {
            self.sq_psn = a.sq_psn;
        }
        if set(QpMask::MAX_QP_RD_ATOMIC) {
            self.max_rd_atomic = a.max_rd_atomic;
        }
        if set(QpMask::MAX_DEST_RD_ATOMIC) {
            self.max_dest_rd_atomic = a.max_dest_rd_atomic;
        }
        if set(QpMask::MIN_RNR_TIMER) {
            self.min_rnr_timer = a.min_rnr_timer;
        }
        if set(QpMask::TIMEOUT) {
            self.timeout = a.timeout;
        }
        if set(QpMask::RETRY_CNT) {
            self.retry_cnt = a.retry_cnt;
        }
        if set(QpMask::RNR_RETRY) {
            self.rnr_retry = a.rnr_retry;
        }
    }

    /// Reports the attributes through the C structure.
    pub(super) fn write_to(&self, a: &mut bindings::ib_qp_attr) {
        a.qp_state = self.state as _;
        a.cur_qp_state = self.state as _;
        a.qp_access_flags = self.access as _;
        a.pkey_index = self.pkey_index;
        a.port_num = self.port;
        a.qkey = self.qkey;
        a.path_mtu = self.path_mtu;
        a.dest_qp_num = self.dest_qpn.get();
        a.rq_psn = self.rq_psn;
        a.sq_psn = self.sq_psn;
        a.max_rd_atomic = self.max_rd_atomic;
        a.max_dest_rd_atomic = self.max_dest_rd_atomic;
        a.min_rnr_timer = self.min_rnr_timer;
        a.timeout = self.timeout;
        a.retry_cnt = self.retry_cnt;
        a.rnr_retry = self.rnr_retry;
    }
}

/// Writes `caps` to a C `ib_qp_cap`.
pub(super) fn write_cap(caps: &QpCaps, cap: &mut bindings::ib_qp_cap) {
    cap.max_send_wr = caps.max_send_wr;
    cap.max_recv_wr = caps.max_recv_wr;
    cap.max_send_sge = caps.max_send_sge;
    cap.max_recv_sge = caps.max_recv_sge;
    cap.max_inline_data = caps.max_inline_data;
}
