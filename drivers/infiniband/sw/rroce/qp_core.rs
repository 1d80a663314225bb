// SPDX-License-Identifier: GPL-2.0

//! A queue pair's state: its rings and CQs, which in-flight work holds on
//! to, and under its lock the attributes and both sides' progress.
//!
//! What the state does by itself lives here: completions, the error state
//! and the flush it brings. What moves it, the requester, completer and
//! responder, sits above this file, and the QP verbs that run them above
//! those (`qp.rs`).

use crate::answer_ring::Answers;
use crate::counters::{Counter, Counters};
use crate::cq::CqCore;
use crate::device_services::Services;
use crate::kernel_ext::rdma::{
    Av, Mtu, QpAttr, QpCaps, QpEvent, QpHandle, QpNotifier, QpState, QpType, Qpn,
};
use crate::kernel_ext::{fill::Fill, now_ns};
use crate::kernel_posts::KernelPosts;
use crate::mw::ForQp;
use crate::pool::PdNum;
use crate::proto::{
    cnp,
    cqe::{WcOpcode, WcStatus},
    headers::{Bth, DEFAULT_PKEY},
    opcode::Opcode,
    packet::Headers,
    psn::Psn,
    wqe::{slot_wr_id, SEND_SIGNALED},
};
use crate::recv_queue::{Recv, RecvQueue, Write};
use crate::send_queue::{Fetched, SendQueue};
use crate::srq::SrqCore;
use crate::trace;
use crate::user_ring::UserRing;
use crate::work::{SendWqe, Wc};
use crate::xmit::Flow;
use core::ops::DerefMut;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// A queue pair's rings and state, which in-flight work holds on to.
#[pin_data]
pub(crate) struct QpCore {
    pub(crate) qpn: Qpn,
    pub(crate) qp_type: QpType,
    /// The protection domain, which its work requests' MRs must share.
    pub(crate) pd: PdNum,
    pub(crate) caps: QpCaps,
    /// Every send request completes, signalled or not.
    pub(crate) sq_sig_all: bool,
    /// A process's send ring; none for a kernel consumer's QP.
    pub(crate) sq: Option<UserRing>,
    /// A kernel consumer's queues, and its `ib_qp` for completions.
    pub(crate) kernel: Option<KernelPosts>,
    pub(crate) handle: QpHandle,
    /// Its owner's asynchronous events.
    pub(crate) events: Arc<QpNotifier>,
    /// The receive queue, or the SRQ receive requests come from.
    pub(crate) rq: Option<UserRing>,
    pub(crate) srq: Option<Arc<SrqCore>>,
    pub(crate) send_cq: Arc<CqCore>,
    pub(crate) recv_cq: Arc<CqCore>,
    /// The UDP source port and route of its packets.
    #[pin]
    pub(crate) flow: Flow,
    /// UD: the largest datagram, from the port's MTU at creation.
    pub(crate) ud_mtu: u32,
    /// On the device's kick list, to run once however many ask before
    /// ([`QpCore::kick`]).
    pub(crate) listed: AtomicBool,
    /// Its state, which the verbs reach through their [`Live`] proof and
    /// the data path only until the QP is destroyed.
    #[pin]
    pub(crate) inner: QpLock,
}

/// A QP's state under its lock. A work item (a packet being handled, the
/// timer, the kick list) may still hold the core of a destroyed QP, which
/// must not touch its rings or CQs any more: it asks [`QpLock::live`],
/// which says no. The verbs cannot meet a destroyed QP, and do not ask.
#[pin_data]
pub(crate) struct QpLock {
    #[pin]
    inner: Mutex<QpInner>,
}

/// The verbs' proof that a QP is not destroyed: [`QpLock::new`] makes one
/// for each QP, the QP's handle holds it, and [`QpLock::destroy`] takes it.
pub(crate) struct Live(());

