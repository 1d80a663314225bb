// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: a send ring and a receive ring shared with the process,
//! which posts work requests into them.

use crate::device::RroceDevice;
use crate::index::IndexTable;
use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{
        rxe_abi::{CreateQpResp, RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE},
        Device, QpInit, QpType, UData, UserContext,
    },
};
use crate::ring::UserRing;
use kernel::prelude::*;

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

/// The table of QP numbers.
pub(crate) fn new_table() -> impl PinInit<IndexTable, Error> {
    IndexTable::new(FIRST_QPN, LAST_QPN)
}

/// A queue pair.
pub(crate) struct Qp {
    qpn: u32,
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

        let qpn = dev.data().qpns().alloc()?;
        let qp = Self {
            qpn,
            _sq: sq,
            _rq: rq,
        };
        Ok((qp, qpn))
    }

    /// Gives the QP number back; dropping the QP frees its rings.
    pub(crate) fn destroy(self, dev: &Device<RroceDevice>) {
        dev.data().qpns().free(self.qpn);
    }
}
