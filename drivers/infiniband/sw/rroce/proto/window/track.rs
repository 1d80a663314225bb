// SPDX-License-Identifier: GPL-2.0

//! A work request's [`Track`]: the PSNs it was given and how far it got,
//! which the window keeps beside it in its slot.

use super::super::psn::Psn;
use super::{READ_CHUNK, WINDOW};

/// What a work request's PSNs stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A SEND or WRITE: its request packets, which ACKs answer. Also a
    /// local operation, which has no PSN and is done when taken.
    Data,
    /// An RDMA READ: its response packets, which one request asks for per
    /// chunk.
    Read,
    /// An atomic: its one request, which an atomic ACK answers.
    Atomic,
    /// A FLUSH or ATOMIC WRITE: its one request, which an empty read
    /// response answers, or a later ACK (it returns nothing to wait for).
    Commit,
}

impl Kind {
    /// Whether the requester waits for an answer to a packet of this
    /// kind: one of every request that is not a SEND or WRITE, and the
    /// `last` packet of a SEND or WRITE that is `signalled`. An unsignalled
    /// one completes unseen: the next ACK asked for answers it too.
    pub(crate) fn awaits_answer(self, last: bool, signalled: bool) -> bool {
        self != Kind::Data || (last && signalled)
    }
}

/// A work request's place in the PSN space, and how far it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Track {
    pub(super) kind: Kind,
    /// The message length in bytes.
    pub(super) length: u32,
    pub(super) first_psn: Psn,
    /// PSNs it uses: its packets, or for a read its response packets.
    pub(super) npsn: u32,
    /// Request packets sent (an atomic has one); for a read, the response
    /// packets asked for.
    pub(super) sent: u32,
    /// Packets of a SEND or WRITE the peer acknowledged.
    pub(super) acked: u32,
    /// Read response packets received in order: all before this one.
    pub(super) got: u32,
    /// Read responses received from `got` on. Responses past a gap are
    /// placed as they come.
    pub(super) ahead: Ahead,
    /// For a read, the response packets one request asks for: set when it
    /// is first sent, from the window then, and kept, so that a request
    /// sent again asks for part of one sent before, never more.
    pub(super) chunk: u32,
    /// A read asked again for the responses before this one, after a gap,
    /// a timeout or a later answer: a gap before it is no news. An atomic
    /// sets it to 1 once sent again after a later answer.
    pub(super) asked_again_to: u32,
    /// The gap a read is asking again for, alone.
    pub(super) gap: Option<Gap>,
    pub(super) done: bool,
}

/// Responses a read asks again for after a gap: the first ones missing,
/// from `got` up to `end`, the next one received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Gap {
    pub(super) end: u32,
    /// Where asking resumes once the gap has been asked for: the responses
    /// asked for before it.
    pub(super) resume: u32,
}

/// Read responses from the first one missing on, as bits: bit `i` for
/// response `got + i`. A request goes out while its PSN is within the
/// window of the oldest unacknowledged one, and asks for at most
/// [`READ_CHUNK`] responses, so every response asked for is fewer than
/// `WINDOW + READ_CHUNK` past the first one missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Ahead([u128; 2]);

const _: () = assert!(WINDOW + READ_CHUNK <= Ahead::BITS);

impl Ahead {
    const BITS: u32 = 2 * u128::BITS;

    pub(super) fn get(&self, i: u32) -> bool {
        i < Self::BITS && (self.0[(i / 128) as usize] >> (i % 128)) & 1 != 0
    }

    pub(super) fn set(&mut self, i: u32) {
        if i < Self::BITS {
            self.0[(i / 128) as usize] |= 1 << (i % 128);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        // Not `== [0, 0]`, which compiles to a call to `bcmp`.
        self.0[0] | self.0[1] == 0
    }

    /// How many bits from bit 0 on are set.
    pub(super) fn leading_run(&self) -> u32 {
        match self.0[0].trailing_ones() {
            128 => 128 + self.0[1].trailing_ones(),
            n => n,
        }
    }

    /// How many bits from bit 0 on are clear.
    pub(super) fn leading_gap(&self) -> u32 {
        match self.0[0].trailing_zeros() {
            128 => 128 + self.0[1].trailing_zeros(),
            n => n,
        }
    }

    /// Drops the first `n` bits.
    pub(super) fn shift(&mut self, n: u32) {
        let [lo, hi] = self.0;
        self.0 = match n {
            0 => return,
            1..=127 => [(lo >> n) | (hi << (128 - n)), hi >> n],
            128..=255 => [hi >> (n - 128), 0],
            _ => [0, 0],
        };
    }
}

impl Track {
    /// A request of `kind` and `length` bytes, in packets of `mtu` bytes,
    /// starting at `first_psn`.
    pub(crate) fn new(kind: Kind, length: u32, mtu: u32, first_psn: Psn) -> Self {
        let npsn = match kind {
            Kind::Atomic | Kind::Commit => 1,
            Kind::Data | Kind::Read => length.div_ceil(mtu.max(1)).max(1),
        };
        Self {
            kind,
            length,
            first_psn,
            npsn,
            sent: 0,
            acked: 0,
            got: 0,
            ahead: Ahead::default(),
            chunk: 0,
            asked_again_to: 0,
            gap: None,
            done: false,
        }
    }

