// SPDX-License-Identifier: GPL-2.0

//! The answers a responder owes its peer while a READ response is being
//! sent, and the ring they wait in, bounded whatever the peer asks for.
//! `answers.rs` sends them.

use crate::limits::MAX_RD_ATOMIC;
use crate::mw::RemoteTarget;
use crate::proto::{
    headers::{Syndrome, UNLIMITED_CREDITS},
    opcode::Opcode,
    psn::Psn,
};
use kernel::prelude::*;

/// MSNs are 24 bits.
const MSN_MASK: u32 = 0x00ff_ffff;

/// The answers that may wait: a READ or atomic for each a requester may
/// have outstanding, and an ACK or NAK before and after each.
const MAX_WAITING: usize = 2 * MAX_RD_ATOMIC as usize + 2;

/// A positive ACK, with the credits rroce always grants.
pub(crate) fn ack() -> Syndrome {
    Syndrome::Ack {
        credits: UNLIMITED_CREDITS,
    }
}

/// An answer owed to the peer.
pub(crate) enum Answer {
    /// A packet that holds only an AETH: an ACK or NAK, or a FLUSH's or
    /// ATOMIC WRITE's answer.
    Aeth {
        opcode: Opcode,
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
    },
    /// A compare-and-swap's or fetch-and-add's result.
    Atomic { psn: Psn, msn: u32, orig: u64 },
    /// A READ response, or what is left of it.
    Read(ReadResponse),
}

impl Answer {
    /// An ACK or NAK of the request at `psn`, after `msn` messages.
    pub(crate) fn aeth(opcode: Opcode, psn: Psn, syndrome: Syndrome, msn: u32) -> Self {
        Self::Aeth {
            opcode,
            psn,
            syndrome,
            msn: msn & MSN_MASK,
        }
    }

    /// The answer of the atomic at `psn`, which found `orig`, after `msn`
    /// messages.
    pub(crate) fn atomic(psn: Psn, orig: u64, msn: u32) -> Self {
        Self::Atomic {
            psn,
            msn: msn & MSN_MASK,
            orig,
        }
    }

    /// The packets it takes to send.
    pub(crate) fn packets(&self) -> u32 {
        match self {
            Self::Read(r) => r.npsn.saturating_sub(r.next),
            _ => 1,
        }
    }

    /// A positive ACK, which a later one may replace while both wait.
    fn is_ack(&self) -> bool {
        matches!(
            self,
            Self::Aeth {
                opcode: Opcode::RcAck,
                syndrome: Syndrome::Ack { .. },
                ..
            }
        )
    }
}

/// The response to a READ request, sent from packet `next` on.
pub(crate) struct ReadResponse {
    /// None for a zero-length READ, which names no memory.
    pub(crate) mr: Option<RemoteTarget>,
    pub(crate) offset: usize,
    pub(crate) len: usize,
    /// The PSN of the request, which its first packet takes.
    pub(crate) psn: Psn,
    pub(crate) npsn: u32,
    /// The packets sent so far.
    pub(crate) next: u32,
    pub(crate) mtu: usize,
    /// The MSN the READ completes, which its AETHs carry.
    pub(crate) msn: u32,
}

impl ReadResponse {
    /// The response to a READ at `psn` of `len` bytes at `offset` in `mr`,
    /// in packets of `mtu` bytes, that completes message `msn`.
    pub(crate) fn new(
        mr: Option<RemoteTarget>,
        offset: usize,
        len: usize,
        psn: Psn,
        mtu: usize,
        msn: u32,
    ) -> Self {
        Self {
            mr,
            offset,
            len,
            psn,
            npsn: read_npsn(len, mtu),
            next: 0,
            mtu,
            msn: msn & MSN_MASK,
        }
    }
}

/// The packets of a READ response of `len` bytes in packets of `mtu`: one
/// at least, for a zero-length READ.
pub(crate) fn read_npsn(len: usize, mtu: usize) -> u32 {
    len.div_ceil(mtu.max(1)).max(1) as u32
}

/// The answers waiting behind a READ response, oldest first: a ring that
/// grows as they do, up to [`MAX_WAITING`].
pub(crate) struct Answers {
    slots: KVec<Option<Answer>>,
    first: usize,
    len: usize,
}

