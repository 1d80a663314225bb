// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: a send ring and a receive ring shared with the process,
//! which posts work requests into them, and the verbs that run them.
//!
//! Everything a QP does happens under its one lock, from three places: the
//! doorbell (a POST_SEND system call), the receive work (packets for it),
//! and the device timer (retransmission). Each runs the engines below:
//! the requester and the completer on the send side (`requester.rs`,
//! `completer.rs`, state in `send_queue.rs`), the responder on the receive
//! side (`responder.rs`, state in `recv_queue.rs`), all over the QP's
//! state (`qp_core.rs`). None of them knows the device: they reach it
//! through [`Services`].

use crate::counters::{Counter, Counters};
use crate::cq::Cq;
use crate::device_services::Services;
use crate::kernel_ext::{
    errno::eopnotsupp,
    now_ns,
    rdma::{
        rxe_abi::CreateQpResp, Access, Driver, Mtu, QpCaps, QpChange, QpCqs, QpInit, QpMask,
        QpNotifier, QpQuery, QpState, QpType, Qpn, UData, UserContext,
    },
};
use crate::kernel_posts::KernelPosts;
use crate::limits::{
    FIRST_QPN, LAST_QPN, MAX_24BIT, MAX_INLINE_DATA, MAX_QP_WR, MAX_RD_ATOMIC, MAX_SGE, PORT,
};
use crate::mw;
use crate::pool::{PdNum, Pool};
use crate::proto::ring::{Ring, MIN_ELEM_SIZE};
use crate::proto::{
    ip,
    packet::Packet,
    psn::Psn,
    wqe::{RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE},
};
use crate::qp_core::{Live, QpCore, QpInner, QpLock};
use crate::recv_queue::RecvQueue;
use crate::send_queue::SendQueue;
use crate::srq::Srq;
use crate::trace;
use crate::user_ring::UserRing;
use crate::work::{RecvWqe, SendWqe};
use crate::xmit::Flow;
use crate::{answers, completer, requester, responder};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{prelude::*, sync::Arc};

/// QP1, the general services QP.
const GSI_QPN: u32 = 1;
/// The access rights a QP may be given: the remote ones it grants, and
/// local write, which means nothing for a QP but which perftest sets. Both
/// FLUSH rights, as ib_cm gives every QP it connects both once the device
/// has either; a persistent FLUSH still finds no MR that allows it.
const QP_ACCESS: Access = Access::LOCAL_WRITE
    .with(Access::REMOTE_WRITE)
    .with(Access::REMOTE_READ)
    .with(Access::REMOTE_ATOMIC)
    .with(Access::FLUSH_GLOBAL)
    .with(Access::FLUSH_PERSISTENT);

/// The QPs of a device, by number.
pub(crate) fn new_pool() -> impl PinInit<Pool<QpCore>, Error> {
    Pool::new(FIRST_QPN, LAST_QPN)
}

/// A queue pair, as ib_core holds it: the verbs' handle, from `create_qp`
/// until [`Qp::destroy`] consumes it, so no verb meets a destroyed QP.
/// What may outlive it (a packet being handled, the timer, the kick list)
/// holds the [`QpCore`], whose state [`QpLock::live`] no longer hands out.
pub(crate) struct Qp {
    core: Arc<QpCore>,
    live: Live,
}

