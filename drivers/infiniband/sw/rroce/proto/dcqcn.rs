// SPDX-License-Identifier: GPL-2.0

//! DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
//! RDMA Deployments", SIGCOMM 2015), as RoCE NICs run it for each QP: a CNP
//! cuts the QP's sending rate by a factor that grows with how often CNPs
//! come (alpha), and the rate recovers towards the rate before the cut, then
//! beyond it, on a timer and on bytes sent.
//!
//! A QP starts at line rate, as on a NIC, taken to be 100 Gb/s: a QP that
//! sends slower is not paced until CNPs have cut the rate below its own,
//! and once the rate is back at line rate, or 0.3 s after the last cut, it
//! is unpaced again. Times are in nanoseconds, rates in bytes per second.

/// The gain of alpha's moving average (1/256).
const ALPHA_ONE: u64 = 1 << 10;
const G_SHIFT: u32 = 8;
/// Increases of fast recovery before additive, then hyper increase.
const FAST_RECOVERY_STEPS: u32 = 5;
/// The least rate, 1 Mb/s, and line rate, 100 Gb/s.
const MIN_RATE: u64 = 1_000_000 / 8;
const LINE_RATE: u64 = 100_000_000_000 / 8;
/// Without a CNP for this long a QP is unpaced.
const UNPACE_NS: u64 = 300_000_000;
/// CNPs closer than this to the last cut cut nothing more.
const CUT_INTERVAL_NS: u64 = 50_000;
/// Pacing lets unused time build up credit for at most this long, and at
/// least a packet's worth: a QP that is woken late, once a jiffy, must
/// still reach its rate, but one that was idle must not burst.
const BURST_NS: u64 = 20_000_000;
const BURST_MIN: i64 = 8192;
const NS_PER_SEC: u64 = 1_000_000_000;

/// How fast a cut QP recovers: what a device may tune, as NICs let their
/// users tune DCQCN. The defaults, [`Params::NIC`], are a NIC's, for links
/// of tens of Gb/s whose CNPs come microseconds apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    /// Alpha's update period.
    pub(crate) alpha_period_ns: u64,
    /// The rate increase timer, and the byte counter's bytes per increase.
    pub(crate) increase_period_ns: u64,
    pub(crate) increase_bytes: u64,
    /// The additive and hyper increase steps, in bytes per second.
    pub(crate) additive_increase: u64,
    pub(crate) hyper_increase: u64,
}

impl Params {
    /// 55 us, 300 us, 10 MiB, 5 and 50 Mb/s.
    pub(crate) const NIC: Self = Self {
        alpha_period_ns: 55_000,
        increase_period_ns: 300_000,
        increase_bytes: 10 << 20,
        additive_increase: 5_000_000 / 8,
        hyper_increase: 50_000_000 / 8,
    };
}

/// One QP's sending rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rate {
    /// What the last cut was made with, until the next.
    params: Params,
    /// The current rate, while paced.
    current: Option<u64>,
    /// The rate to recover to.
    target: u64,
    /// How much a cut takes, of [`ALPHA_ONE`].
    alpha: u64,
    alpha_at: u64,
    increase_at: u64,
    /// Bytes sent since the byte counter's last increase.
    bytes: u64,
    /// Increases by the timer and by the byte counter since the last cut.
    timer_steps: u32,
    byte_steps: u32,
    cut_at: Option<u64>,
    /// Bytes the QP may still send (negative: owes), as of `credit_at`.
    credit: i64,
    credit_at: u64,
}

impl Rate {
    /// An unpaced QP's, as of `now`.
    pub(crate) fn new(now: u64) -> Self {
        Self {
            params: Params::NIC,
            current: None,
            target: 0,
            alpha: ALPHA_ONE,
            alpha_at: now,
            increase_at: now,
            bytes: 0,
            timer_steps: 0,
            byte_steps: 0,
            cut_at: None,
            credit: 0,
            credit_at: now,
        }
    }

    /// The current rate, if the QP is paced.
    pub(crate) fn current(&self) -> Option<u64> {
        self.current
    }

    /// A CNP came at `now`: cut the rate, to recover with `params`.
    /// Returns whether it did (not within [`CUT_INTERVAL_NS`] of the last
    /// cut).
    pub(crate) fn cnp(&mut self, now: u64, params: &Params) -> bool {
        self.update(now);
        if self
            .cut_at
            .is_some_and(|at| now.saturating_sub(at) < CUT_INTERVAL_NS)
        {
            return false;
        }
        let rate = match self.current {
            Some(rate) => rate,
            None => {
                self.credit = 0;
                self.credit_at = now;
                LINE_RATE
            }
        };
        self.params = *params;
        self.target = rate;
        // Credit saved at the old rate must not outrun the new one.
        self.credit = self.credit.min(0);
        // No 128-bit division in the kernel: rates stay below 2^44.
        let cut = rate.saturating_mul(self.alpha) / (2 * ALPHA_ONE);
        self.current = Some((rate - cut).max(MIN_RATE));
        self.alpha += (ALPHA_ONE - self.alpha) >> G_SHIFT;
        self.cut_at = Some(now);
        self.alpha_at = now;
        self.increase_at = now;
        self.bytes = 0;
        self.timer_steps = 0;
        self.byte_steps = 0;
        true
    }

