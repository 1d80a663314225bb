// SPDX-License-Identifier: GPL-2.0

//! Packet sequence numbers.
//!
//! A PSN is a 24-bit counter that wraps. Two PSNs can only be ordered within
//! half of that space: IBA takes `a` to be before `b` when `b` is less than
//! 2^23 steps ahead of `a`. The relation is not transitive over the whole
//! space, which is why [`Psn`] has `before`/`after` and no `Ord`.

use core::ops::Add;

/// A 24-bit packet sequence number with wrapping arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Psn(u32);

impl Psn {
    /// The bits a PSN occupies, in the BTH and in the counters that feed it.
    pub(crate) const MASK: u32 = 0x00ff_ffff;

    /// Half of the PSN space: below this distance, two PSNs are ordered.
    const HALF: u32 = 1 << 23;

    /// Makes a PSN from the low 24 bits of `value`.
    ///
    /// The top byte is dropped because the BTH has no room for it; a starting
    /// PSN from userspace (`ib_qp_attr.sq_psn`) is truncated the same way.
    pub(crate) const fn new(value: u32) -> Self {
        Self(value & Self::MASK)
    }

    /// Returns the PSN as a number below 2^24.
    pub(crate) const fn get(self) -> u32 {
        self.0
    }

    /// Returns the PSN that follows this one.
    pub(crate) const fn next(self) -> Self {
        Self::new(self.0.wrapping_add(1))
    }

    /// Returns how many packets this PSN is ahead of `earlier`, modulo 2^24.
    ///
    /// This is what a completer needs to know how many packets an ACK
    /// covers, and what a responder needs to spot a duplicate.
    pub(crate) const fn distance_from(self, earlier: Psn) -> u32 {
        self.0.wrapping_sub(earlier.0) & Self::MASK
    }

    /// Tells whether this PSN comes strictly before `other`.
    ///
    /// That is the case when `other` is ahead by at least one and less than
    /// 2^23. At exactly 2^23 neither PSN is before the other: a peer that far
    /// out of step is broken, and refusing to order it is the safe answer.
    pub(crate) const fn before(self, other: Psn) -> bool {
        let ahead = other.distance_from(self);
        ahead != 0 && ahead < Self::HALF
    }

    /// Tells whether this PSN comes strictly after `other`.
    pub(crate) const fn after(self, other: Psn) -> bool {
        other.before(self)
    }
}

impl Add<u32> for Psn {
    type Output = Psn;

    /// Returns the PSN `n` packets later, wrapping at 2^24.
    fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: Psn = Psn::new(Psn::MASK);

    #[test]
    fn new_keeps_24_bits() {
        assert_eq!(Psn::new(0x1234_5678).get(), 0x34_5678);
        assert_eq!(Psn::new(u32::MAX), TOP);
    }

    #[test]
    fn add_wraps_at_2_pow_24() {
        assert_eq!(TOP.next(), Psn::new(0));
        assert_eq!(TOP + 2, Psn::new(1));
        assert_eq!(Psn::new(5) + u32::MAX, Psn::new(4));
        assert_eq!(Psn::new(0xff_fff0) + 0x20, Psn::new(0x10));
    }

    #[test]
    fn distance_across_the_wrap() {
        assert_eq!(Psn::new(2).distance_from(TOP), 3);
        assert_eq!(TOP.distance_from(Psn::new(2)), Psn::MASK - 2);
        assert_eq!(Psn::new(7).distance_from(Psn::new(7)), 0);
    }

    #[test]
    fn before_and_after_across_the_wrap() {
        assert!(TOP.before(Psn::new(0)));
        assert!(Psn::new(0).after(TOP));
        assert!(Psn::new(0xff_fff0).before(Psn::new(0x10)));
        assert!(!Psn::new(0x10).before(Psn::new(0xff_fff0)));
        assert!(!Psn::new(9).before(Psn::new(9)));
        assert!(!Psn::new(9).after(Psn::new(9)));
    }

    #[test]
    fn ordering_stops_at_half_the_space() {
        let a = Psn::new(0x70_0000);
        assert!(a.before(a + (Psn::HALF - 1)));
        assert!(!a.before(a + Psn::HALF));
        assert!(!(a + Psn::HALF).before(a));
        assert!(a.after(a + (Psn::HALF + 1)));
    }

    #[test]
    fn before_is_antisymmetric_everywhere() {
        let mut x: u32 = 0x1234_5678;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let a = Psn::new(x);
            let b = Psn::new(x.rotate_left(11));
            assert!(!(a.before(b) && b.before(a)));
            assert_eq!(a.before(b), b.after(a));
            assert_eq!(a + b.distance_from(a), b);
        }
    }
}
