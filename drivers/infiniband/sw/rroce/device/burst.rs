// SPDX-License-Identifier: GPL-2.0

//! What a burst of received packets owes the peers (one ACK, held to its
//! end) and what it may still send itself.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// How long an owed ACK may wait for the burst to end. A slow host (a
/// debug kernel under emulation) can take seconds over one burst, longer
/// than the peer waits before it sends again: one jiffy bounds the wait
/// without adding ACKs to a fast host's bursts.
pub(super) const ACK_HOLD_JIFFIES: u64 = 1;

/// No QP has this number (they have 24 bits).
pub(super) const NO_QP: u32 = u32::MAX;

/// The answer packets (ACKs, READ responses...) one burst of received
/// packets may send from the receive path; the rest wait for the kick
/// work. As many as a burst's own packets (`Driver::RX_BUDGET`): a peer
/// asking for many READs then holds the receive work no longer than that,
/// and once answers wait, the requests beyond what may wait are dropped
/// rather than carried out.
const INLINE_ANSWERS: u32 = 64;

/// What the burst of packets being received owes and may still send. Only
/// the one receiving packets uses it.
pub(super) struct Burst {
    /// The QP that owes its peer an ACK, to be sent when the burst ends, or
    /// [`NO_QP`].
    pub(super) ack_owed: AtomicU32,
    /// When (jiffies) the owed ACK came to be owed.
    pub(super) ack_owed_since: AtomicU64,
    /// The answer packets the burst may still send itself.
    answers_left: AtomicU32,
}

impl Burst {
    pub(super) fn new() -> Self {
        Self {
            ack_owed: AtomicU32::new(NO_QP),
            ack_owed_since: AtomicU64::new(0),
            answers_left: AtomicU32::new(INLINE_ANSWERS),
        }
    }

    /// Takes up to `want` of the answer packets the burst may still send
    /// ([`Services::take_inline_answers`](crate::device_services::Services::take_inline_answers)).
    pub(super) fn take_answers(&self, want: u32) -> u32 {
        // Only the one receiving takes them: no other can race.
        let left = self.answers_left.load(Ordering::Relaxed);
        let taken = want.min(left);
        self.answers_left.store(left - taken, Ordering::Relaxed);
        taken
    }

    /// The burst is over: the next may send answers again.
    pub(super) fn end(&self) {
        self.answers_left.store(INLINE_ANSWERS, Ordering::Relaxed);
    }
}
