// SPDX-License-Identifier: GPL-2.0

//! The completer: turns the peer's responses (ACKs, NAKs, read and atomic
//! responses, and the empty read responses that answer FLUSH and ATOMIC
//! WRITE) and its silence into send completions, in posting order.
//!
//! The send window decides what a response or a timeout means; the
//! completer places what a read or an atomic returns, writes completions,
//! and fails a request, and the QP with it, when the peer or the timer says
//! so. It never sends: it tells its caller when the requester should run.

use crate::counters::Counter;
use crate::device_services::Services;
use crate::kernel_ext::{
    jiffies,
    rdma::{QpState, QpType},
};
use crate::mr::MrError;
use crate::proto::{
    cqe::{WcOpcode, WcStatus},
    headers::{NakCode, Syndrome},
    opcode::{Opcode, Operation},
    packet::Packet,
    window::{Kind, ReadResponse, RnrNak, Timer},
};
use crate::qp_core::{QpCore, QpInner};
use crate::send_queue::{Entry, Jiffies};
use crate::trace::{self, Resend};
use crate::work::Wc;

/// Handles a response packet from the peer; returns whether the requester
/// should run, as the response made room or asks for packets again.
pub(crate) fn receive_response(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
) -> bool {
    if qp.qp_type != QpType::Rc || inner.attr.state != QpState::Rts {
        return false;
    }
    let psn = pkt.headers.bth.psn;
    if !inner.send.window.expects(psn) {
        return false;
    }
    let now = jiffies();
    match pkt.headers.bth.opcode.operation() {
        Operation::Ack => {
            let Some(aeth) = pkt.headers.ext.aeth() else {
                return false;
            };
            match aeth.syndrome {
                Syndrome::Ack { .. } => inner.send.window.ack(psn, now),
                Syndrome::RnrNak { timer } => {
                    inner.count(dev, Counter::RnrNakRcvd);
                    trace::rnr_wait(qp.qpn.get(), psn.get(), timer);
                    let limit = inner.attr.rnr_retry;
                    if let RnrNak::Exceeded(slot) =
                        inner.send.window.rnr_nak(psn, timer, limit, now, &Jiffies)
                    {
                        inner.count(dev, Counter::RnrRetryExceeded);
                        if let Some(k) = slot {
                            fail(qp, inner, k, WcStatus::RnrRetryExcErr);
                        }
                        return false;
                    }
                }
                Syndrome::Nak(NakCode::PsnSequenceError) => {
                    inner.count(dev, Counter::SeqNakRcvd);
                    trace::retransmit(qp.qpn.get(), psn.get(), Resend::SeqNak);
                    inner.send.window.seq_nak(psn, now);
                }
                Syndrome::Nak(code) => {
                    if let Some(k) = inner.send.window.fatal_nak(psn, now) {
                        let status = match code {
                            NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                            NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                            _ => WcStatus::RemInvReqErr,
                        };
                        fail(qp, inner, k, status);
                        return false;
                    }
                }
            }
        }
        Operation::ReadResponse => match inner.send.window.answer_for(Kind::Commit, psn) {
            Some(slot) => committed(qp, inner, pkt, slot, now),
            None => read_response(qp, inner, pkt, now),
        },
        Operation::AtomicAck => atomic_ack(qp, inner, pkt, now),
        _ => return false,
    }
    complete_done(qp, inner);
    true
}

/// Places a read response's data, if the read asked for it and has not got
/// it yet.
fn read_response(qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>, now: u64) {
    let mtu = qp.mtu(inner);
    let window = &mut inner.send.window;
    let payload = pkt.payload;
    match window.read_response(pkt.headers.bth.psn, payload.len(), mtu) {
        ReadResponse::Ignore => {}
        ReadResponse::Place { slot, n, at } => {
            let placed = match window.get(slot) {
                _ if payload.is_empty() => Ok(()),
                Some(e) => e.local.scatter(at, payload),
                None => Err(MrError::Range),
            };
            match placed {
                Ok(()) => window.read_placed(slot, n, now),
                // As if lost: it is asked for again.
                Err(MrError::Busy) => {}
                Err(_) => fail(qp, inner, slot, WcStatus::BadRespErr),
            }
        }
        ReadResponse::Bad { slot } => fail(qp, inner, slot, WcStatus::BadRespErr),
    }
}

/// Completes the FLUSH or ATOMIC WRITE in `slot`: rxe answers both with a
/// read response that holds nothing but an ACK.
fn committed(qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>, slot: u32, now: u64) {
    let acked = matches!(
        pkt.headers.ext.aeth().map(|a| a.syndrome),
        Some(Syndrome::Ack { .. })
    );
    if pkt.headers.bth.opcode == Opcode::RcReadResponseOnly && pkt.payload.is_empty() && acked {
        inner.send.window.answered(slot, now);
    } else {
        fail(qp, inner, slot, WcStatus::BadRespErr);
    }
}