impl QpLock {
    /// The lock of a new QP's state, and the proof its handle keeps.
    pub(crate) fn new(inner: QpInner) -> (impl PinInit<Self>, Live) {
        (pin_init!(Self { inner <- new_mutex!(inner) }), Live(()))
    }

    /// The state, for a verb.
    pub(crate) fn lock(&self, _: &Live) -> impl DerefMut<Target = QpInner> + '_ {
        self.inner.lock()
    }

    /// The state, for the data path: none once the QP is destroyed.
    pub(crate) fn live(&self) -> Option<impl DerefMut<Target = QpInner> + '_> {
        let inner = self.inner.lock();
        (!inner.destroyed).then_some(inner)
    }

    /// Marks the QP destroyed, for what still holds its core, and lets go
    /// of its requests and what they hold (MRs, AHs), out of the lock.
    pub(crate) fn destroy(&self, _: Live) {
        let held = self.inner.lock().release();
        drop(held);
        // Nothing else takes them now: one at a time, each out of the lock.
        loop {
            let taken = self.inner.lock().send.window.pop();
            match taken {
                Some(entry) => drop(entry),
                None => break,
            }
        }
    }
}

/// What changes, under the QP's lock.
pub(crate) struct QpInner {
    pub(crate) attr: QpAttr,
    /// Where RC and UC packets go.
    pub(crate) av: Av,
    pub(crate) send: SendQueue,
    pub(crate) recv: RecvQueue,
    /// COMM_EST was raised since the QP last entered RTR.
    pub(crate) established: bool,
    /// The counter set it is bound to, which counts what happens to it.
    pub(crate) counter_set: Option<Arc<Counters>>,
    /// When (ns) it last sent a CNP.
    last_cnp: Option<u64>,
    destroyed: bool,
}

/// What a destroyed QP's requests held, besides those taken from the
/// send queue.
type Released = (Option<SendWqe>, Option<Recv>, Option<Write>, Answers);

impl QpInner {
    /// The state of a new QP, in Reset.
    pub(crate) fn new(send: SendQueue, recv: RecvQueue) -> Self {
        Self {
            attr: QpAttr::default(),
            av: Av::default(),
            send,
            recv,
            established: false,
            counter_set: None,
            last_cnp: None,
            destroyed: false,
        }
    }

    /// Counts one `c` of this QP's.
    pub(crate) fn count(&self, dev: &impl Services, c: Counter) {
        dev.count(self.counter_set.as_deref(), c, 1);
    }

    /// Becomes the state of a destroyed QP, and returns what its requests
    /// hold but those the send queue took. Anything here that holds another
    /// object must be taken out: the QP's core may outlive the object.
    fn release(&mut self) -> Released {
        self.destroyed = true;
        self.counter_set = None;
        (
            self.send.pending.take(),
            self.recv.filling.take(),
            self.recv.write.take(),
            core::mem::replace(&mut self.recv.answers, Answers::new()),
        )
    }
}

impl QpCore {
    /// Has the device's work run the QP soon ([`Services::kick`]), once
    /// however many ask before it runs: each of its turns sends a burst of
    /// answers and lists the QP again while more wait, so a QP listed twice
    /// (a kernel consumer's post, and its answers) would keep two turns a
    /// round, then three, and starve the other QPs' answers until their
    /// peers gave up.
    pub(crate) fn kick(&self, dev: &impl Services, urgent: bool) -> Result {
        if self.listed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let listed = dev.kick(self.qpn, urgent);
        if listed.is_err() {
            self.listed.store(false, Ordering::Release);
        }
        listed
    }

    /// The most requests one doorbell, or one flush, takes: a ring's
    /// worth, what the process's SQ can hold, however fast the process
    /// moves its producer index on meanwhile. A kernel consumer's posts
    /// are bounded where they are posted.
    pub(crate) fn takes_per_run(&self) -> u32 {
        self.sq.as_ref().map_or(u32::MAX, |sq| sq.capacity())
    }