impl Qp {
    /// A QP for the process `user`, whose rings are described in the
    /// response, or for a kernel consumer; `init.caps` becomes what it holds.
    pub(crate) fn create(
        dev: &impl Services,
        qps: &Pool<QpCore>,
        pd: PdNum,
        init: &mut QpInit,
        links: &QpCqs<'_, impl Driver<Cq = Cq, Srq = Srq>>,
        events: Arc<QpNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, Qpn)> {
        let supported = match init.qp_type {
            QpType::Rc | QpType::Uc | QpType::Ud => true,
            // QP1, for ib_mad: the kernel's own.
            QpType::Gsi => user.is_none(),
            QpType::Other(_) => false,
        };
        if !supported || init.create_flags != 0 {
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
        // A QP on an SRQ takes its receive requests from there.
        let srq = links.srq.map(Srq::core);
        if srq.is_some() {
            caps.max_recv_wr = 0;
            caps.max_recv_sge = 0;
        }
        let (sq, rq, kernel) = match user {
            Some((uctx, udata)) => {
                let (sq, rq) = Self::user_rings(uctx, udata, caps, srq.is_some())?;
                (Some(sq), rq, None)
            }
            None => {
                let kernel = KernelPosts::new(caps.max_send_wr, caps.max_recv_wr)?;
                (None, None, Some(kernel))
            }
        };
        let geometry = match &sq {
            Some(sq) => sq.geometry(),
            None => Ring::new(caps.max_send_wr.max(1), MIN_ELEM_SIZE).ok_or(EINVAL)?,
        };
        let send = SendQueue::new(geometry, sq.is_some())?;
        let recv = RecvQueue::new(rq.as_ref().map_or(0, |rq| rq.geometry().elem_size()))?;
        let gsi = init.qp_type == QpType::Gsi;
        let ud_mtu = dev
            .netdev()
            .and_then(|n| Mtu::for_netdev_mtu(n.mtu()))
            .map_or(256, Mtu::bytes);
        let (qp_type, sq_sig_all, caps) = (init.qp_type, init.sq_sig_all, *caps);
        let (state, live) = QpLock::new(QpInner::new(send, recv));
        let build = |n| {
            let qpn = Qpn::new(n);
            let flow = Flow::new(qpn);
            Arc::pin_init(
                try_pin_init!(QpCore {
                    qpn,
                    qp_type,
                    pd,
                    caps,
                    sq_sig_all,
                    sq,
                    kernel,
                    handle: links.handle,
                    events: events.clone(),
                    rq,
                    srq,
                    send_cq: links.send.core(),
                    recv_cq: links.recv.core(),
                    flow <- flow,
                    ud_mtu,
                    listed: AtomicBool::new(false),
                    inner <- state,
                }),
                GFP_KERNEL,
            )
        };
        let core = if gsi {
            let core = build(GSI_QPN)?;
            qps.add_reserved(GSI_QPN, core.clone())?;
            core
        } else {
            qps.add(build)?.1
        };
        let qpn = core.qpn;
        Ok((Self { core, live }, qpn))
    }

    /// A process's send and receive rings, which the response describes;
    /// `caps` becomes what they hold.
    fn user_rings(
        uctx: &UserContext,
        udata: &UData<'_>,
        caps: &mut QpCaps,
        on_srq: bool,
    ) -> Result<(UserRing, Option<UserRing>)> {
        let send_room = (caps.max_send_sge * SGE_SIZE).max(caps.max_inline_data);
        let sq = UserRing::new(uctx, caps.max_send_wr.max(1), SEND_WQE_SIZE + send_room)?;
        let rq = if on_srq {
            None
        } else {
            Some(UserRing::new(
                uctx,
                caps.max_recv_wr.max(1),
                RECV_WQE_SIZE + caps.max_recv_sge * SGE_SIZE,
            )?)
        };
        let rq_mapping = rq.as_ref().map(UserRing::mapping).transpose()?;
        udata.respond(&CreateQpResp::new(rq_mapping, sq.mapping()?))?;
        caps.max_send_wr = sq.capacity();
        if let Some(rq) = &rq {
            caps.max_recv_wr = rq.capacity();
        }
        // What the element room allows is what a work request may use.
        caps.max_send_sge = send_room / SGE_SIZE;
        caps.max_inline_data = send_room;
        Ok((sq, rq))
    }

    /// Posts a kernel consumer's send, and has the device's work run it.
    pub(crate) fn post_kernel_send(&self, dev: &impl Services, wqe: SendWqe) -> Result {
        let kernel = self.core.kernel.as_ref().ok_or(EINVAL)?;
        kernel.send.post(wqe)?;
        self.kick(dev, kernel);
        Ok(())
    }

    /// Posts a kernel consumer's receive.
    pub(crate) fn post_kernel_recv(&self, dev: &impl Services, wqe: RecvWqe) -> Result {
        let kernel = self.core.kernel.as_ref().ok_or(EINVAL)?;
        kernel.recv.post(wqe)?;
        // A QP in the error state flushes it at once.
        self.kick(dev, kernel);
        Ok(())
    }

    /// Has the device's work run the QP, unless it is due to already. On
    /// the ordinary workers, so that it takes a burst of posts at once:
    /// on the high-priority ones, it ran after each of NVMe-oF's and cut
    /// fio's 4 KiB random reads on one device from 13 807 to 10 582 IOPS.
    fn kick(&self, dev: &impl Services, kernel: &KernelPosts) {
        if kernel.set_due() && self.core.kick(dev, false).is_err() {
            kernel.clear_due();
        }
    }

    /// Moves the QP to a new state with new attributes, if the state
    /// machine allows it and every value is one rroce supports.
    pub(crate) fn modify(&self, dev: &impl Services, change: &QpChange) -> Result {
        let qp = &*self.core;
        let mut inner = qp.inner.lock(&self.live);
        let inner = &mut *inner;
        if change.cur_state.is_some_and(|s| s != inner.attr.state)
            || !change.transition_ok(inner.attr.state, qp.qp_type)
            || !valid(change)
        {
            return Err(EINVAL);
        }
        let was = inner.attr.state;
        inner.attr.apply(change);
        if inner.attr.state != was {
            trace::qp_state(qp.qpn.get(), was as u8, inner.attr.state as u8);
        }
        if let Some(av) = change.av {
            inner.av = av;
        }
        if change.mask.has(QpMask::RQ_PSN) {
            inner.recv.reset(Psn::new(change.attr.rq_psn));
        }
        if change.mask.has(QpMask::SQ_PSN) {
            inner.send.reset(Psn::new(change.attr.sq_psn));
        }
        if change.mask.has(QpMask::STATE) {
            match change.attr.state {
                QpState::Err => {
                    qp.flush(inner);
                    if was != QpState::Err {
                        qp.left_srq();
                    }
                }
                QpState::Rtr => inner.established = false,
                QpState::Reset => {
                    qp.discard(inner);
                    inner.send.reset(Psn::new(0));
                    inner.recv.reset(Psn::new(0));
                }
                QpState::Rts => qp.run(dev, inner),
                _ => {}
            }
        }
        Ok(())
    }

    /// The attributes and capacities, with the PSNs as they are now: the
    /// next to send and the next expected, which is what someone looking
    /// at a stuck QP wants to see.
    pub(crate) fn query(&self) -> Result<QpQuery> {
        let inner = self.core.inner.lock(&self.live);
        let mut attr = inner.attr;
        attr.sq_psn = inner.send.next_psn().get();
        attr.rq_psn = inner.recv.expected_psn().get();
        Ok(QpQuery {
            attr,
            av: inner.av,
            caps: self.core.caps,
            sq_sig_all: self.core.sq_sig_all,
        })
    }

    /// Counts what happens to the QP in `set` from now on, or in the
    /// port's own counters.
    pub(crate) fn count_in(&self, set: Option<Arc<Counters>>) {
        self.core.inner.lock(&self.live).counter_set = set;
    }

    /// The QP's number, for the multicast groups it may join.
    pub(crate) fn qpn(&self) -> Qpn {
        self.core.qpn
    }

    /// The QP's number if it is a UD QP, the only type that can be
    /// attached to a multicast group; `EINVAL` otherwise.
    pub(crate) fn ud_qpn(&self) -> Result<Qpn> {
        if self.core.qp_type == QpType::Ud {
            Ok(self.core.qpn)
        } else {
            Err(EINVAL)
        }
    }

    /// The doorbell: sends what the process posted. Returns whether it
    /// took a request the peer's process waits for (a SEND, a WRITE with
    /// immediate).
    pub(crate) fn post_send(&self, dev: &impl Services) -> Result<bool> {
        let qp = &*self.core;
        let mut inner = qp.inner.lock(&self.live);
        let inner = &mut *inner;
        inner.send.took_for_receiver = false;
        match inner.attr.state {
            QpState::Rts => qp.run(dev, inner),
            QpState::Err => qp.flush(inner),
            _ => return Err(EINVAL),
        }
        Ok(inner.send.took_for_receiver)
    }

    /// Withdraws the QP from the data path; dropping it frees its rings
    /// once no packet or timer is using it any more.
    pub(crate) fn destroy(self, qps: &Pool<QpCore>, mws: &Pool<mw::MwCore>) {
        qps.withdraw(self.core.qpn.get());
        // Its requests and their MR references go now, the kernel
        // consumer's posts that it never took too.
        self.core.inner.destroy(self.live);
        if let Some(k) = &self.core.kernel {
            while k.send.take().is_some() {}
            while k.recv.take().is_some() {}
        }
        // The rings' mappings go with the QP, even if a work item still
        // holds its core: their user context is freed soon after.
        for ring in [&self.core.sq, &self.core.rq].into_iter().flatten() {
            ring.withdraw();
        }
        // Nothing binds for it any more: its number may go to a new QP.
        mw::qp_destroyed(mws, self.core.qpn);
        qps.free(self.core.qpn.get());
    }
}

/// The QP's engines, run from the doorbell, the receive path and the timer.
impl QpCore {
    /// Runs the send queue.
    fn run(&self, dev: &impl Services, inner: &mut QpInner) {
        requester::run(dev, self, inner);
        self.arm_timer(dev, inner);
    }

