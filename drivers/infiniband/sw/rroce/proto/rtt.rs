// SPDX-License-Identifier: GPL-2.0

//! How long the peer takes to answer, so that a peer slower than the QP's
//! transport timeout is waited for rather than given up on.
//!
//! The QP's `timeout` is what the application asked for, typically 67 ms,
//! sized for hardware. A software responder under load answers an ACK
//! request only once it has handled every packet queued before it, which
//! can take longer; timing out then sends more of what it has yet to read
//! and makes it slower still. As in TCP (RFC 6298), one packet at a time is
//! timed from its first sending to its answer, never one sent again, whose
//! answer may be to either copy (Karn); the retransmission timeout is at
//! least the smoothed time plus four mean deviations.

use super::psn::Psn;

/// The time to answer, smoothed, in the caller's ticks (jiffies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rtt {
    /// The smoothed time, 0 before the first sample.
    srtt: u64,
    /// Its mean deviation.
    rttvar: u64,
    /// The packet being timed, and when it was sent.
    probe: Option<(Psn, u64)>,
}

impl Rtt {
    /// `psn`, asking for an answer, was sent at `now` for the first time.
    pub(crate) fn sent(&mut self, psn: Psn, now: u64) {
        if self.probe.is_none() {
            self.probe = Some((psn, now));
        }
    }

    /// Everything before `una` is answered, as of `now`: returns the time
    /// the packet timed took to be answered, if it is among them.
    pub(crate) fn answered_before(&mut self, una: Psn, now: u64) -> Option<u64> {
        let (psn, at) = self.probe?;
        if !psn.before(una) {
            return None;
        }
        self.probe = None;
        let r = now.saturating_sub(at);
        self.sample(r);
        Some(r)
    }

    /// Packets are being sent again: an answer could be to either copy.
    pub(crate) fn resent(&mut self) {
        self.probe = None;
    }

    fn sample(&mut self, r: u64) {
        if self.srtt == 0 {
            self.srtt = r.max(1);
            self.rttvar = r / 2;
        } else {
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(r)) / 4;
            self.srtt = ((7 * self.srtt + r) / 8).max(1);
        }
    }

    /// The least retransmission timeout the answers seen so far call for,
    /// at most `cap`; 0 before any.
    pub(crate) fn timeout(&self, cap: u64) -> u64 {
        if self.srtt == 0 {
            return 0;
        }
        self.srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .min(cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(samples: &[u64]) -> Rtt {
        let mut rtt = Rtt::default();
        let mut now = 1000;
        for (i, &r) in samples.iter().enumerate() {
            rtt.sent(Psn::new(i as u32), now);
            now += r;
            rtt.answered_before(Psn::new(i as u32 + 1), now);
        }
        rtt
    }

    #[test]
    fn no_answer_no_timeout() {
        assert_eq!(Rtt::default().timeout(u64::MAX), 0);
    }

    #[test]
    fn first_sample_sets_three_times_it() {
        // SRTT = R, RTTVAR = R / 2: SRTT + 4 * RTTVAR = 3 R.
        assert_eq!(timed(&[100]).timeout(u64::MAX), 300);
    }

    #[test]
    fn steady_answers_converge_on_their_time() {
        let rtt = timed(&[100; 64]);
        assert!((100..=110).contains(&rtt.timeout(u64::MAX)));
    }

    #[test]
    fn a_slow_answer_raises_it_at_once() {
        let fast = timed(&[10; 32]).timeout(u64::MAX);
        let mut samples = [10; 33];
        samples[32] = 1000;
        let slow = timed(&samples).timeout(u64::MAX);
        assert!(slow > 4 * fast && slow >= 1000 / 2, "{fast} -> {slow}");
    }

    #[test]
    fn capped() {
        assert_eq!(timed(&[1000]).timeout(500), 500);
    }

    #[test]
    fn one_probe_at_a_time_and_none_after_a_resend() {
        let mut rtt = Rtt::default();
        rtt.sent(Psn::new(5), 100);
        // A later packet does not restart the clock of the first.
        rtt.sent(Psn::new(9), 150);
        rtt.answered_before(Psn::new(6), 200);
        assert_eq!(rtt.timeout(u64::MAX), 300);
        // Answers to a packet sent again teach nothing.
        rtt.sent(Psn::new(10), 300);
        rtt.resent();
        rtt.answered_before(Psn::new(11), 5000);
        assert_eq!(rtt.timeout(u64::MAX), 300);
        // Nor does an answer that does not reach the probe.
        rtt.sent(Psn::new(20), 6000);
        rtt.answered_before(Psn::new(20), 9000);
        assert_eq!(rtt.timeout(u64::MAX), 300);
    }

    #[test]
    fn psn_wraps() {
        let mut rtt = Rtt::default();
        rtt.sent(Psn::new(Psn::MASK), 0);
        rtt.answered_before(Psn::new(0), 40);
        assert_eq!(rtt.timeout(u64::MAX), 120);
    }
}
