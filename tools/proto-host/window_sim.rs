// SPDX-License-Identifier: GPL-2.0

//! The send window against a model responder over a lossy link: the
//! property behind the `send_window` fuzz target and its smoke test.
//!
//! The requester side drives [`SendWindow`] as the driver's requester and
//! completer do; the responder answers in order as the C rxe does (an ACK
//! where one is asked for, a sequence NAK once per gap, duplicates answered
//! again, a read from no earlier than its last replay began, and only while
//! its resource is among the last `MAX_RD_ATOMIC` taken, as the C rxe
//! insists). The input picks the work requests and which packets the link
//! drops, duplicates or holds back behind later ones; once it runs out, the
//! link is faultless. Checked: no panic, every request completes in posting
//! order, every read response is placed once, at the right offset, a read
//! completes with all of them, and nothing stalls: once the link stops
//! misbehaving, the requests complete, or the retry count runs out within
//! the time that takes.

extern crate alloc;

use crate::proto::{
    psn::Psn,
    ring::Ring,
    window::{Clock, Kind, Next, ReadResponse, SendWindow, Timer, Track},
};
use alloc::{collections::VecDeque, vec, vec::Vec};
use core::convert::Infallible;

const MTU: u32 = 256;
/// QP timeout code 10: 4.2 ms, 5 ticks.
const TIMEOUT: u8 = 10;
const RETRY_CNT: u8 = 7;
const MAX_RD_ATOMIC: u32 = 4;
/// The longest the retries of one request can last, in ticks: 8 timeouts of
/// at most 8 times the QP's, or of the 4 s cap on the learnt one.
const GIVE_UP_WITHIN: u64 = 8 * 4000 + 8 * 8 * 5;

/// One tick per millisecond.
pub(crate) struct Ms;

impl Clock for Ms {
    fn usecs_to_ticks(&self, usecs: u32) -> u64 {
        u64::from(usecs.div_ceil(1000))
    }
    fn ticks_to_usecs(&self, ticks: u64) -> u32 {
        (ticks * 1000) as u32
    }
}

/// A work request: its position in posting order and its length.
struct Wr {
    track: Track,
    id: usize,
    length: u32,
    /// Its completion is awaited: a SEND or WRITE that is not asks for no
    /// ACK of its own.
    signalled: bool,
    /// Read responses placed so far, by number.
    placed: Vec<bool>,
}

impl AsRef<Track> for Wr {
    fn as_ref(&self) -> &Track {
        &self.track
    }
}

impl AsMut<Track> for Wr {
    fn as_mut(&mut self) -> &mut Track {
        &mut self.track
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Request {
    Data {
        psn: Psn,
        ack_req: bool,
    },
    Read {
        psn: Psn,
        len: u32,
    },
    Atomic {
        psn: Psn,
    },
    /// A FLUSH or ATOMIC WRITE.
    Commit {
        psn: Psn,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Response {
    Ack(Psn),
    SeqNak(Psn),
    Read {
        psn: Psn,
        len: usize,
    },
    AtomicAck(Psn),
    /// The empty read response that answers a FLUSH or ATOMIC WRITE.
    Committed(Psn),
}

/// The input, a byte at a time; zeros once it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
}

/// The link: drops a packet, delivers it twice, or holds it back until
/// after the packets of the next round, when the input says so, while it
/// lasts.
struct Link<'a> {
    input: Input<'a>,
    /// When the link last did anything but deliver a packet once, in order.
    last_fault: u64,
}

impl Link<'_> {
    /// Carries `packet`, at `now`, into `to`, or into `late` to come after
    /// the next round's packets.
    fn carry<T: Copy>(&mut self, packet: T, now: u64, to: &mut VecDeque<T>, late: &mut Vec<T>) {
        let byte = self.input.byte().unwrap_or(u8::MAX);
        if byte < 96 {
            self.last_fault = now;
        }
        match byte {
            0..=63 => {}
            64..=79 => {
                to.push_back(packet);
                to.push_back(packet);
            }
            80..=95 => late.push(packet),
            _ => to.push_back(packet),
        }
    }
}

/// A read, atomic or commit the responder took: its first response PSN
/// and how many, and where its last replay began.
struct Resource {
    psn: Psn,
    n: u32,
    from: Psn,
}

/// The responder, as far as PSNs go. It keeps the last `MAX_RD_ATOMIC`
/// reads (each request of one), atomics and commits it took, as the C
/// rxe's ring of `max_dest_rd_atomic` does, and drops one asked again
/// after its resource went.
pub(crate) struct Responder {
    epsn: Psn,
    nak_sent: bool,
    resources: VecDeque<Resource>,
}

impl Responder {
    pub(crate) fn new() -> Self {
        Self {
            epsn: Psn::new(0),
            nak_sent: false,
            resources: VecDeque::new(),
        }
    }