impl Answers {
    pub(crate) fn new() -> Self {
        Self {
            slots: KVec::new(),
            first: 0,
            len: 0,
        }
    }

    /// Whether the peer has made so many answers wait that its next
    /// request, which may add its own and an ACK before it, is dropped.
    pub(crate) fn busy(&self) -> bool {
        self.len + 2 > MAX_WAITING
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every answer: a QP in error or reset sends none.
    pub(crate) fn clear(&mut self) {
        *self = Self::new();
    }

    /// Puts `a` last, or in place of a positive ACK waiting last if it is
    /// one too: one ACK answers every request before it. Gives it back if
    /// the ring is full and cannot grow.
    pub(crate) fn push(&mut self, a: Answer) -> Result<(), Answer> {
        if let Some(last) = self.last_mut() {
            if last.is_ack() && a.is_ack() {
                *last = a;
                return Ok(());
            }
        }
        if self.len == self.slots.len() && self.grow().is_err() {
            return Err(a);
        }
        let i = self.slot(self.len);
        match self.slots.get_mut(i) {
            Some(slot) => *slot = Some(a),
            None => return Err(a),
        }
        self.len += 1;
        Ok(())
    }

    /// A READ asked again for the last `npsn` PSNs of a response that waits
    /// here, from `psn` (the requester thought them lost): that response
    /// becomes the answer to this request, its packets from `psn` on sent
    /// from the first (a requester takes a retried READ's response from a
    /// FIRST or ONLY packet), rather than a second response queued behind
    /// it, which a requester that keeps asking would pile up faster than
    /// the responder sends. False if no waiting response ends as asked.
    pub(crate) fn resend_read_from(&mut self, psn: Psn, npsn: u32) -> bool {
        for i in 0..self.len {
            let slot = self.slot(i);
            if let Some(Some(Answer::Read(r))) = self.slots.get_mut(slot) {
                let at = psn.distance_from(r.psn);
                if at < r.npsn && npsn == r.npsn - at {
                    // The requester has every packet before `psn`.
                    let skip = at as usize * r.mtu;
                    r.psn = psn;
                    r.offset += skip;
                    r.len = r.len.saturating_sub(skip);
                    r.npsn = npsn;
                    r.next = 0;
                    return true;
                }
            }
        }
        false
    }

    /// Whether the answer of the atomic at `psn` waits here.
    pub(crate) fn holds_atomic(&self, psn: Psn) -> bool {
        (0..self.len).any(|i| {
            matches!(self.slots.get(self.slot(i)),
                Some(Some(Answer::Atomic { psn: p, .. })) if *p == psn)
        })
    }

    /// Takes the oldest answer.
    pub(crate) fn take(&mut self) -> Option<Answer> {
        if self.len == 0 {
            return None;
        }
        let a = self.slots.get_mut(self.first)?.take();
        self.first = self.slot(1);
        self.len -= 1;
        a
    }

    /// Puts back, first, the answer just taken.
    pub(crate) fn restore(&mut self, a: Answer) {
        let n = self.slots.len();
        if self.len < n {
            self.first = (self.first + n - 1) % n;
            if let Some(slot) = self.slots.get_mut(self.first) {
                *slot = Some(a);
                self.len += 1;
            }
        }
    }

    /// The slot of the answer `i` places after the first.
    fn slot(&self, i: usize) -> usize {
        (self.first + i).checked_rem(self.slots.len()).unwrap_or(0)
    }

    fn last_mut(&mut self) -> Option<&mut Answer> {
        let i = self.slot(self.len.checked_sub(1)?);
        self.slots.get_mut(i)?.as_mut()
    }

    /// Doubles the ring, its answers kept in order.
    fn grow(&mut self) -> Result {
        if self.len >= MAX_WAITING {
            return Err(ENOSPC);
        }
        let size = (self.len * 2).clamp(4, MAX_WAITING);
        let mut slots = KVec::with_capacity(size, GFP_KERNEL)?;
        let mut old = core::mem::replace(self, Self::new());
        while let Some(a) = old.take() {
            // The capacity is there: nothing is lost.
            let _ = slots.push(Some(a), GFP_KERNEL);
        }
        self.len = slots.len();
        while slots.len() < size {
            let _ = slots.push(None, GFP_KERNEL);
        }
        self.slots = slots;
        Ok(())
    }
}