    /// `bytes` left; only a paced QP counts them.
    pub(crate) fn sent(&mut self, bytes: u64) {
        if self.current.is_none() {
            return;
        }
        self.credit = self.credit.saturating_sub(bytes as i64);
        self.bytes += bytes;
        if self.bytes >= self.params.increase_bytes {
            self.bytes = 0;
            self.byte_steps += 1;
            self.increase();
        }
    }

    /// How long from `now` before the QP may send, if it must wait.
    pub(crate) fn wait_ns(&mut self, now: u64) -> Option<u64> {
        self.update(now);
        let rate = self.current?;
        // Whole bytes only: the time a fraction stands for stays for later.
        let elapsed = now.saturating_sub(self.credit_at);
        let refill = bytes_in(rate, elapsed);
        self.credit_at = if elapsed >= BURST_NS {
            now
        } else {
            self.credit_at + ns_for(refill.unsigned_abs(), rate)
        };
        let most = bytes_in(rate, BURST_NS).max(BURST_MIN);
        self.credit = self.credit.saturating_add(refill).min(most);
        if self.credit >= 0 {
            return None;
        }
        Some(ns_for(self.credit.unsigned_abs(), rate).max(1))
    }

    /// Brings alpha and the rate up to `now`: while the QP is paced, alpha
    /// decays in each period without a CNP, and the rate increases in each
    /// timer period; [`UNPACE_NS`] after the last cut it is unpaced.
    fn update(&mut self, now: u64) {
        let Some(cut_at) = self.cut_at.filter(|_| self.current.is_some()) else {
            self.alpha_at = now;
            self.increase_at = now;
            return;
        };
        if now.saturating_sub(cut_at) >= UNPACE_NS {
            return self.unpace();
        }
        let p = self.params;
        // Periods of at least 1 us: at most UNPACE_NS / 1000 since the cut.
        let alpha_period = p.alpha_period_ns.max(1000);
        while now.saturating_sub(self.alpha_at) >= alpha_period {
            self.alpha_at += alpha_period;
            self.alpha -= self.alpha >> G_SHIFT;
        }
        let increase_period = p.increase_period_ns.max(1000);
        while now.saturating_sub(self.increase_at) >= increase_period {
            self.increase_at += increase_period;
            self.timer_steps += 1;
            self.increase();
        }
    }

    /// The QP sends unpaced again, as a new one does.
    fn unpace(&mut self) {
        self.current = None;
        self.alpha = ALPHA_ONE;
        self.cut_at = None;
    }

    /// One increase: back towards the target (fast recovery), then the
    /// target itself up (additive, then hyper increase).
    fn increase(&mut self) {
        let Some(current) = self.current else { return };
        let (t, b) = (self.timer_steps, self.byte_steps);
        if t.max(b) >= FAST_RECOVERY_STEPS {
            self.target += if t.min(b) > FAST_RECOVERY_STEPS {
                self.params.hyper_increase
            } else {
                self.params.additive_increase
            };
        }
        let next = (self.target + current).div_ceil(2);
        if next < LINE_RATE {
            self.current = Some(next);
        } else {
            self.unpace();
        }
    }
}

/// The bytes `rate` sends in `ns`, up to [`BURST_NS`].
fn bytes_in(rate: u64, ns: u64) -> i64 {
    let bytes = rate.saturating_mul(ns.min(BURST_NS)) / NS_PER_SEC;
    bytes.min(i64::MAX as u64) as i64
}

