// SPDX-License-Identifier: GPL-2.0

//! Loss and time: rewinding to a lost packet, and what the timer does when
//! the peer is silent or has asked to wait.

use super::super::psn::Psn;
use super::track::Gap;
use super::{Clock, Kind, SendWindow, Timer, Track, MAX_BACKOFF, MAX_RTT_TIMEOUT_US, MIN_WINDOW};
use core::ops::DerefMut;

/// A probe waits for at least this share of the QP's timeout (one eighth):
/// long enough for a VM that answers within a tick and then stalls for a
/// few, short enough that a lost tail costs milliseconds, not the timeout.
pub(super) const PROBE_FLOOR_SHARE: u32 = 8;

/// Probes a silent peer gets between two progresses, before the timeout:
/// the last packet alone, then everything not acknowledged.
pub(super) const PROBES: u8 = 2;

/// The transport timeout of a QP's `timeout` code, 4.096 us * 2^timeout, in
/// microseconds.
pub(crate) fn timeout_usecs(timeout: u8) -> u32 {
    (4096u64 << timeout.min(31))
        .div_ceil(1000)
        .min(u32::MAX as u64) as u32
}

impl<E, S> SendWindow<S>
where
    E: AsRef<Track> + AsMut<Track>,
    S: DerefMut<Target = [Option<E>]>,
{
    /// A loss, seen by a sequence NAK or a gap in read responses: halve the
    /// window, so that what is sent again does not swamp a link that has
    /// just dropped packets, or a peer already behind.
    pub(super) fn lost(&mut self) {
        self.window = (self.window / 2).max(MIN_WINDOW);
        self.threshold = self.window;
    }

    /// A timeout: the peer answered nothing for longer than it may take,
    /// so what is in flight says nothing of what it can take. Start again
    /// from the smallest window, as TCP does, which grows back by what
    /// each answer acknowledges up to half the window before: a peer that
    /// was only slow, not short of packets, gets a few again, not half of
    /// what it is still working through.
    fn timed_out(&mut self) {
        self.threshold = (self.window / 2).max(MIN_WINDOW);
        self.window = MIN_WINDOW;
    }

    /// Goes back to `psn`: the request that holds it, and everything after
    /// it, will be sent again from there.
    pub(super) fn rewind(&mut self, psn: Psn) {
        let Some(k) = self.find(psn) else { return };
        self.rtt.resent();
        let high = self.high;
        let mut i = k;
        while i != self.next {
            if let Some(t) = self.track(i) {
                if t.kind == Kind::Read {
                    // What arrived in order stays placed. Asking for it
                    // again could even fail: the C rxe, having replayed a
                    // read from some point, refuses to read from before it.
                    // What arrived past a gap is asked for again, as the
                    // rest of each chunk.
                    let asked = t.gap.take().map_or(t.sent, |g| g.resume.max(t.sent));
                    t.sent = t.got;
                    if (t.first_psn + t.got).before(high) {
                        t.asked_again_to = asked;
                    }
                } else if i == k && t.kind != Kind::Atomic {
                    t.sent = psn.distance_from(t.first_psn);
                } else if !t.done {
                    t.sent = 0;
                }
            }
            i = self.ring.next(i);
        }
        // Never forward: a request before this one may wait to be sent
        // again from an earlier rewind (a gap in a later read, whose
        // responses are taken meanwhile, rewinds to it).
        let ring = self.ring;
        if ring.count(k, self.head) < ring.count(self.cur, self.head) {
            self.cur = k;
        }
        self.update_una();
    }

    /// Asks again for the responses of the read in slot `index` from the
    /// first one missing up to the next one received, or to the last one
    /// asked for, alone; then goes on where it was.
    pub(super) fn ask_again_for_gap(&mut self, index: u32) {
        let Some(t) = self.track(index) else { return };
        let end = (t.got + t.ahead.leading_gap()).min(t.sent);
        t.gap = Some(Gap {
            end,
            resume: t.sent,
        });
        t.sent = t.got;
        t.asked_again_to = end;
        self.asked_again(index);
    }

    /// The request in slot `index` was set to send again what was lost:
    /// halves the window, and has the requester go back to it.
    pub(super) fn asked_again(&mut self, index: u32) {
        self.lost();
        self.rtt.resent();
        let ring = self.ring;
        if ring.count(index, self.head) < ring.count(self.cur, self.head) {
            self.cur = index;
        }
    }

    /// Sends again, as of `now`, from `psn`.
    fn resend_from(&mut self, psn: Psn, now: u64) {
        self.waiting_since = now;
        self.rewind(psn);
    }

    /// The last packet sent, if sending it again alone, asking for an ACK,
    /// tells what the peer lacks: a peer that has it acknowledges everything
    /// up to it, one that lacks packets before it asks for them with a
    /// sequence NAK. Not while a read or atomic waits for its answer, which
    /// an ACK does not bring back; nor while anything waits to be sent
    /// again, or once a shrunk window no longer holds that packet.
    fn tail(&self) -> Option<Psn> {
        let last = self.high + Psn::MASK;
        if self.reads_pending() || last.distance_from(self.una) >= self.window {
            return None;
        }
        let t = self.get(self.find(last)?)?.as_ref();
        (t.next_psn() == self.high).then_some(last)
    }

    /// Probes the peer, as of `now`: first with the last packet alone, as
    /// TCP's tail loss probe does, which costs one packet where the peer,
    /// not the link, is slow; then, or if that cannot tell, by sending
    /// again from the oldest packet not acknowledged.
    fn probe(&mut self, now: u64) {
        match self.tail().filter(|_| self.probes == 0) {
            Some(last) => {
                self.probes = 1;
                self.ack_next = true;
                self.resend_from(last, now);
            }
            None => {
                self.probes = PROBES;
                self.resend_from(self.una, now);
            }
        }
    }

    /// Asks the peer, as of `now`, for the ACK that the packets sent since
    /// the last one to ask did not ask for: a request that waits for them
    /// (a local operation) has no packet of its own to ask with. Sends the
    /// last packet again, asking, as a probe does; false if it asked, or
    /// there is nothing to ask about.
    pub(crate) fn ask_for_ack(&mut self, now: u64) -> bool {
        let last = self.tail().filter(|_| self.noack != 0);
        if let Some(last) = last {
            self.ack_next = true;
            self.resend_from(last, now);
        }
        last.is_some()
    }

    /// The timeout the peer's answer times call for, in ticks; 0 before
    /// any was measured.
    fn learnt_timeout(&self, clock: &impl Clock) -> u64 {
        self.rtt.timeout(clock.usecs_to_ticks(MAX_RTT_TIMEOUT_US))
    }

    /// The silence, in ticks, after which to ask again before the QP's
    /// timeout of `timeout_us`: longer than the peer takes by a tick of the
    /// clock, which counts whole ticks, and at least an eighth of the
    /// timeout, as a peer that answers within a tick may still stall for
    /// several (a VM whose host is busy). None before an answer time is
    /// measured, or once sent again from the oldest packet not acknowledged
    /// since the last progress.
    fn probe_after(&self, timeout_us: u32, clock: &impl Clock) -> Option<u64> {
        if self.probes >= PROBES {
            return None;
        }
        match self.learnt_timeout(clock) {
            0 => None,
            j => Some((j + 1).max(clock.usecs_to_ticks(timeout_us / PROBE_FLOOR_SHARE))),
        }
    }

    /// How soon, in microseconds, the timer must look at a QP with
    /// `timeout` code, if at all.
    pub(crate) fn timer_usecs(&self, timeout: u8, clock: &impl Clock) -> Option<u32> {
        if self.rnr_until.is_some() {
            return Some(1000);
        }
        if !self.outstanding() || timeout == 0 {
            return None;
        }
        let timeout = timeout_usecs(timeout);
        let probe = self
            .probe_after(timeout, clock)
            .map_or(timeout, |j| clock.ticks_to_usecs(j));
        Some(timeout.min(probe).clamp(1000, 1_000_000))
    }

    /// The timer fired at `now` on an RC QP with `timeout` code and
    /// `retry_cnt`: after an RNR wait, go on; after a silence longer than
    /// the timeout, retry or give up; after one longer than the peer takes,
    /// probe once.
    pub(crate) fn tick(
        &mut self,
        now: u64,
        timeout: u8,
        retry_cnt: u8,
        clock: &impl Clock,
    ) -> Timer {
        if let Some(until) = self.rnr_until {
            if now < until {
                return Timer::Idle;
            }
            self.rnr_until = None;
            self.waiting_since = now;
            return Timer::RnrDone;
        }
        if !self.outstanding() || timeout == 0 {
            return Timer::Idle;
        }
        // The backoff stretches the QP's timeout, not the measured one:
        // that one is already what the peer takes.
        let timeout_us = timeout_usecs(timeout);
        let limit =
            (clock.usecs_to_ticks(timeout_us) << self.backoff).max(self.learnt_timeout(clock));
        // Saturating: the receive clock lags while packets wait, so it may
        // be behind the last packet sent, or the progress one of them made.
        let silence = now.saturating_sub(self.waiting_since);
        if silence < limit {
            // The last packets lost leave nothing after them to tell of the
            // loss, and the peer silent. Once it has been silent for longer
            // than it takes to answer, ask again, without waiting for the
            // whole of the QP's timeout and without counting a retry.
            if self
                .probe_after(timeout_us, clock)
                .is_some_and(|after| silence >= after)
            {
                self.probe(now);
                return Timer::Probe;
            }
            return Timer::Idle;
        }
        if self.retries >= retry_cnt {
            return Timer::GiveUp;
        }
        self.retries += 1;
        // A peer slower than the timeout, not gone, would otherwise get the
        // whole window again on every timeout, fall further behind and
        // never answer in time; a dead link still fails within retry_cnt
        // timeouts of at most 2^MAX_BACKOFF times the QP's.
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
        // Nor should it get a whole window to chew through again.
        self.timed_out();
        self.resend_from(self.una, now);
        Timer::Retry
    }
}