/// Places an atomic's original value.
fn atomic_ack(qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>, now: u64) {
    let Some(ack) = pkt.headers.ext.atomic_ack() else {
        return;
    };
    let window = &mut inner.send.window;
    let Some(slot) = window.answer_for(Kind::Atomic, pkt.headers.bth.psn) else {
        return;
    };
    let orig = ack.orig.to_ne_bytes();
    match window.get(slot).map(|e| e.local.scatter(0, &orig)) {
        Some(Ok(())) => window.answered(slot, now),
        // As if lost: the responder answers the atomic sent again from
        // what it remembers.
        Some(Err(MrError::Busy)) => {}
        _ => fail(qp, inner, slot, WcStatus::LocProtErr),
    }
}

/// The device timer fired at `now`: resend after a silence, and give up
/// with `IBV_WC_RETRY_EXC_ERR` after `retry_cnt` tries. Returns whether the
/// requester should run.
pub(crate) fn tick(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, now: u64) -> bool {
    // Only RC waits for the peer, or is told to wait by it.
    if qp.qp_type != QpType::Rc {
        return false;
    }
    let (timeout, retry_cnt) = (inner.attr.timeout, inner.attr.retry_cnt);
    match inner.send.window.tick(now, timeout, retry_cnt, &Jiffies) {
        Timer::Idle => false,
        Timer::RnrDone => resend(qp, inner, Resend::Rnr),
        Timer::Probe => {
            inner.count(dev, Counter::Retransmits);
            resend(qp, inner, Resend::Probe)
        }
        Timer::Retry => {
            inner.count(dev, Counter::Retransmits);
            resend(qp, inner, Resend::Timeout)
        }
        Timer::GiveUp => {
            inner.count(dev, Counter::RetryExceeded);
            let head = inner.send.window.head();
            fail(qp, inner, head, WcStatus::RetryExcErr);
            false
        }
    }
}

/// The requester goes back to the oldest PSN not acknowledged, for
/// `reason`; it should run.
fn resend(qp: &QpCore, inner: &QpInner, reason: Resend) -> bool {
    trace::retransmit(qp.qpn.get(), inner.send.window.una().get(), reason);
    true
}

/// A completion of `qp`'s that failed with `status`.
pub(crate) fn error_wc(qp: &QpCore, wr_id: u64, opcode: WcOpcode, status: WcStatus) -> Wc {
    qp.wc(wr_id, status, opcode, 0)
}

/// Completes, in order, the requests that are done.
pub(crate) fn complete_done(qp: &QpCore, inner: &mut QpInner) {
    while let Some(wc) = inner
        .send
        .window
        .pop_done_with(|e| entry_wc(qp, e, WcStatus::Success))
    {
        qp.send_done(inner.send.window.head());
        if let Some(wc) = wc {
            qp.complete_send(inner, &wc, false);
        }
    }
}

/// Reports a request that left the queue with `status`.
fn complete_entry(qp: &QpCore, inner: &mut QpInner, e: &Entry, status: WcStatus) {
    if let Some(wc) = entry_wc(qp, e, status) {
        qp.complete_send(inner, &wc, false);
    }
}

/// The completion of a request that left the queue with `status`: always
/// in error, and when it succeeded only if it was signalled.
fn entry_wc(qp: &QpCore, e: &Entry, status: WcStatus) -> Option<Wc> {
    let ok = status == WcStatus::Success;
    if ok && !qp.signals(&e.wqe) {
        return None;
    }
    Some(Wc {
        byte_len: if ok { e.wqe.length } else { 0 },
        ..error_wc(qp, e.wqe.wr_id, WcOpcode::from(e.wqe.opcode), status)
    })
}

/// Completes the requests before slot `index` that are not done with
/// `IBV_WC_WR_FLUSH_ERR`, in order: the one at `index` failed, and
/// completions come in posting order.
pub(crate) fn flush_before(qp: &QpCore, inner: &mut QpInner, index: u32) {
    while let Some(taken) = inner.send.window.pop_before(index) {
        qp.send_done(inner.send.window.head());
        let Some(e) = taken else { continue };
        // A bind or invalidation behind a read took effect: say so.
        let status = if e.track.is_done() {
            WcStatus::Success
        } else {
            WcStatus::WrFlushErr
        };
        complete_entry(qp, inner, &e, status);
    }
}

/// Ends the request at `index` with `status`; the QP enters the error state.
pub(crate) fn fail(qp: &QpCore, inner: &mut QpInner, index: u32, status: WcStatus) {
    complete_done(qp, inner);
    flush_before(qp, inner, index);
    if let Some(e) = inner.send.window.remove_failed(index) {
        qp.send_done(inner.send.window.head());
        let wc = error_wc(qp, e.wqe.wr_id, WcOpcode::from(e.wqe.opcode), status);
        qp.complete_send(inner, &wc, false);
    }
    qp.enter_error(inner);
}
