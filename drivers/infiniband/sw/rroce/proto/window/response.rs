// SPDX-License-Identifier: GPL-2.0

//! What the peer's responses mean for the send window: ACKs and NAKs,
//! read responses, atomic ACKs and the empty read responses that answer
//! FLUSH and ATOMIC WRITE.

use super::super::psn::Psn;
use super::{Clock, Kind, ReadResponse, RnrNak, SendWindow, Track, RNR_RETRY_FOREVER};
use core::ops::DerefMut;

/// The RNR NAK timer code's delay in microseconds (IBA table 45).
fn rnr_usecs(code: u8) -> u32 {
    const TABLE: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
        327_680, 491_520,
    ];
    TABLE[(code & 31) as usize]
}

impl<E, S> SendWindow<S>
where
    E: AsRef<Track> + AsMut<Track>,
    S: DerefMut<Target = [Option<E>]>,
{
    /// Whether `psn` is one sent and not yet acknowledged: only such a
    /// response means anything.
    pub(crate) fn expects(&self, psn: Psn) -> bool {
        psn.distance_from(self.una) < self.high.distance_from(self.una)
    }

    /// Handles an ACK of `psn` at `now`: every SEND, WRITE or commit whose
    /// packets are all at or before it is done. A read or atomic before it
    /// still waiting for its answer is not, but the answer was lost: see
    /// [`SendWindow::answered_past`].
    pub(crate) fn ack(&mut self, psn: Psn, now: u64) {
        self.acknowledge(psn);
        self.progress(now);
        self.answered_past(psn);
    }

    /// Marks done what an ACK of `psn` completes.
    fn acknowledge(&mut self, psn: Psn) {
        let mut i = self.head;
        while i != self.next {
            let Some(t) = self.track(i) else { break };
            if t.needs_answer() {
                // Only its own answer completes it; the ACK still tells of
                // the requests after it.
                if !t.done && !t.last_psn().before(psn) {
                    break;
                }
            } else if !t.last_psn().after(psn) {
                // Even if a rewind has it to send again: all of it arrived.
                t.sent = t.npsn;
                t.acked = t.npsn;
                t.done = true;
            } else {
                if t.holds(psn) {
                    t.acked = t.acked.max(psn.distance_from(t.first_psn) + 1);
                    // Nor is what arrived sent again.
                    t.sent = t.sent.max(t.acked);
                }
                break;
            }
            i = self.ring.next(i);
        }
    }

    /// An answer came that shows every request before `psn` answered. The
    /// peer answers requests in order, so the first request not done, if a
    /// read or atomic whose PSNs are all before `psn`, lost its missing
    /// answers on the way: an implied NAK (IBA chapter 9). Asks again for
    /// them at once, as the C rxe's completer does, rather than once the
    /// peer stays silent; unless that was done and not yet answered.
    /// Returns whether it asked again.
    fn answered_past(&mut self, psn: Psn) -> bool {
        let Some(k) = self.first_not_done() else {
            return false;
        };
        let Some(t) = self.track(k) else { return false };
        if !t.needs_answer() || !t.last_psn().before(psn) || t.sent < t.request_packets() {
            return false;
        }
        match t.kind {
            Kind::Read if t.got >= t.asked_again_to => self.ask_again_for_gap(k),
            Kind::Atomic if t.asked_again_to == 0 => {
                t.asked_again_to = 1;
                t.sent = 0;
                self.asked_again(k);
            }
            _ => return false,
        }
        true
    }

    /// A NAK of `psn` at `now` acknowledges the packets before it, and
    /// shows every request before it answered. Returns whether it asked
    /// again for an earlier read's or atomic's answer.
    fn nak(&mut self, psn: Psn, now: u64) -> bool {
        self.acknowledge(psn + Psn::MASK);
        self.progress(now);
        self.answered_past(psn)
    }

    /// A sequence NAK of `psn` at `now`: the packets from it on were lost,
    /// send them again. One loss halves the window once.
    pub(crate) fn seq_nak(&mut self, psn: Psn, now: u64) {
        if !self.nak(psn, now) {
            self.lost();
        }
        self.rewind(psn);
    }

    /// A NAK of `psn` at `now` that ends the request holding it: returns
    /// its slot, if any.
    pub(crate) fn fatal_nak(&mut self, psn: Psn, now: u64) -> Option<u32> {
        self.nak(psn, now);
        self.find(psn)
    }

    /// An RNR NAK of `psn` with timer code `timer`, at `now`, on a QP that
    /// retries `rnr_retry` times.
    pub(crate) fn rnr_nak(
        &mut self,
        psn: Psn,
        timer: u8,
        rnr_retry: u8,
        now: u64,
        clock: &impl Clock,
    ) -> RnrNak {
        // Only a NAK that acknowledges something new starts the count
        // again, as in the C rxe: one for the same packet goes on with it.
        self.nak(psn, now);
        self.rnr_retries = self.rnr_retries.saturating_add(1);
        if rnr_retry != RNR_RETRY_FOREVER && self.rnr_retries > rnr_retry {
            return RnrNak::Exceeded(self.find(psn));
        }
        self.rewind(psn);
        self.rnr_until = Some(now + clock.usecs_to_ticks(rnr_usecs(timer)));
        RnrNak::Wait
    }

    /// A read response at `psn` with `len` bytes of payload, on a path of
    /// `mtu` bytes: what to do with it. Any response asked for and not yet
    /// received is taken, in any order, even one a rewind has since set to
    /// ask for again.
    pub(crate) fn read_response(&mut self, psn: Psn, len: usize, mtu: u32) -> ReadResponse {
        let high = self.high;
        let Some(k) = self.find(psn) else {
            return ReadResponse::Ignore;
        };
        let Some(t) = self.track(k) else {
            return ReadResponse::Ignore;
        };
        let n = psn.distance_from(t.first_psn);
        if t.kind != Kind::Read || t.done || !psn.before(high) || !t.trackable(n) || t.received(n) {
            return ReadResponse::Ignore;
        }
        // Each request's responses end with a Last, the read's last one
        // with its last byte; every other packet is full.
        let at = (n * mtu) as usize;
        let length = t.length as usize;
        if (at + len == length || len == mtu as usize) && at + len <= length {
            ReadResponse::Place { slot: k, n, at }
        } else {
            ReadResponse::Bad { slot: k }
        }
    }

    /// Response `n` that [`SendWindow::read_response`] said to place in
    /// slot `index` was placed, at `now`. If responses are missing before
    /// others that arrived, the first ones missing were lost: ask again for
    /// them at once, rather than after a transport timeout, as a sequence
    /// NAK does for writes; unless that was done.
    pub(crate) fn read_placed(&mut self, index: u32, n: u32, now: u64) {
        let Some(t) = self.track(index) else { return };
        t.receive(n);
        if t.got >= t.npsn {
            t.done = true;
            t.acked = t.npsn;
        }
        let gap = !t.done && !t.ahead.is_empty() && t.got >= t.asked_again_to && t.got < t.sent;
        let psn = t.first_psn + n;
        self.ack_before(index);
        self.progress(now);
        if gap {
            self.ask_again_for_gap(index);
        } else {
            self.answered_past(psn);
        }
    }

    /// The slot of the request of `kind` (an atomic, or a FLUSH or ATOMIC
    /// WRITE) that an answer at `psn` is for, if it was sent and waits for
    /// one: also while it waits to be sent again, as the first answer may
    /// just have been late.
    pub(crate) fn answer_for(&self, kind: Kind, psn: Psn) -> Option<u32> {
        let k = self.find(psn)?;
        let t = self.get(k)?.as_ref();
        (t.kind == kind && !t.done && t.first_psn.before(self.high)).then_some(k)
    }

    /// The single-packet request in slot `index` has its answer, at `now`:
    /// it is done, and not sent again.
    pub(crate) fn answered(&mut self, index: u32, now: u64) {
        let Some(t) = self.track(index) else { return };
        t.done = true;
        t.sent = t.request_packets();
        let psn = t.first_psn;
        self.ack_before(index);
        self.progress(now);
        self.answered_past(psn);
    }
}
