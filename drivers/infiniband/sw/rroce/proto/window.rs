// SPDX-License-Identifier: GPL-2.0

//! The requester's window: which work requests have packets in flight, what
//! the peer has acknowledged, and when to send again.
//!
//! [`SendWindow`] keeps the work requests a QP has taken from its send queue,
//! by slot, each with its [`Track`]: the PSNs it was given and how far it
//! got. Going back to a PSN means finding the request that holds it and
//! sending again from that packet, so a retransmission needs nothing else.
//!
//! Everything here is a function of its arguments: the time comes in as
//! `now` (the caller's ticks, jiffies in the kernel) with a [`Clock`] to
//! convert microseconds, and the methods say what to do rather than do it.
//! The requester and completer build packets and completions around it.
//!
//! Loss is found three ways: a sequence NAK, a gap in read responses, and
//! the peer's silence. The first two halve the window
//! ([`SendWindow::lost`]), as does an answer slow enough to show packets
//! queued at the peer. A silence longer than the QP's timeout is a retry,
//! which counts against `retry_cnt`, backs the timer off and shrinks the
//! window to its least, to grow back by what each answer acknowledges up to
//! half what it was; past that, each response that makes progress opens it
//! by one. A silence longer than the peer usually takes to answer is a
//! probe, not counted: the last packet alone, asking for an ACK, then, if
//! the peer stays silent, everything not acknowledged.
//!
//! This file holds the window and how requests enter and leave it;
//! `window/track.rs` each request's PSNs and progress,
//! `window/response.rs` what the peer's responses mean for the window, and
//! `window/timer.rs` loss, rewinds and the timer.

use super::psn::Psn;
use super::ring::Ring;
use super::rtt::Rtt;
use core::ops::DerefMut;

pub(crate) use self::track::{Kind, Track};

/// Unacknowledged packets a QP may have in flight.
pub(crate) const WINDOW: u32 = 128;
/// What losses may shrink a QP's window to.
const MIN_WINDOW: u32 = 8;
/// Packets between two that ask for an ACK, as the C rxe.
const ACK_EVERY: u32 = 64;
/// Each timeout doubles the retransmission timer, up to 2^MAX_BACKOFF times
/// the QP's timeout; each request that completes halves it again.
const MAX_BACKOFF: u8 = 3;
/// The most the peer's measured answer time may stretch the timeout to, in
/// microseconds, so that a dead link is still found in seconds.
const MAX_RTT_TIMEOUT_US: u32 = 4_000_000;
/// An answer slower than this, in microseconds, shows packets queued at the
/// peer: half of what the timeout may stretch to, before it fires for
/// packets that are only waiting.
const CROWDED_US: u32 = MAX_RTT_TIMEOUT_US / 2;
/// The most response packets one read request asks for. A large RDMA READ
/// goes out as several requests, so that its responses, like any other
/// packets, stay within the window instead of arriving in one burst.
const READ_CHUNK: u32 = WINDOW / 2;
/// The RNR retry count that means "retry for ever" (IBA 9.7.5.2.8).
const RNR_RETRY_FOREVER: u8 = 7;

/// Converts between microseconds and the ticks `now` is counted in.
pub(crate) trait Clock {
    /// `usecs` in ticks, rounded up.
    fn usecs_to_ticks(&self, usecs: u32) -> u64;
    /// `ticks` in microseconds.
    fn ticks_to_usecs(&self, ticks: u64) -> u32;
}

/// The next packet to send for the request in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NextPacket {
    /// Its PSN.
    pub(crate) psn: Psn,
    /// Which of the request's packets it is (for a read, the first
    /// response packet it asks for).
    pub(crate) n: u32,
    /// For a read: how many response packets it asks for.
    pub(crate) responses: u32,
}

/// What the requester does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Take the next request from the send queue: all taken were sent.
    Take,
    /// Send the next packet of the request in this slot.
    Send(u32),
    /// Wait for the peer, or for room in the queue.
    Wait,
}