/// The time, rounded up, `rate` takes to send `bytes`.
fn ns_for(bytes: u64, rate: u64) -> u64 {
    bytes.saturating_mul(NS_PER_SEC).div_ceil(rate.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    /// A QP cut by `n` CNPs 60 us apart from 1 ms on; returns when the
    /// last came.
    fn cut(r: &mut Rate, n: u64) -> u64 {
        for i in 0..n {
            assert!(r.cnp(MS + i * 60 * US, &Params::NIC));
        }
        MS + (n - 1) * 60 * US
    }

    #[test]
    fn unpaced_until_a_cnp() {
        let mut r = Rate::new(0);
        assert_eq!(r.current(), None);
        assert_eq!(r.wait_ns(MS), None);
    }

    #[test]
    fn first_cnp_halves_line_rate() {
        let mut r = Rate::new(0);
        cut(&mut r, 1);
        // Alpha starts at one: the cut is by a half.
        assert_eq!(r.current(), Some(LINE_RATE / 2));
    }

    #[test]
    fn cnps_within_the_interval_cut_once() {
        let mut r = Rate::new(0);
        let at = cut(&mut r, 1);
        let once = r.current();
        assert!(!r.cnp(at + 10 * US, &Params::NIC));
        assert_eq!(r.current(), once);
        assert!(r.cnp(at + 60 * US, &Params::NIC));
        assert!(r.current() < once);
    }

    #[test]
    fn a_run_of_cnps_brings_the_rate_down() {
        let mut r = Rate::new(0);
        cut(&mut r, 10);
        let rate = r.current().unwrap();
        assert!(rate < 20_000_000, "{rate}");
    }

    #[test]
    fn paces_to_the_rate() {
        let mut r = Rate::new(0);
        let mut now = cut(&mut r, 10);
        let rate = r.current().unwrap();
        // What credit built up since the first cut goes first.
        while r.wait_ns(now).is_none() {
            r.sent(1000);
        }
        // Then send as fast as allowed for 200 us, before the rate
        // increases.
        let (end, mut sent) = (now + 200 * US, 0);
        while now < end {
            match r.wait_ns(now) {
                None => {
                    r.sent(1000);
                    sent += 1000;
                }
                Some(wait) => now += wait,
            }
        }
        let want = rate / 5000;
        assert!(sent >= want && sent <= want + 1000, "{sent} for {want}");
    }

    #[test]
    fn recovers_and_ends_unpaced() {
        let mut r = Rate::new(0);
        let at = cut(&mut r, 10);
        let low = r.current().unwrap();
        // Five timer periods of fast recovery: most of the way back to the
        // rate before the last cut, twice this one.
        r.wait_ns(at + 5 * Params::NIC.increase_period_ns);
        let back = r.current().unwrap();
        assert!(back > low * 19 / 10, "{back} {low}");
        // Without CNPs the QP is unpaced again.
        r.wait_ns(at + 400 * MS);
        assert_eq!(r.current(), None);
    }

    #[test]
    fn alpha_grows_with_cnps_and_decays_without() {
        let mut r = Rate::new(0);
        let at = cut(&mut r, 20);
        let often = r.alpha;
        r.wait_ns(at + 100 * MS);
        assert!(r.alpha < often / 2, "{} {often}", r.alpha);
    }

    #[test]
    fn never_below_the_least_rate() {
        let mut r = Rate::new(0);
        cut(&mut r, 100);
        assert!(r.current().unwrap() >= MIN_RATE);
    }

    #[test]
    fn unpaced_after_a_while_however_often_it_sends() {
        let mut r = Rate::new(0);
        let at = cut(&mut r, 10);
        let mut now = at;
        while now < at + UNPACE_NS {
            assert!(r.current().is_some());
            if r.wait_ns(now).is_none() {
                r.sent(1000);
            }
            now += MS;
        }
        r.wait_ns(now);
        assert_eq!(r.current(), None);
    }

    #[test]
    fn a_cut_takes_saved_credit() {
        let mut r = Rate::new(0);
        let at = cut(&mut r, 10);
        // Idle for 10 ms: credit builds up at the cut rate.
        assert_eq!(r.wait_ns(at + 10 * MS), None);
        assert!(r.credit > 0);
        assert!(r.cnp(at + 10 * MS, &Params::NIC));
        assert!(r.credit <= 0);
    }

    #[test]
    fn tuned_params_recover_slower() {
        let slow = Params {
            increase_period_ns: 5 * MS,
            additive_increase: 100_000 / 8,
            ..Params::NIC
        };
        let (mut nic, mut tuned) = (Rate::new(0), Rate::new(0));
        for i in 0..10 {
            assert!(nic.cnp(MS + i * 60 * US, &Params::NIC));
            assert!(tuned.cnp(MS + i * 60 * US, &slow));
        }
        let low = nic.current().unwrap();
        assert_eq!(tuned.current(), Some(low));
        let later = MS + 9 * 60 * US + 20 * MS;
        nic.wait_ns(later);
        tuned.wait_ns(later);
        // 66 NIC periods against 4: past the rate before the cut, and
        // still in fast recovery.
        assert!(nic.current().unwrap() > low * 2, "{:?}", nic.current());
        assert!(tuned.current().unwrap() < low * 2, "{:?}", tuned.current());
    }
}