    /// The PSN it expects next.
    #[cfg(test)]
    pub(crate) fn expected(&self) -> Psn {
        self.epsn
    }

    pub(crate) fn receive(&mut self, req: Request, out: &mut VecDeque<Response>) {
        let (psn, n) = match req {
            Request::Data { psn, .. } | Request::Atomic { psn } | Request::Commit { psn } => {
                (psn, 1)
            }
            Request::Read { psn, len } => (psn, len.div_ceil(MTU).max(1)),
        };
        if psn.after(self.epsn) {
            if !self.nak_sent {
                self.nak_sent = true;
                out.push_back(Response::SeqNak(self.epsn));
            }
            return;
        }
        let new = psn == self.epsn;
        if new && !matches!(req, Request::Data { .. }) {
            self.take(psn, n);
        }
        match req {
            Request::Data { ack_req, .. } if new && ack_req => out.push_back(Response::Ack(psn)),
            Request::Data { .. } if new => {}
            // A duplicate is acknowledged up to what arrived.
            Request::Data { .. } => out.push_back(Response::Ack(self.epsn + Psn::MASK)),
            _ if !new && !self.replay(psn, n) => {}
            Request::Read { len, .. } => {
                for i in 0..n {
                    let at = i * MTU;
                    let len = (len - at).min(MTU) as usize;
                    out.push_back(Response::Read { psn: psn + i, len });
                }
            }
            Request::Atomic { .. } => out.push_back(Response::AtomicAck(psn)),
            // Answered again when it comes again, never carried out twice.
            Request::Commit { .. } => out.push_back(Response::Committed(psn)),
        }
        if new {
            self.epsn = self.epsn + n;
            self.nak_sent = false;
        }
    }

    /// Takes a resource for the `n` responses from `psn`, in place of the
    /// oldest one if all are taken.
    fn take(&mut self, psn: Psn, n: u32) {
        if self.resources.len() == MAX_RD_ATOMIC as usize {
            self.resources.pop_front();
        }
        self.resources.push_back(Resource { psn, n, from: psn });
    }