/// What the timer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Nothing to do.
    Idle,
    /// An RNR wait ended: send again.
    RnrDone,
    /// The peer was silent longer than it takes: sent again, the last
    /// packet or from the oldest unacknowledged one, without counting a
    /// retry.
    Probe,
    /// The timeout passed: sent again, as a retry.
    Retry,
    /// The timeout passed once more than `retry_cnt` allows.
    GiveUp,
}

/// What a read response packet means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadResponse {
    /// Nothing: not asked for, received before, or the read is done.
    Ignore,
    /// The read in `slot` expects it, as its response `n`: its payload goes
    /// at byte `at` of the read's memory, then [`SendWindow::read_placed`].
    Place { slot: u32, n: u32, at: usize },
    /// The read in `slot` expects it but its length is wrong.
    Bad { slot: u32 },
}

/// What an RNR NAK means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RnrNak {
    /// Wait, then send again from the PSN it named.
    Wait,
    /// `rnr_retry` is exhausted: the request in the slot, if any, fails.
    Exceeded(Option<u32>),
}

/// The requester's window over the work requests taken from a send queue.
///
/// `S` holds one optional entry per send queue slot; each entry carries
/// its [`Track`].
///
/// # Invariants
///
/// Between two calls, as [`SendWindow::check`] (`window/invariant.rs`)
/// verifies:
/// - Slots: `head`, `cur` and `next` are slots of the ring, in that order
///   from `head` (`cur` may equal `next`); the slots from `next` back round
///   to `head` are empty. Every request from `head` to `cur` has all its
///   request packets sent. (A flush breaks this while it pops, and ends it
///   with [`SendWindow::flushed`].)
/// - PSNs: the requests taken hold consecutive PSN ranges, oldest first,
///   and the last ends at `psn`, the next request's. `high` is not after
///   `psn`, nor `una` after `psn`; `una` is not before the oldest request's
///   first PSN, nor after the PSN its first request not done has been
///   acknowledged up to.
/// - Pacing: `window` and `threshold` are within `MIN_WINDOW..=WINDOW`,
///   `backoff` at most `MAX_BACKOFF`, `probes` at most `PROBES`.
pub(crate) struct SendWindow<S> {
    /// Taken work requests, by send queue slot.
    slots: S,
    ring: Ring,
    /// The oldest request not yet completed: the consumer index.
    head: u32,
    /// The request being sent.
    cur: u32,
    /// The next slot to take a request into.
    next: u32,
    /// The PSN of the next request.
    psn: Psn,
    /// The oldest PSN not acknowledged.
    una: Psn,
    /// The PSN after the last one ever sent: a rewind sends some again,
    /// but the peer may acknowledge any before this one.
    high: Psn,
    /// Unacknowledged packets allowed in flight: WINDOW at first, halved
    /// by each loss and each answer slower than `crowded`, MIN_WINDOW after
    /// a timeout; one more with each other response that makes progress,
    /// or as many as it acknowledges while below `threshold`.
    window: u32,
    /// Half the window before the last timeout, or the window after the
    /// last loss.
    threshold: u32,
    /// [`CROWDED_US`] in ticks.
    crowded: u64,
    /// Packets sent since one asked for an ACK.
    noack: u32,
    /// Retransmissions since the last progress.
    retries: u8,
    /// Timeouts have stretched the retransmission timer by 2^backoff.
    backoff: u8,
    rnr_retries: u8,
    /// When the requester began to wait for the peer: the last progress,
    /// or the last packet sent, whichever came later. Not the first packet
    /// of a burst: the answer to it is asked for at the end of the burst,
    /// which a busy requester may take longer than the timeout to send.
    waiting_since: u64,
    /// How long the peer takes to answer.
    rtt: Rtt,
    /// Probes since the last progress: 1 after the last packet alone, 2
    /// once everything not acknowledged was sent again.
    probes: u8,
    /// The next packet asks for an ACK, whatever it is: it is a probe.
    ack_next: bool,
    /// After an RNR NAK: when to try again.
    rnr_until: Option<u64>,
    /// Packets sent, wrapping: whoever arms the timer for what was sent
    /// tells by a change that something was.
    sends: u32,
}