    /// Whether `wqe` ends in a completion when it succeeds.
    pub(crate) fn signals(&self, wqe: &SendWqe) -> bool {
        self.sq_sig_all || wqe.flags & SEND_SIGNALED != 0
    }

    /// The path MTU in bytes.
    pub(crate) fn mtu(&self, inner: &QpInner) -> u32 {
        if self.qp_type.is_ud() {
            return self.ud_mtu;
        }
        Mtu::from_raw(inner.attr.path_mtu).map_or(256, Mtu::bytes)
    }

    /// A BTH to the peer QP `dest_qpn`.
    pub(crate) fn bth(&self, dest_qpn: Qpn, opcode: Opcode, psn: Psn) -> Bth {
        Bth {
            opcode,
            solicited: false,
            mig_req: false,
            pad: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qpn: dest_qpn.get(),
            ack_req: false,
            psn,
        }
    }

    /// Sends a packet to `av`; a failure is a lost packet, which the
    /// requester's timer recovers from, and the device counts it in `set`,
    /// the QP's counter set.
    pub(crate) fn send(
        &self,
        dev: &impl Services,
        set: Option<&Counters>,
        av: &Av,
        headers: Headers,
        payload_len: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result,
    ) {
        let bth = &headers.bth;
        trace::send(
            self.qpn.get(),
            bth.dest_qpn,
            bth.opcode as u8,
            bth.psn.get(),
            payload_len as u32,
            headers.syndrome(),
        );
        let _ = dev.transmit(set, av, &self.flow, headers, payload_len, fill);
    }

    /// Sends a packet to the connected peer, as [`QpCore::send`] does.
    pub(crate) fn send_to_peer(
        &self,
        dev: &impl Services,
        inner: &QpInner,
        headers: Headers,
        payload_len: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result,
    ) {
        let set = inner.counter_set.as_deref();
        self.send(dev, set, &inner.av, headers, payload_len, fill);
    }

    /// The send queue's consumer index moved to `head`: a request is done
    /// with (or, for a kernel consumer, one more request).
    pub(crate) fn send_done(&self, head: u32) {
        match (&self.sq, &self.kernel) {
            (Some(sq), _) => sq.publish_consumer(head),
            (None, Some(k)) => k.send.completed(),
            (None, None) => {}
        }
    }

    /// What memory windows know of this QP.
    pub(crate) fn for_mw(&self) -> ForQp {
        ForQp {
            pd: self.pd,
            qpn: self.qpn,
        }
    }

    /// A completion of this QP's; the rest of its fields are zero.
    pub(crate) fn wc(&self, wr_id: u64, status: WcStatus, opcode: WcOpcode, byte_len: u32) -> Wc {
        Wc {
            wr_id,
            status,
            opcode,
            byte_len,
            ex: 0,
            qp_num: self.qpn.get(),
            src_qp: 0,
            flags: 0,
            qp: self.handle,
            ip_version: 0,
        }
    }

    /// Adds a send completion; a full CQ is fatal to the QP.
    pub(crate) fn complete_send(&self, inner: &mut QpInner, wc: &Wc, solicited: bool) {
        self.trace_error(wc);
        if self.send_cq.push(wc, solicited).is_err() {
            self.events.raise(QpEvent::Fatal);
            self.enter_error(inner);
        }
    }

    /// Adds a receive completion; a full CQ is fatal to the QP.
    pub(crate) fn complete_recv(&self, inner: &mut QpInner, wc: &Wc, solicited: bool) {
        self.trace_error(wc);
        if self.recv_cq.push(wc, solicited).is_err() {
            self.events.raise(QpEvent::Fatal);
            self.enter_error(inner);
        }
    }

    fn trace_error(&self, wc: &Wc) {
        if wc.status != WcStatus::Success {
            trace::wc_error(self.qpn.get(), wc.wr_id, wc.status as u8, wc.opcode as u8);
        }
    }