    /// Arms the device timer if the requester waits for the peer.
    fn arm_timer(&self, dev: &impl Services, inner: &QpInner) {
        if let Some(us) = inner.send.timer_usecs(inner.attr.timeout) {
            dev.arm_tick(us);
        }
    }

    /// Handles a packet for this QP, which counts it as received if
    /// `bytes`, the datagram's size, is given (the port counts a multicast
    /// datagram, which several QPs get); returns whether the QP owes its
    /// peer an ACK, for [`QpCore::send_owed_ack`] at the end of the burst.
    pub(crate) fn receive(
        &self,
        dev: &impl Services,
        pkt: &Packet<'_>,
        ip: &[u8],
        bytes: Option<u64>,
    ) -> bool {
        let live = self.inner.live();
        if let Some(bytes) = bytes {
            count_received(dev, live.as_deref(), bytes);
        }
        let Some(mut inner) = live else {
            dev.count(None, Counter::DropBadState, 1);
            return false;
        };
        let inner = &mut *inner;
        if !self.sent_by_peer(inner, ip) {
            inner.count(dev, Counter::DropBadAddress);
            return false;
        }
        if ip::congestion_experienced(ip) {
            self.congestion_experienced(dev, inner);
        }
        if pkt.headers.bth.opcode.is_request() {
            self.establish(inner, pkt.headers.bth.psn);
            responder::receive(dev, self, inner, pkt, ip);
        } else {
            let sends = inner.send.window.sends();
            if completer::receive_response(dev, self, inner, pkt) {
                requester::run(dev, self, inner);
            }
            // Each packet sent armed the timer, and each tick arms it again
            // while the QP waits: a response only moves the wait on, unless
            // the requester sent or an RNR wait began. Arming for every READ
            // response packet took 2 % of a 64 KiB READ's samples.
            if inner.send.window.sends() != sends || inner.send.window.rnr_waiting() {
                self.arm_timer(dev, inner);
            }
        }
        inner.recv.ack_owed.is_some()
    }