    /// A local operation at `psn`, carried out when taken: it uses no PSN
    /// and is done, so it completes once the requests before it have.
    pub(crate) fn local(psn: Psn) -> Self {
        Self {
            npsn: 0,
            done: true,
            ..Self::new(Kind::Data, 0, 1, psn)
        }
    }

    /// What the request's PSNs stand for.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// The PSNs it uses.
    pub(crate) fn npsn(&self) -> u32 {
        self.npsn
    }

    /// Packets sent (for a read, response packets asked for).
    pub(crate) fn sent(&self) -> u32 {
        self.sent
    }

    /// Whether it is done and may complete.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Whether the responder holds a resource for it (a READ, an atomic,
    /// a FLUSH or an ATOMIC WRITE): what `max_rd_atomic` and fences count.
    pub(super) fn takes_resource(&self) -> bool {
        self.kind != Kind::Data
    }

    /// Whether only its own answer completes it, not a later ACK: a read's
    /// data or an atomic's original value must come back.
    pub(super) fn needs_answer(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Atomic)
    }

    /// What `sent` counts up to.
    pub(super) fn request_packets(&self) -> u32 {
        if self.kind == Kind::Atomic {
            1
        } else {
            self.npsn
        }
    }

    pub(super) fn holds(&self, psn: Psn) -> bool {
        psn.distance_from(self.first_psn) < self.npsn
    }

    /// The PSN of the next request packet.
    pub(crate) fn next_psn(&self) -> Psn {
        self.first_psn + self.sent
    }

    /// The PSN of its last packet; for a local operation, which has none,
    /// the one before `first_psn`.
    pub(super) fn last_psn(&self) -> Psn {
        self.first_psn + self.npsn.wrapping_sub(1)
    }

    /// The response packets the next request of a read asks for: up to the
    /// end of its chunk, so that a request sent again after a loss asks for
    /// part of what one earlier request asked for, never more, as responders
    /// expect. Nor less: the responder may have lost that earlier one and
    /// taken this one as new, and it must hold any request sent again after
    /// it too. Except for a gap, which is asked for alone: a response after
    /// it shows that the responder took the requests before.
    pub(super) fn read_chunk(&self) -> u32 {
        let chunk = (self.chunk - self.sent % self.chunk).min(self.npsn - self.sent);
        match self.gap {
            Some(gap) => chunk.min(gap.end.saturating_sub(self.sent)).max(1),
            None => chunk,
        }
    }

    /// Whether response `n` of a read has been received.
    pub(super) fn received(&self, n: u32) -> bool {
        n < self.got || self.ahead.get(n - self.got)
    }

    /// Whether response `n` of a read may be tracked: see [`Ahead`].
    pub(super) fn trackable(&self, n: u32) -> bool {
        n.wrapping_sub(self.got) < Ahead::BITS
    }

    /// Response `n` of a read was received.
    pub(super) fn receive(&mut self, n: u32) {
        if !self.trackable(n) {
            return;
        }
        if n == self.got && self.ahead.is_empty() {
            // In order, as nearly every response comes: no bits to shift.
            self.got += 1;
            self.asked(self.got);
            return;
        }
        self.ahead.set(n - self.got);
        let run = self.ahead.leading_run();
        self.got += run;
        self.ahead.shift(run);
        self.asked(self.got);
    }

    /// A read has asked for the responses before `n`, or has them.
    pub(super) fn asked(&mut self, n: u32) {
        self.sent = self.sent.max(n);
        if let Some(gap) = self.gap.filter(|g| self.sent >= g.end) {
            self.sent = self.sent.max(gap.resume);
            self.gap = None;
        }
    }
}
