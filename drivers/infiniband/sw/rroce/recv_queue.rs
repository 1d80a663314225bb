// SPDX-License-Identifier: GPL-2.0

//! A QP's receive side: where the responder is in the peer's PSNs and
//! messages, the receive request it is filling, the RDMA WRITE it is
//! carrying out, and the results of recent atomics, for duplicates.
//!
//! The responder (`responder.rs`) moves this state; the QP flushes it.

use crate::answer_ring::Answers;
use crate::limits::MAX_RD_ATOMIC;
use crate::local_mem::Memory;
use crate::mw::RemoteTarget;
use crate::proto::psn::Psn;
use kernel::prelude::*;

/// A receive request being filled.
pub(crate) struct Recv {
    pub(crate) wr_id: u64,
    pub(crate) segs: Memory,
    /// Bytes placed so far.
    pub(crate) len: usize,
}

/// An RDMA WRITE being carried out.
pub(crate) struct Write {
    /// None for a zero-length WRITE, which names no memory.
    pub(crate) mr: Option<RemoteTarget>,
    pub(crate) offset: usize,
    pub(crate) remaining: usize,
    /// The length its RETH announced, for a WRITE with immediate.
    pub(crate) total: u32,
}

/// The receive side's state, under the QP's lock.
pub(crate) struct RecvQueue {
    /// The PSN expected next.
    pub(crate) epsn: Psn,
    /// Messages completed, for the AETH.
    pub(crate) msn: u32,
    /// The next receive queue slot: the consumer index.
    pub(crate) head: u32,
    /// The receive request being filled.
    pub(crate) filling: Option<Recv>,
    pub(crate) write: Option<Write>,
    /// A sequence NAK was sent for this PSN; do not repeat it.
    pub(crate) nak_sent: Option<Psn>,
    /// The ACK of the requests up to this PSN waits for the end of the
    /// burst of packets being received, so that one ACK answers the burst.
    pub(crate) ack_owed: Option<Psn>,
    /// The last atomics' PSNs and results, as many as a requester may have
    /// outstanding, to answer a duplicate without doing it again.
    pub(crate) atomics: KVec<Option<(Psn, u64)>>,
    /// Where the next result goes.
    pub(crate) next_atomic: usize,
    /// Answers waiting behind a READ response being sent.
    pub(crate) answers: Answers,
    /// UC: a packet was lost; drop the rest of the message.
    pub(crate) uc_drop: bool,
    /// A copy of a receive queue element.
    pub(crate) scratch: KVec<u8>,
}

impl RecvQueue {
    /// The receive side of a QP whose receive ring has elements of
    /// `elem_size` bytes (0 without one).
    pub(crate) fn new(elem_size: usize) -> Result<Self> {
        Ok(Self {
            epsn: Psn::new(0),
            msn: 0,
            head: 0,
            filling: None,
            write: None,
            nak_sent: None,
            ack_owed: None,
            atomics: KVec::from_elem(None, MAX_RD_ATOMIC.into(), GFP_KERNEL)?,
            next_atomic: 0,
            answers: Answers::new(),
            uc_drop: false,
            scratch: KVec::from_elem(0u8, elem_size, GFP_KERNEL)?,
        })
    }

    /// The packets before `next` were taken: `next` is expected, and a NAK
    /// may be sent again.
    pub(crate) fn advance(&mut self, next: Psn) {
        self.epsn = next;
        self.nak_sent = None;
    }

    /// A request message was carried out, up to just before `next`.
    pub(crate) fn message_done(&mut self, next: Psn) {
        self.msn = self.msn.wrapping_add(1);
        self.advance(next);
    }

    /// Keeps an atomic's result for a duplicate of its request.
    pub(crate) fn remember_atomic(&mut self, psn: Psn, orig: u64) {
        if let Some(slot) = self.atomics.get_mut(self.next_atomic) {
            *slot = Some((psn, orig));
        }
        self.next_atomic = (self.next_atomic + 1) % self.atomics.len().max(1);
    }

    /// The result of the atomic at `psn`, the newest if several match.
    pub(crate) fn atomic_result(&self, psn: Psn) -> Option<u64> {
        let n = self.atomics.len();
        (1..=n)
            .map(|back| (self.next_atomic + n - back) % n)
            .filter_map(|i| self.atomics.get(i).copied().flatten())
            .find(|(p, _)| *p == psn)
            .map(|(_, orig)| orig)
    }

    /// The PSN expected next: `rq_psn` as a query reports it.
    pub(crate) fn expected_psn(&self) -> Psn {
        self.epsn
    }

    /// Expects `psn` next (modify with `IB_QP_RQ_PSN`).
    pub(crate) fn reset(&mut self, psn: Psn) {
        self.epsn = psn;
        self.nak_sent = None;
        self.ack_owed = None;
        self.uc_drop = false;
        self.write = None;
        self.answers.clear();
        // Results of a former connection's atomics answer nothing now.
        for slot in self.atomics.iter_mut() {
            *slot = None;
        }
        self.next_atomic = 0;
    }
}