    /// Whether a packet with IP header `ip` came from a connected QP's peer
    /// to its own address, as the C rxe checks: any other host that can
    /// reach the port could otherwise act as the peer by guessing the QP
    /// number (for UC, which takes any PSN, and fatal NAKs, CNPs). A QP
    /// without a peer yet (Reset, Init) drops the packet for its state.
    fn sent_by_peer(&self, inner: &QpInner, ip: &[u8]) -> bool {
        !matches!(self.qp_type, QpType::Rc | QpType::Uc)
            || matches!(inner.attr.state, QpState::Reset | QpState::Init)
            || ip::is_from_to(ip, &inner.av.dgid, &inner.av.sgid)
    }

    /// A CNP of `bytes` with IP header `ip` came for this QP: with
    /// congestion control on, its requester slows down if it is sending
    /// (RTS).
    pub(crate) fn congestion_notified(&self, dev: &impl Services, bytes: u64, ip: &[u8]) {
        let live = self.inner.live();
        count_received(dev, live.as_deref(), bytes);
        let Some(mut inner) = live else {
            return dev.count(None, Counter::RpCnpIgnored, 1);
        };
        if !self.sent_by_peer(&inner, ip) {
            return inner.count(dev, Counter::DropBadAddress);
        }
        let handled = dev.congestion_control()
            && inner.attr.state == QpState::Rts
            && inner.send.rate.cnp(now_ns(), &dev.cc_params());
        let counter = if handled {
            Counter::RpCnpHandled
        } else {
            Counter::RpCnpIgnored
        };
        inner.count(dev, counter);
    }