    /// Whether a read, atomic or commit asked again for `n` responses from
    /// `psn` is answered: only within one whose resource is kept, and from
    /// no earlier than its last replay.
    fn replay(&mut self, psn: Psn, n: u32) -> bool {
        let Some(r) = self
            .resources
            .iter_mut()
            .rev()
            .find(|r| psn.distance_from(r.psn) < r.n)
        else {
            return false;
        };
        if psn.distance_from(r.psn) < r.from.distance_from(r.psn)
            || psn.distance_from(r.psn) + n > r.n
        {
            return false;
        }
        r.from = psn;
        true
    }
}

/// Panics unless the window's invariants hold.
fn holds(w: &SendWindow<Vec<Option<Wr>>>) {
    if let Err(broken) = w.check() {
        panic!("window invariant broken: {broken}");
    }
}

/// Runs the requests the input describes over a link that misbehaves as it
/// says; panics if a property fails. Returns whether every request
/// completed (rather than ran out of retries, or the input described none).
///
/// The first byte is the number of requests, each of the next two bytes per
/// request its kind and length; every byte after that, one per packet, says
/// whether the link drops it (below 64), delivers it twice (below 80) or
/// after the next round's packets (below 96). The window's invariants are
/// checked after every event.
pub fn check_window(data: &[u8]) -> bool {
    let Some((&count, rest)) = data.split_first() else {
        return false;
    };
    let count = usize::from(count % 24) + 1;
    if rest.len() < 2 * count {
        return false;
    }
    let (spec, faults) = rest.split_at(2 * count);
    let mut posted: VecDeque<(Kind, u32, bool)> = spec
        .chunks_exact(2)
        .map(|c| {
            let (kind, length) = match c[0] % 4 {
                0 => (Kind::Data, u32::from(c[1]) * 13 % (6 * MTU) + 1),
                1 => (Kind::Read, u32::from(c[1]) * 29 % (70 * MTU) + 1),
                2 => (Kind::Atomic, 8),
                _ => (Kind::Commit, u32::from(c[1]) * 13),
            };
            (kind, length, c[0] & 4 == 0)
        })
        .collect();
    let ring = Ring::new(15, 64).unwrap();
    let mut slots = Vec::new();
    slots.resize_with(16, || None);
    let mut w = SendWindow::new(slots, ring, &Ms);
    let mut link = Link {
        input: Input(faults),
        last_fault: 0,
    };
    let mut responder = Responder::new();
    let (mut requests, mut responses) = (VecDeque::new(), VecDeque::new());
    // Packets the link holds back: this round's, and the last round's.
    let (mut late_requests, mut held_requests) = (Vec::new(), Vec::new());
    let (mut late_responses, mut held_responses) = (Vec::new(), Vec::new());
    let (mut next_id, mut completed) = (0, 0);
    let mut now = 0u64;
    while completed < count {
        assert!(
            now - link.last_fault < 4 * GIVE_UP_WITHIN,
            "stalled at {now} with {completed} of {count} done"
        );
        // The requester sends what it may.
        loop {
            match w.next_to_send(true, MAX_RD_ATOMIC) {
                Next::Wait => break,
                Next::Take => {
                    let Some((kind, length, signalled)) = posted.pop_front() else {
                        break;
                    };
                    let track = Track::new(kind, length, MTU, w.next_psn());
                    let id = next_id;
                    next_id += 1;
                    let placed = vec![false; track.npsn() as usize];
                    let Ok(()) = w.admit_with(|slot| -> Result<(), Infallible> {
                        *slot = Some(Wr {
                            track,
                            id,
                            length,
                            signalled,
                            placed,
                        });
                        Ok(())
                    });
                    holds(&w);
                }
                Next::Send(slot) => {
                    let p = w.next_packet(slot).unwrap();
                    let e = w.get(slot).unwrap();
                    let (kind, npsn, length) = (e.track.kind(), e.track.npsn(), e.length);
                    let awaited = kind.awaits_answer(p.n + 1 == npsn, e.signalled);
                    let ack_req = w.ack_req(true, awaited, p.psn, now);
                    let req = match kind {
                        Kind::Data => Request::Data {
                            psn: p.psn,
                            ack_req,
                        },
                        Kind::Read => Request::Read {
                            psn: p.psn,
                            len: (length - p.n * MTU).min(p.responses * MTU),
                        },
                        Kind::Atomic => Request::Atomic { psn: p.psn },
                        Kind::Commit => Request::Commit { psn: p.psn },
                    };
                    w.sent(slot, p, true, now);
                    holds(&w);
                    link.carry(req, now, &mut requests, &mut late_requests);
                }
            }
        }
        // What the link held back comes after this round's packets.
        requests.extend(held_requests.drain(..));
        held_requests.append(&mut late_requests);
        let moved = !requests.is_empty();
        // The responder answers.
        let mut answers = VecDeque::new();
        for req in requests.drain(..) {
            responder.receive(req, &mut answers);
        }
        for r in answers {
            link.carry(r, now, &mut responses, &mut late_responses);
        }
        responses.extend(held_responses.drain(..));
        held_responses.append(&mut late_responses);
        // The completer takes the answers.
        let moved = moved || !responses.is_empty();
        for r in responses.drain(..) {
            match r {
                Response::Ack(psn) if w.expects(psn) => w.ack(psn, now),
                Response::SeqNak(psn) if w.expects(psn) => w.seq_nak(psn, now),
                Response::Read { psn, len } if w.expects(psn) => {
                    match w.read_response(psn, len, MTU) {
                        ReadResponse::Ignore => {}
                        ReadResponse::Place { slot, n, at } => {
                            let e = w.get_mut(slot).unwrap();
                            let i = n as usize;
                            assert_eq!(at, i * MTU as usize, "read {}", e.id);
                            assert!(!e.placed[i], "read {} response {n} placed twice", e.id);
                            e.placed[i] = true;
                            let end = (at + len) as u32;
                            assert!(end == e.length || len == MTU as usize);
                            w.read_placed(slot, n, now);
                        }
                        ReadResponse::Bad { slot } => panic!("bad response {psn:?} in {slot}"),
                    }
                }
                Response::AtomicAck(psn) if w.expects(psn) => {
                    if let Some(slot) = w.answer_for(Kind::Atomic, psn) {
                        w.answered(slot, now);
                    }
                }
                Response::Committed(psn) if w.expects(psn) => {
                    if let Some(slot) = w.answer_for(Kind::Commit, psn) {
                        w.answered(slot, now);
                    }
                }
                _ => {}
            }
            holds(&w);
        }
        while let Some(id) = w.pop_done_with(|e| {
            assert!(e.track.kind() != Kind::Read || e.placed.iter().all(|&p| p));
            e.id
        }) {
            holds(&w);
            assert_eq!(id, completed, "completed out of order");
            completed += 1;
        }
        if !moved {
            // Nothing on the link: time passes until the timer acts.
            now += 1;
            let timer = w.tick(now, TIMEOUT, RETRY_CNT, &Ms);
            holds(&w);
            if timer == Timer::GiveUp {
                assert!(
                    now - link.last_fault < GIVE_UP_WITHIN,
                    "gave up at {now}, {} after the last fault",
                    now - link.last_fault
                );
                return false;
            }
        }
    }
    assert!(posted.is_empty());
    true
}
