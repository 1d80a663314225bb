// SPDX-License-Identifier: GPL-2.0

//! A QP's send side: the work requests taken from its send queue, and the
//! window over their packets that the requester sends by and the completer
//! retires.
//!
//! Work requests are copied out of the ring when taken, so the process
//! cannot change one in flight. What they are for the protocol (their PSNs,
//! what was sent and acknowledged, when to send again) is the core's
//! [`SendWindow`]; this file adds what they are for the device: the work
//! request itself, with its memory and, for UD, its destination resolved.

use crate::kernel_ext::{jiffies_to_usecs, usecs_to_jiffies};
use crate::kernel_posts::empty_slots;
use crate::local_mem::Memory;
use crate::proto::{
    dcqcn::Rate,
    psn::Psn,
    ring::Ring,
    window::{Clock, Kind, SendWindow, Track},
    wqe::WrOpcode,
};
use crate::work::SendWqe;
use kernel::prelude::*;

/// The kernel's clock, in jiffies, for the window's timers.
pub(crate) struct Jiffies;

impl Clock for Jiffies {
    fn usecs_to_ticks(&self, usecs: u32) -> u64 {
        usecs_to_jiffies(usecs)
    }

    fn ticks_to_usecs(&self, ticks: u64) -> u32 {
        jiffies_to_usecs(ticks)
    }
}

/// A work request taken from the send queue.
pub(crate) struct Entry {
    pub(crate) track: Track,
    pub(crate) wqe: SendWqe,
    pub(crate) local: Memory,
}

impl AsRef<Track> for Entry {
    fn as_ref(&self) -> &Track {
        &self.track
    }
}

impl AsMut<Track> for Entry {
    fn as_mut(&mut self) -> &mut Track {
        &mut self.track
    }
}

/// What a work request's PSNs stand for.
pub(crate) fn kind(op: WrOpcode) -> Kind {
    match op {
        WrOpcode::Read => Kind::Read,
        WrOpcode::CmpSwap | WrOpcode::FetchAdd => Kind::Atomic,
        WrOpcode::Flush | WrOpcode::AtomicWrite => Kind::Commit,
        _ => Kind::Data,
    }
}

/// The send side's state, under the QP's lock.
pub(crate) struct SendQueue {
    /// The requests taken, by send queue slot.
    pub(crate) window: SendWindow<KVVec<Option<Entry>>>,
    /// A copy of a ring element.
    pub(crate) scratch: KVec<u8>,
    /// The next request, fetched but waiting for its fence.
    pub(crate) pending: Option<SendWqe>,
    /// How fast it may send, after CNPs.
    pub(crate) rate: Rate,
    /// Since the doorbell rang, a request was taken that the peer's
    /// process waits for ([`WrOpcode::completes_at_peer`]).
    pub(crate) took_for_receiver: bool,
    /// The requester stopped at its burst's end with more to send: the
    /// device's kick work, or failing that its timer, goes on with it.
    pub(crate) cut: bool,
}

impl SendQueue {
    /// The send side of a QP whose send queue has `geometry`: a process's
    /// ring (`user`), or the slots of a kernel consumer's queue.
    pub(crate) fn new(geometry: Ring, user: bool) -> Result<Self> {
        let entries = empty_slots(geometry.index_mask() as usize + 1)?;
        let scratch =
            KVec::from_elem(0u8, if user { geometry.elem_size() } else { 0 }, GFP_KERNEL)?;
        Ok(Self {
            window: SendWindow::new(entries, geometry, &Jiffies),
            scratch,
            pending: None,
            rate: Rate::new(0),
            took_for_receiver: false,
            cut: false,
        })
    }

    /// Starts the send PSNs at `psn` (modify with `IB_QP_SQ_PSN`).
    pub(crate) fn reset(&mut self, psn: Psn) {
        self.window.reset(psn);
    }

    /// The PSN the next request starts at: `sq_psn` as a query reports it.
    pub(crate) fn next_psn(&self) -> Psn {
        self.window.next_psn()
    }

    /// How soon the device timer must look at this QP, if at all.
    pub(crate) fn timer_usecs(&self, timeout: u8) -> Option<u32> {
        self.window.timer_usecs(timeout, &Jiffies)
    }
}

/// What the send queue holds next.
// Moved once per request; boxing the request would allocate for each.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Fetched {
    Empty,
    /// A ring element that does not parse, and its `wr_id`.
    Bad(u64),
    Wqe(SendWqe),
}