    /// Sends the ACK the QP owes, if any.
    pub(crate) fn send_owed_ack(&self, dev: &impl Services) {
        if let Some(mut inner) = self.inner.live() {
            answers::send_owed_ack(dev, self, &mut inner);
        }
    }

    /// Sends the next burst of the answers that wait for the peer, then
    /// runs what a kernel consumer posted since the QP was last kicked.
    pub(crate) fn run_kicked(&self, dev: &impl Services) {
        // Taken off the list: whatever asks from here on lists it again.
        self.listed.store(false, Ordering::Release);
        if let Some(kernel) = &self.kernel {
            kernel.clear_due();
        }
        let Some(mut inner) = self.inner.live() else {
            return;
        };
        let inner = &mut *inner;
        answers::resume(dev, self, inner);
        if self.kernel.is_none() {
            // A doorbell that stopped at its burst's end goes on here.
            if inner.send.cut && inner.attr.state == QpState::Rts {
                self.run(dev, inner);
            }
            return;
        }
        match inner.attr.state {
            QpState::Rts => self.run(dev, inner),
            QpState::Err => self.flush(inner),
            _ => {}
        }
    }

    /// The device timer fired at `now`, on the receive clock: retransmit if
    /// the peer has been silent.
    pub(crate) fn tick(&self, dev: &impl Services, now: u64) {
        let Some(mut inner) = self.inner.live() else {
            return;
        };
        let inner = &mut *inner;
        // Answers that a failed kick left waiting: the QP is not listed.
        if !inner.recv.answers.is_empty() && !self.listed.load(Ordering::Acquire) {
            answers::resume(dev, self, inner);
        }
        match inner.attr.state {
            QpState::Rts => {
                if completer::tick(dev, self, inner, now) {
                    requester::run(dev, self, inner);
                }
                // A kernel consumer's posts wait for this, a paced QP, and
                // a burst cut short whose kick failed.
                if self.kernel.is_some() || inner.send.rate.current().is_some() || inner.send.cut {
                    requester::run(dev, self, inner);
                }
                self.arm_timer(dev, inner);
            }
            QpState::Err if self.kernel.is_some() => self.flush(inner),
            _ => {}
        }
    }
}

/// Counts a packet of `bytes` received by a QP whose state is `inner`, if it
/// is not destroyed.
fn count_received(dev: &impl Services, inner: Option<&QpInner>, bytes: u64) {
    let set = inner.and_then(|inner| inner.counter_set.as_deref());
    dev.count(set, Counter::RcvdPkts, 1);
    dev.count(set, Counter::RcvdBytes, bytes);
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
        && ok(QpMask::DEST_QPN, a.dest_qpn.get() <= MAX_24BIT)
        && ok(QpMask::MAX_QP_RD_ATOMIC, a.max_rd_atomic <= MAX_RD_ATOMIC)
        && ok(
            QpMask::MAX_DEST_RD_ATOMIC,
            a.max_dest_rd_atomic <= MAX_RD_ATOMIC,
        )
}