    /// A packet for this QP came marked Congestion Experienced: a connected
    /// QP tells its peer, whose packets it was, with a CNP, at most one in
    /// [`cnp::INTERVAL_NS`].
    pub(crate) fn congestion_experienced(&self, dev: &impl Services, inner: &mut QpInner) {
        inner.count(dev, Counter::NpEcnMarked);
        let connected = matches!(self.qp_type, QpType::Rc | QpType::Uc);
        let ready = matches!(inner.attr.state, QpState::Rtr | QpState::Rts);
        let now = now_ns();
        if !connected
            || !ready
            || inner
                .last_cnp
                .is_some_and(|at| now.wrapping_sub(at) < cnp::INTERVAL_NS)
        {
            return;
        }
        inner.last_cnp = Some(now);
        let set = inner.counter_set.as_deref();
        dev.transmit_cnp(set, &inner.av, &self.flow, inner.attr.dest_qpn);
    }

    /// A connected QP ready to receive tells its owner of the first packet
    /// that reaches it (IBA 11.6.3), which is how the CM learns that the
    /// connection is up if the peer's RTU was lost. Only a packet with the
    /// expected PSN counts: a late one of a former connection to the same
    /// QP number must not declare a new connection up.
    pub(crate) fn establish(&self, inner: &mut QpInner, psn: Psn) {
        let connected = matches!(self.qp_type, QpType::Rc | QpType::Uc);
        let first = psn == inner.recv.expected_psn() && !inner.established;
        if connected && inner.attr.state == QpState::Rtr && first {
            inner.established = true;
            self.events.raise(QpEvent::CommEstablished);
        }
    }

    /// Tells the owner of a QP on an SRQ, which just entered the error
    /// state, that it takes no more receive requests from there.
    pub(crate) fn left_srq(&self) {
        if self.srq.is_some() {
            self.events.raise(QpEvent::LastWqeReached);
        }
    }

    /// Whether the consumers of its CQs have taken every completion.
    pub(crate) fn cqs_drained(&self) -> bool {
        self.send_cq.drained() && self.recv_cq.drained()
    }

    /// Moves to the error state from outside the data path.
    pub(crate) fn fail(&self) {
        if let Some(mut inner) = self.inner.live() {
            self.enter_error(&mut inner);
        }
    }

    /// Moves to the error state (a failed work request, a full CQ, ...).
    pub(crate) fn enter_error(&self, inner: &mut QpInner) {
        if inner.attr.state != QpState::Err {
            trace::qp_state(self.qpn.get(), inner.attr.state as u8, QpState::Err as u8);
            inner.attr.state = QpState::Err;
            self.flush(inner);
            self.left_srq();
        }
    }

    /// Completes every outstanding work request with a flush error.
    pub(crate) fn flush(&self, inner: &mut QpInner) {
        let flushed = |wr_id, opcode| Some(self.wc(wr_id, WcStatus::WrFlushErr, opcode, 0));
        self.flush_send(inner, &flushed);
        self.flush_recv(inner, &flushed);
    }

    /// Removes every outstanding work request without a completion, as a
    /// move to Reset does (IBA 10.3.1): a new connection must not resend a
    /// former one's requests, nor place its data in a former one's buffers.
    pub(crate) fn discard(&self, inner: &mut QpInner) {
        self.flush_send(inner, &|_, _| None);
        self.flush_recv(inner, &|_, _| None);
    }

