// SPDX-License-Identifier: GPL-2.0

//! Sends the responder's answers to its peer: ACKs, NAKs, atomic results and
//! READ responses, in the order of the requests they answer.
//!
//! A READ response goes out a burst of packets at a time. What is left of
//! it, and every answer after it, waits on the QP (`answer_ring.rs`) until
//! the device's work sends the next burst: a READ of gigabytes holds neither
//! the QP nor the receive work for its whole length, and other QPs get their
//! turns in between.

use crate::answer_ring::{ack, Answer, ReadResponse};
use crate::device_services::Services;
use crate::proto::{
    headers::{Aeth, AtomicAckEth},
    opcode::Opcode,
    packet::{ExtHeaders, Headers},
};
use crate::qp_core::{QpCore, QpInner};
use kernel::prelude::*;

/// The packets the device's work sends in one go, before other QPs get
/// their turn.
const BURST: u32 = 64;

/// Sends `answer` after the ACK the QP owes, or has it wait behind the
/// answers before it.
pub(crate) fn answer(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, answer: Answer) {
    send_owed_ack(dev, qp, inner);
    send_or_queue(dev, qp, inner, answer);
}

/// Sends the ACK the QP owes, if any: the burst of packets that drew it
/// has been received, or another answer goes back.
pub(crate) fn send_owed_ack(dev: &impl Services, qp: &QpCore, inner: &mut QpInner) {
    if let Some(psn) = inner.recv.ack_owed.take() {
        let ack = Answer::aeth(Opcode::RcAck, psn, ack(), inner.recv.msn);
        send_or_queue(dev, qp, inner, ack);
    }
}

/// Sends `a` from the receive path, as far as the burst being received
/// may still send answers itself: other QPs' packets wait behind it, and a
/// peer asking for many READs must not keep them waiting until their
/// senders give up. The rest waits for the device's work.
fn send_or_queue(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, a: Answer) {
    let mut budget = if inner.recv.answers.is_empty() {
        dev.take_inline_answers(a.packets())
    } else {
        0
    };
    if budget == 0 {
        return wait(dev, qp, inner, a);
    }
    if let Some(rest) = send(dev, qp, inner, a, &mut budget) {
        wait(dev, qp, inner, rest);
    }
}

/// Queues `a` and has the device's work send it. One that does not fit is
/// lost, as a packet would be: the requester asks again.
fn wait(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, a: Answer) {
    let answers = &mut inner.recv.answers;
    let _ = answers.push(a);
    if !answers.is_empty() {
        // Should the kick fail, the device timer sends them.
        let _ = qp.kick(dev, true);
    }
}

/// Sends the next burst of the answers waiting, from the device's work,
/// and has it come back for the rest.
pub(crate) fn resume(dev: &impl Services, qp: &QpCore, inner: &mut QpInner) {
    let mut budget = BURST;
    while budget > 0 {
        let Some(a) = inner.recv.answers.take() else {
            return;
        };
        if let Some(rest) = send(dev, qp, inner, a, &mut budget) {
            inner.recv.answers.restore(rest);
        }
    }
    if !inner.recv.answers.is_empty() {
        let _ = qp.kick(dev, true);
    }
}

/// Sends `a`, or as much of it as `budget` allows; returns what is left.
fn send(
    dev: &impl Services,
    qp: &QpCore,
    inner: &QpInner,
    a: Answer,
    budget: &mut u32,
) -> Option<Answer> {
    let headers = match a {
        Answer::Read(mut r) => {
            send_read(dev, qp, inner, &mut r, budget);
            return (r.next < r.npsn).then_some(Answer::Read(r));
        }
        Answer::Aeth {
            opcode,
            psn,
            syndrome,
            msn,
        } => Headers {
            bth: qp.bth(inner.attr.dest_qpn, opcode, psn),
            ext: {
                let mut ext = ExtHeaders::default();
                ext.set_aeth(Aeth { syndrome, msn });
                ext
            },
        },
        Answer::Atomic { psn, msn, orig } => Headers {
            bth: qp.bth(inner.attr.dest_qpn, Opcode::RcAtomicAck, psn),
            ext: {
                let mut ext = ExtHeaders::default();
                ext.set_aeth(Aeth {
                    syndrome: ack(),
                    msn,
                });
                ext.set_atomic_ack(AtomicAckEth { orig });
                ext
            },
        },
    };
    qp.send_to_peer(dev, inner, headers, 0, |_| Ok(()));
    *budget = budget.saturating_sub(1);
    None
}

/// Sends up to `budget` more packets of `r`, counting them off the budget.
fn send_read(
    dev: &impl Services,
    qp: &QpCore,
    inner: &QpInner,
    r: &mut ReadResponse,
    budget: &mut u32,
) {
    while r.next < r.npsn && *budget > 0 {
        let n = r.next;
        let opcode = match (n == 0, n + 1 == r.npsn) {
            (true, true) => Opcode::RcReadResponseOnly,
            (true, false) => Opcode::RcReadResponseFirst,
            (false, false) => Opcode::RcReadResponseMiddle,
            (false, true) => Opcode::RcReadResponseLast,
        };
        let mut ext = ExtHeaders::default();
        if opcode != Opcode::RcReadResponseMiddle {
            ext.set_aeth(Aeth {
                syndrome: ack(),
                msn: r.msn,
            });
        }
        let at = n as usize * r.mtu;
        let chunk = r.len.saturating_sub(at).min(r.mtu);
        let headers = Headers {
            bth: qp.bth(inner.attr.dest_qpn, opcode, r.psn + n),
            ext,
        };
        let (mr, offset) = (&r.mr, r.offset + at);
        qp.send_to_peer(dev, inner, headers, chunk, |buf| match mr {
            Some(mr) => mr.read(offset, chunk, buf).map_err(|_| EFAULT),
            None => Ok(()),
        });
        r.next += 1;
        *budget -= 1;
    }
}