impl<E, S> SendWindow<S>
where
    E: AsRef<Track> + AsMut<Track>,
    S: DerefMut<Target = [Option<E>]>,
{
    /// The window over a send queue of geometry `ring`, whose entries go in
    /// `slots`, one for each slot of the ring, all empty; `clock` converts
    /// the time `now` is given in.
    pub(crate) fn new(slots: S, ring: Ring, clock: &impl Clock) -> Self {
        Self {
            slots,
            ring,
            head: 0,
            cur: 0,
            next: 0,
            psn: Psn::new(0),
            una: Psn::new(0),
            high: Psn::new(0),
            window: WINDOW,
            threshold: WINDOW,
            crowded: clock.usecs_to_ticks(CROWDED_US),
            noack: 0,
            retries: 0,
            backoff: 0,
            rnr_retries: 0,
            waiting_since: 0,
            rtt: Rtt::default(),
            probes: 0,
            ack_next: false,
            rnr_until: None,
            sends: 0,
        }
    }

    /// Starts the send PSNs at `psn` (modify with `IB_QP_SQ_PSN`).
    pub(crate) fn reset(&mut self, psn: Psn) {
        self.psn = psn;
        self.una = psn;
        self.high = psn;
        self.backoff = 0;
        self.window = WINDOW;
        self.threshold = WINDOW;
        self.rtt = Rtt::default();
        self.probes = 0;
    }

    /// The oldest request not completed: the send queue's consumer index.
    pub(crate) fn head(&self) -> u32 {
        self.head
    }

    /// The oldest PSN not acknowledged, where a rewind sends from.
    pub(crate) fn una(&self) -> Psn {
        self.una
    }

    /// The slot the next request is taken into.
    pub(crate) fn next_slot(&self) -> u32 {
        self.next
    }

    /// The PSN the next request taken starts at.
    pub(crate) fn next_psn(&self) -> Psn {
        self.psn
    }

    /// Whether an RNR NAK holds the requester back.
    pub(crate) fn rnr_waiting(&self) -> bool {
        self.rnr_until.is_some()
    }

    /// How many packets have been sent, wrapping.
    pub(crate) fn sends(&self) -> u32 {
        self.sends
    }

    /// The entry in slot `index`, if any.
    pub(crate) fn get(&self, index: u32) -> Option<&E> {
        self.slots.get(index as usize)?.as_ref()
    }

    /// The entry in slot `index`, if any, to change.
    pub(crate) fn get_mut(&mut self, index: u32) -> Option<&mut E> {
        self.slots.get_mut(index as usize)?.as_mut()
    }

    fn track<'a>(&'a mut self, index: u32) -> Option<&'a mut Track>
    where
        E: 'a,
    {
        self.get_mut(index).map(|e| e.as_mut())
    }

    /// Whether packets wait for the peer.
    fn outstanding(&self) -> bool {
        self.una != self.psn
    }

    /// Takes `e` into the next slot, which [`Next::Take`] said is free;
    /// `e`'s track starts at [`SendWindow::next_psn`].
    #[cfg(test)]
    pub(crate) fn admit(&mut self, e: E) {
        let Ok(()) = self.admit_with(|slot| -> Result<(), core::convert::Infallible> {
            *slot = Some(e);
            Ok(())
        });
    }

    /// Takes a request into the next slot, which [`Next::Take`] said is
    /// free, as `take` makes it there (rather than moved in after): unless
    /// `take` fails, the slot is then full and its track starts at
    /// [`SendWindow::next_psn`].
    pub(crate) fn admit_with<X>(
        &mut self,
        take: impl FnOnce(&mut Option<E>) -> Result<(), X>,
    ) -> Result<(), X> {
        let index = self.next;
        let Some(slot) = self.slots.get_mut(index as usize) else {
            return Ok(());
        };
        take(slot)?;
        if let Some(e) = slot {
            self.psn = self.psn + e.as_ref().npsn;
            self.next = self.ring.next(index);
        }
        Ok(())
    }

    /// The requests taken, oldest first.
    fn taken<'a>(&'a self) -> impl Iterator<Item = &'a Track>
    where
        E: 'a,
    {
        let mut i = self.head;
        core::iter::from_fn(move || {
            while i != self.next {
                let slot = i;
                i = self.ring.next(i);
                if let Some(e) = self.get(slot) {
                    return Some(e.as_ref());
                }
            }
            None
        })
    }

    /// The slot of the request that holds `psn`, among those taken.
    pub(crate) fn find(&self, psn: Psn) -> Option<u32> {
        let mut i = self.head;
        while i != self.next {
            if self.get(i).is_some_and(|e| e.as_ref().holds(psn)) {
                return Some(i);
            }
            i = self.ring.next(i);
        }
        None
    }

    /// Whether a read or atomic (FLUSH and ATOMIC WRITE included) taken has
    /// not been answered: what a fenced request waits for (IBA 10.8.3.3).
    pub(crate) fn reads_pending(&self) -> bool {
        self.taken().any(|t| t.takes_resource() && !t.done)
    }

    /// The responder resources that what was sent holds, from the oldest
    /// read or atomic not answered in full on: what `max_rd_atomic` bounds.
    /// Each chunk of a read counts, as the responder holds a resource for
    /// each (the C rxe a ring of `max_dest_rd_atomic`, whose oldest a new
    /// one overwrites). So do those answered after it: the resource of one
    /// still to ask again for must not be overwritten.
    fn reads_in_flight(&self) -> u32 {
        let high = self.high;
        self.taken()
            .skip_while(|t| !t.takes_resource() || t.done)
            .filter(|t| t.takes_resource() && t.first_psn.before(high))
            .map(|t| {
                if t.kind != Kind::Read {
                    return 1;
                }
                // The chunks asked for, from the one that holds the first
                // missing response.
                let chunk = t.chunk.max(1);
                let asked = high.distance_from(t.first_psn).min(t.npsn);
                let answered = if t.done { 0 } else { t.got / chunk };
                // Saturating: a new SQ PSN may set `high` back under it.
                asked.div_ceil(chunk).saturating_sub(answered)
            })
            .sum()
    }

    // Sending.

    /// What the requester does next: take a request, send the next packet
    /// of the one in a slot (on RC within the window, and for a new read or
    /// atomic within `max_rd_atomic`), or wait.
    pub(crate) fn next_to_send(&mut self, rc: bool, max_rd_atomic: u32) -> Next {
        loop {
            let cur = self.cur;
            if cur == self.next {
                // One slot stays free, as in the ring: a window of a slot
                // each would look empty. A process that moves its producer
                // index past its consumer index could fill every one.
                let full = self.ring.is_full(self.next, self.head);
                return if full || self.get(cur).is_some() {
                    Next::Wait
                } else {
                    Next::Take
                };
            }
            let Some(t) = self.get(cur).map(|e| e.as_ref()) else {
                return Next::Wait;
            };
            if t.sent >= t.request_packets() {
                self.cur = self.ring.next(cur);
                continue;
            }
            if rc {
                let psn = t.next_psn();
                if psn.distance_from(self.una) >= self.window {
                    return Next::Wait;
                }
                // Asking again takes no new responder resource; asking
                // anew does.
                let new_read = t.takes_resource() && !psn.before(self.high);
                if new_read && self.reads_in_flight() >= max_rd_atomic {
                    return Next::Wait;
                }
            }
            return Next::Send(cur);
        }
    }

    /// The next packet of the request in slot `index`. For a read this
    /// fixes its chunk, from the window, the first time.
    pub(crate) fn next_packet(&mut self, index: u32) -> Option<NextPacket> {
        let window = self.window;
        let t = self.track(index)?;
        let mut responses = 1;
        if t.kind == Kind::Read {
            if t.chunk == 0 {
                t.chunk = (window / 2).clamp(1, READ_CHUNK);
            }
            responses = t.read_chunk();
        }
        let n = if t.kind == Kind::Atomic { 0 } else { t.sent };
        Some(NextPacket {
            psn: t.first_psn + n,
            n,
            responses,
        })
    }

    /// Whether a packet at `psn` asks for an ACK: the last of a message
    /// whose completion is awaited (`awaited`), a probe, the last packet
    /// sent when sent again, or on RC one after enough unacknowledged
    /// ones. Counts it as sent at `now`, for the answer time, if it is new.
    /// Only RC asks: on UC and UD no ACK would ever reset the count, which
    /// would overflow after 2^32 packets.
    pub(crate) fn ack_req(&mut self, rc: bool, awaited: bool, psn: Psn, now: u64) -> bool {
        if !rc {
            return false;
        }
        self.noack += 1;
        // A window shrunk below 2 * ACK_EVERY would otherwise fill before
        // the peer is asked for the ACK that opens it again.
        let due = awaited || self.ack_next || self.noack >= (self.window / 2).min(ACK_EVERY);
        // What is sent again after a loss or a silence ends by asking, or
        // a tail that did not ask the first time would wait for the timer.
        let due = due || psn == self.high + Psn::MASK;
        if !due {
            return false;
        }
        self.noack = 0;
        self.ack_next = false;
        if !psn.before(self.high) {
            self.rtt.sent(psn, now);
        }
        true
    }

    /// The packet [`SendWindow::next_packet`] described for slot `index`
    /// went out at `now`. An unreliable transport is done with it once
    /// sent.
    pub(crate) fn sent(&mut self, index: u32, p: NextPacket, rc: bool, now: u64) {
        let Some(t) = self.track(index) else { return };
        if t.kind == Kind::Read {
            t.asked(t.sent + p.responses);
        } else {
            t.sent += p.responses;
        }
        let end = t.next_psn();
        if !rc && t.sent >= t.npsn {
            t.done = true;
        }
        if end.after(self.high) {
            self.high = end;
        }
        self.waiting_since = now;
        self.sends = self.sends.wrapping_add(1);
        if !rc {
            self.una = self.psn;
        }
    }

    // Completing.

    /// If the oldest request is done, removes it, handing it to `f` in its
    /// slot: a request is large, and moving it out costs a copy.
    pub(crate) fn pop_done_with<R>(&mut self, f: impl FnOnce(&E) -> R) -> Option<R> {
        let head = self.head;
        if head == self.next {
            return None;
        }
        let slot = self.slots.get_mut(head as usize)?;
        let r = f(slot.as_ref().filter(|e| e.as_ref().done)?);
        *slot = None;
        if self.cur == head {
            self.cur = self.ring.next(head);
        }
        self.head = self.ring.next(head);
        // Not straight back to the QP's timeout on the first response
        // after one: a peer that was too slow for it may still be, and what
        // arrives may answer the requests that timed out. A request done
        // shows the peer keeping up.
        self.backoff = self.backoff.saturating_sub(1);
        Some(r)
    }

    /// Takes the oldest request, done or not, unless none is left:
    /// `Some(None)` for a slot that was empty.
    pub(crate) fn pop(&mut self) -> Option<Option<E>> {
        let head = self.head;
        if head == self.next {
            return None;
        }
        let e = self.slots.get_mut(head as usize).and_then(|e| e.take());
        self.head = self.ring.next(head);
        Some(e)
    }

    /// As [`SendWindow::pop`], but not the request in slot `until`.
    pub(crate) fn pop_before(&mut self, until: u32) -> Option<Option<E>> {
        if self.head == until {
            return None;
        }
        self.pop()
    }

    /// Takes the request in slot `index`, which failed, once those before
    /// it are gone; sending resumes after it.
    pub(crate) fn remove_failed(&mut self, index: u32) -> Option<E> {
        let e = self.slots.get_mut(index as usize)?.take()?;
        self.head = self.ring.next(index);
        self.cur = self.head;
        Some(e)
    }

    /// A request that could not be taken into slot `index` failed, after
    /// those before it were flushed: the queue goes on after it.
    pub(crate) fn skip_failed(&mut self, index: u32) {
        self.head = self.ring.next(index);
        self.cur = self.head;
        self.next = self.head;
    }

    /// Moves the consumer index past a request that was never taken, as a
    /// flush does; returns the new index.
    pub(crate) fn skip_untaken(&mut self) -> u32 {
        self.head = self.ring.next(self.head);
        self.head
    }

    /// Every request is gone: nothing is in flight or waits.
    pub(crate) fn flushed(&mut self) {
        self.cur = self.head;
        self.next = self.head;
        self.rnr_until = None;
        self.update_una();
    }

    /// Marks the requests before `until` done: a later response
    /// acknowledges them. Not a read or atomic still waiting for its
    /// answer, which only that answer completes.
    fn ack_before(&mut self, until: u32) {
        let mut i = self.head;
        while i != until {
            if let Some(t) = self.track(i).filter(|t| !t.needs_answer()) {
                t.acked = t.npsn;
                t.done = true;
            }
            i = self.ring.next(i);
        }
    }

    /// The slot of the oldest request not done.
    fn first_not_done(&self) -> Option<u32> {
        let mut i = self.head;
        while i != self.next {
            if self.get(i).is_some_and(|e| !e.as_ref().done) {
                return Some(i);
            }
            i = self.ring.next(i);
        }
        None
    }

    /// The oldest PSN not acknowledged: in the first request not done.
    fn update_una(&mut self) {
        let una = self.taken().find(|t| !t.done).map(|t| {
            let n = if t.kind == Kind::Read { t.got } else { t.acked };
            t.first_psn + n
        });
        self.una = una.unwrap_or(self.psn);
    }

    /// Records, at `now`, an answer from the peer: progress if it moved the
    /// oldest PSN not acknowledged. One that did not (an ACK stopped by a
    /// read still missing responses, a NAK of that same PSN) shows the peer
    /// alive but not that the request waiting gets anywhere: were it taken
    /// as progress, a read the peer no longer answers would be asked for
    /// again forever, its retries never counted.
    fn progress(&mut self, now: u64) {
        let una = self.una;
        self.update_una();
        if self.una == una {
            return;
        }
        let answer_time = self.rtt.answered_before(self.una, now);
        self.retries = 0;
        self.rnr_retries = 0;
        self.probes = 0;
        let acknowledged = self.una.distance_from(una);
        if answer_time.is_some_and(|t| t > self.crowded) {
            // A peer that is slower than the link (a busy CPU) queues what
            // every QP sends it, and each QP gets a share of it in
            // proportion to its window. Left to grow, the queue outlasts
            // the timeout: the whole window goes again, and the QPs whose
            // windows shrank most starve. Keep it short instead: one
            // answer is timed at a time, so this halves once per round
            // trip, and the windows meet as they shrink and grow alike.
            self.lost();
        } else if self.window < self.threshold {
            self.window = (self.window + acknowledged).min(self.threshold);
        } else {
            self.window = (self.window + 1).min(WINDOW);
        }
        self.waiting_since = now;
    }
}

mod invariant;
#[cfg(test)]
mod read_tests;
mod response;
#[cfg(test)]
mod tests;
mod timer;
mod track;