    /// Ends every send request, taken or not, with the completion `flushed` makes
    /// of it, if any.
    fn flush_send(&self, inner: &mut QpInner, flushed: &impl Fn(u64, WcOpcode) -> Option<Wc>) {
        // Each after its slot is given back. A full CQ loses the flush
        // completions; the QP is already in error.
        let add = |wr_id, op| {
            if let Some(wc) = flushed(wr_id, op) {
                let _ = self.send_cq.push(&wc, false);
            }
        };
        let pending = inner.send.pending.take();
        while let Some(taken) = inner.send.window.pop() {
            self.send_done(inner.send.window.head());
            if let Some(e) = taken {
                add(e.wqe.wr_id, WcOpcode::from(e.wqe.opcode));
            }
        }
        // Then what was posted and not taken yet, first the one fetched.
        if let Some(w) = pending {
            self.send_done(inner.send.window.skip_untaken());
            add(w.wr_id, WcOpcode::from(w.opcode));
        }
        // The rest is the next doorbell's.
        for _ in 0..self.takes_per_run() {
            let head = inner.send.window.head();
            let (wr_id, op) = match self.fetch(inner, head) {
                Fetched::Empty => break,
                Fetched::Bad(wr_id) => (wr_id, WcOpcode::Send),
                Fetched::Wqe(w) => (w.wr_id, WcOpcode::from(w.opcode)),
            };
            self.send_done(inner.send.window.skip_untaken());
            add(wr_id, op);
        }
        inner.send.window.flushed();
    }

    /// Ends every receive request with the completion `flushed` makes of it,
    /// if any.
    fn flush_recv(&self, inner: &mut QpInner, flushed: &impl Fn(u64, WcOpcode) -> Option<Wc>) {
        // A QP in error or reset answers nothing more.
        inner.recv.answers.clear();
        if let Some(recv) = inner.recv.filling.take() {
            if let Some(wc) = flushed(recv.wr_id, WcOpcode::Recv) {
                let _ = self.recv_cq.push(&wc, false);
            }
            self.consume_recv(inner);
        }
        // A kernel consumer's posted requests.
        if let (Some(k), None) = (&self.kernel, &self.srq) {
            while let Some(wqe) = k.recv.take() {
                if let Some(wc) = flushed(wqe.wr_id, WcOpcode::Recv) {
                    let _ = self.recv_cq.push(&wc, false);
                }
                k.recv.completed();
            }
        }
        // An SRQ's requests stay for the other QPs.
        let Some(rq) = &self.rq else { return };
        let producer = rq.producer();
        while inner.recv.head != producer {
            let head = inner.recv.head;
            let buf = &mut inner.recv.scratch;
            let wr_id = match rq.read(head, buf) {
                Ok(()) => slot_wr_id(buf),
                Err(_) => 0,
            };
            if let Some(wc) = flushed(wr_id, WcOpcode::Recv) {
                let _ = self.recv_cq.push(&wc, false);
            }
            self.consume_recv(inner);
        }
    }

    /// Gives the receive queue slot back to the process (an SRQ's moved on
    /// when the request was taken).
    pub(crate) fn consume_recv(&self, inner: &mut QpInner) {
        if let Some(rq) = &self.rq {
            let resp = &mut inner.recv;
            resp.head = rq.geometry().next(resp.head);
            rq.publish_consumer(resp.head);
        } else if let (Some(k), None) = (&self.kernel, &self.srq) {
            k.recv.completed();
        }
    }

    /// Takes the next request: from the ring at `index`, or a kernel
    /// consumer's next post.
    pub(crate) fn fetch(&self, inner: &mut QpInner, index: u32) -> Fetched {
        match (&self.sq, &self.kernel) {
            (Some(sq), _) => {
                let scratch = &mut inner.send.scratch;
                if index == sq.producer() {
                    Fetched::Empty
                } else if sq.read(index, scratch).is_err() {
                    Fetched::Bad(0)
                } else {
                    SendWqe::from_slot(scratch, self.caps.max_send_sge, self.caps.max_inline_data)
                        .map_or(Fetched::Bad(slot_wr_id(scratch)), Fetched::Wqe)
                }
            }
            (None, Some(k)) => k.send.take().map_or(Fetched::Empty, Fetched::Wqe),
            (None, None) => Fetched::Empty,
        }
    }
}
