// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: a send ring and a receive ring shared with the process,
//! which posts work requests into them.

use crate::device::RroceDevice;
use crate::device::PORT;
use crate::index::IndexTable;
use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{
        rxe_abi::{CreateQpResp, RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE},
        Access, Device, Mtu, QpAttr, QpCaps, QpChange, QpInit, QpMask, QpState, QpType, UData,
        UserContext,
    },
};
use crate::proto::psn::Psn;
use crate::ring::UserRing;
use kernel::{new_mutex, prelude::*, sync::Mutex};

/// QP numbers: 0 and 1 are the special QPs of IB, and numbers up to 15 stay
/// free as in the C rxe.
const FIRST_QPN: u32 = 16;
const LAST_QPN: u32 = (1 << 16) - 1;
/// The most QPs a device holds.
pub(crate) const MAX_QP: u32 = LAST_QPN - FIRST_QPN + 1;
/// The most work requests per queue: a 16 Ki-slot ring.
pub(crate) const MAX_QP_WR: u32 = (1 << 14) - 1;
/// The most scatter/gather entries per work request, as the C rxe.
pub(crate) const MAX_SGE: u32 = 32;
/// The most inline data per send: the room of `MAX_SGE` entries.
pub(crate) const MAX_INLINE_DATA: u32 = MAX_SGE * SGE_SIZE;

/// The most RDMA READ and atomic requests in flight per QP, each way.
pub(crate) const MAX_RD_ATOMIC: u8 = 128;
/// The remote access rights a QP may grant.
const QP_ACCESS: Access = Access::REMOTE_WRITE
    .with(Access::REMOTE_READ)
    .with(Access::REMOTE_ATOMIC);
/// PSNs and QP numbers are 24-bit, like the PSN type of the protocol core.
const MAX_24BIT: u32 = Psn::MASK;

/// The table of QP numbers.
pub(crate) fn new_table() -> impl PinInit<IndexTable, Error> {
    IndexTable::new(FIRST_QPN, LAST_QPN)
}

/// A queue pair.
pub(crate) struct Qp {
    qpn: u32,
    qp_type: QpType,
    caps: QpCaps,
    /// State and attributes, as modify sets them.
    attr: Pin<KBox<Mutex<QpAttr>>>,
    /// The send queue, which the requester will consume.
    _sq: UserRing,
    /// The receive queue, which the responder will consume.
    _rq: UserRing,
}

impl Qp {
    /// A QP for the process `user`, whose rings are described in the
    /// response; `init.caps` becomes what the rings hold.
    pub(crate) fn create(
        dev: &Device<RroceDevice>,
        init: &mut QpInit,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, u32)> {
        if !matches!(init.qp_type, QpType::Rc | QpType::Uc | QpType::Ud)
            || init.has_srq
            || init.create_flags != 0
        {
            return Err(eopnotsupp());
        }
        let caps = &mut init.caps;
        if caps.max_send_wr > MAX_QP_WR
            || caps.max_recv_wr > MAX_QP_WR
            || caps.max_send_sge > MAX_SGE
            || caps.max_recv_sge > MAX_SGE
            || caps.max_inline_data > MAX_INLINE_DATA
        {
            return Err(EINVAL);
        }
        // Kernel consumers come with the kernel verbs of the data path.
        let (uctx, udata) = user.ok_or_else(eopnotsupp)?;

        let send_room = (caps.max_send_sge * SGE_SIZE).max(caps.max_inline_data);
        let sq = UserRing::new(uctx, caps.max_send_wr.max(1), SEND_WQE_SIZE + send_room)?;
        let rq = UserRing::new(
            uctx,
            caps.max_recv_wr.max(1),
            RECV_WQE_SIZE + caps.max_recv_sge * SGE_SIZE,
        )?;
        udata.respond(&CreateQpResp::new(Some(rq.mapping()), sq.mapping()))?;
        caps.max_send_wr = sq.capacity();
        caps.max_recv_wr = rq.capacity();

        let attr = KBox::pin_init(new_mutex!(QpAttr::default()), GFP_KERNEL)?;
        let qpn = dev.data().qpns().alloc()?;
        let qp = Self {
            qpn,
            qp_type: init.qp_type,
            caps: *caps,
            attr,
            _sq: sq,
            _rq: rq,
        };
        Ok((qp, qpn))
    }

    /// Moves the QP to a new state with new attributes, if the state
    /// machine allows it and every value is one rroce supports.
    pub(crate) fn modify(&self, change: &QpChange) -> Result {
        let mut attr = self.attr.lock();
        if change.cur_state.is_some_and(|s| s != attr.state)
            || !change.transition_ok(attr.state, self.qp_type)
            || !valid(change)
        {
            return Err(EINVAL);
        }
        attr.apply(change);
        Ok(())
    }

    /// The attributes and capacities.
    pub(crate) fn query(&self) -> (QpAttr, QpCaps) {
        (*self.attr.lock(), self.caps)
    }

    /// Gives the QP number back; dropping the QP frees its rings.
    pub(crate) fn destroy(self, dev: &Device<RroceDevice>) {
        dev.data().qpns().free(self.qpn);
    }
}

/// Whether every value `change` sets is within what rroce supports.
fn valid(change: &QpChange) -> bool {
    let (m, a) = (change.mask, &change.attr);
    let ok = |bit, cond: bool| !m.has(bit) || cond;
    m.within(&[
        QpMask::STATE,
        QpMask::CUR_STATE,
        QpMask::ACCESS_FLAGS,
        QpMask::PKEY_INDEX,
        QpMask::PORT,
        QpMask::QKEY,
        QpMask::AV,
        QpMask::PATH_MTU,
        QpMask::TIMEOUT,
        QpMask::RETRY_CNT,
        QpMask::RNR_RETRY,
        QpMask::RQ_PSN,
        QpMask::MAX_QP_RD_ATOMIC,
        QpMask::MIN_RNR_TIMER,
        QpMask::SQ_PSN,
        QpMask::MAX_DEST_RD_ATOMIC,
        QpMask::DEST_QPN,
    ]) && ok(
        QpMask::STATE,
        a.state != QpState::Sqd && a.state != QpState::Sqe,
    ) && ok(
        QpMask::ACCESS_FLAGS,
        QP_ACCESS.contains(Access::from_bits(a.access)),
    ) && ok(QpMask::PKEY_INDEX, a.pkey_index == 0)
        && ok(QpMask::PORT, a.port == PORT)
        && ok(QpMask::PATH_MTU, Mtu::from_raw(a.path_mtu).is_some())
        && ok(QpMask::TIMEOUT, a.timeout <= 31)
        && ok(QpMask::RETRY_CNT, a.retry_cnt <= 7)
        && ok(QpMask::RNR_RETRY, a.rnr_retry <= 7)
        && ok(QpMask::MIN_RNR_TIMER, a.min_rnr_timer <= 31)
        && ok(QpMask::RQ_PSN, a.rq_psn <= MAX_24BIT)
        && ok(QpMask::SQ_PSN, a.sq_psn <= MAX_24BIT)
        && ok(QpMask::DEST_QPN, a.dest_qpn <= MAX_24BIT)
        && ok(QpMask::MAX_QP_RD_ATOMIC, a.max_rd_atomic <= MAX_RD_ATOMIC)
        && ok(
            QpMask::MAX_DEST_RD_ATOMIC,
            a.max_dest_rd_atomic <= MAX_RD_ATOMIC,
        )
}
