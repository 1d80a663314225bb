// SPDX-License-Identifier: GPL-2.0

//! The device's counters, which `rdma statistic show link rroce0/1` shows:
//! packets, the protocol's recovery events, drops by reason, and bytes.
//! The Performance Management agent reports the port's share of them.
//!
//! A QP bound to a counter set (`rdma statistic qp set ... auto on`, or
//! `rdma statistic qp bind`) counts what happens to it in the set instead
//! of the port's own counters: `rdma statistic show link` adds the sets to
//! those, so the totals stay whole.

use crate::pool::Pool;
use crate::proto::pma::PortCounts;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{c_str, prelude::*, sync::Arc};

/// What is counted. The order is that of [`NAMES`].
#[derive(Clone, Copy, Debug)]
#[repr(usize)]
pub(crate) enum Counter {
    SentPkts,
    RcvdPkts,
    DuplicateRequest,
    OutOfSeqRequest,
    SeqNakSent,
    SeqNakRcvd,
    RnrNakSent,
    RnrNakRcvd,
    AccessNakSent,
    Retransmits,
    RetryExceeded,
    RnrRetryExceeded,
    DropBadIcrc,
    DropBadHeader,
    DropUnknownQp,
    DropBadState,
    DropBacklog,
    /// Requests dropped because too many answers waited to be sent.
    DropResponderBusy,
    SendErr,
    /// Bytes of the IP datagrams sent, and received whole (ICRC and
    /// headers good), as rxe counts them.
    SentBytes,
    RcvdBytes,
    /// Packets to and from multicast groups.
    SentMcastPkts,
    RcvdMcastPkts,
    /// Packets received marked Congestion Experienced, the CNPs sent for
    /// them, and CNPs received: acted on (the QP slowed down), or not
    /// (congestion control off, or a cut just before).
    NpEcnMarked,
    NpCnpSent,
    RpCnpIgnored,
    RpCnpHandled,
    /// READs asked again while their response still waited to be sent:
    /// that response was sent again from where asked, none added.
    DuplicateReadMerged,
    /// Packets for a connected QP that came from another address than
    /// its peer's, or to another than its own.
    DropBadAddress,
}

/// The counters' names, as `rdma statistic` prints them.
pub(crate) const NAMES: &[&CStr] = &[
    c_str!("sent_pkts"),
    c_str!("rcvd_pkts"),
    c_str!("duplicate_request"),
    c_str!("out_of_seq_request"),
    c_str!("seq_nak_sent"),
    c_str!("seq_nak_rcvd"),
    c_str!("rnr_nak_sent"),
    c_str!("rnr_nak_rcvd"),
    c_str!("access_nak_sent"),
    c_str!("retransmits"),
    c_str!("retry_exceeded_err"),
    c_str!("rnr_retry_exceeded_err"),
    c_str!("drop_bad_icrc"),
    c_str!("drop_bad_header"),
    c_str!("drop_unknown_qp"),
    c_str!("drop_bad_state"),
    c_str!("drop_backlog"),
    c_str!("drop_responder_busy"),
    c_str!("send_err"),
    c_str!("sent_bytes"),
    c_str!("rcvd_bytes"),
    c_str!("sent_mcast_pkts"),
    c_str!("rcvd_mcast_pkts"),
    c_str!("np_ecn_marked_roce_packets"),
    c_str!("np_cnp_sent"),
    c_str!("rp_cnp_ignored"),
    c_str!("rp_cnp_handled"),
    c_str!("duplicate_read_merged"),
    c_str!("drop_bad_address"),
];

const COUNT: usize = Counter::DropBadAddress as usize + 1;
const _: () = assert!(NAMES.len() == COUNT);

/// A set of the counters: a port's own, or a set QPs are bound to.
pub(crate) struct Counters([AtomicU64; COUNT]);

impl Counters {
    /// All zero.
    pub(crate) fn new() -> Self {
        Self([const { AtomicU64::new(0) }; COUNT])
    }

    /// Counts `n` more `c`.
    fn add(&self, c: Counter, n: u64) {
        self.0[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self, c: Counter) -> u64 {
        self.0[c as usize].load(Ordering::Relaxed)
    }

    /// The values, in the order of [`NAMES`].
    pub(crate) fn read(&self, values: &mut [u64]) {
        for (v, c) in values.iter_mut().zip(&self.0) {
            *v = c.load(Ordering::Relaxed);
        }
    }
}

/// A port's counters: its own, and the sets its QPs count in.
#[pin_data]
pub(crate) struct PortCounters {
    own: Counters,
    /// What bound QPs counted in their sets, those since gone included:
    /// with `own`, the whole port's.
    in_sets: Counters,
    /// The sets QPs are bound to, by id.
    #[pin]
    sets: Pool<Counters>,
}

impl PortCounters {
    /// All zero, with no sets, which will have ids up to `last_set`.
    pub(crate) fn new(last_set: u32) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            own: Counters::new(),
            in_sets: Counters::new(),
            sets <- Pool::new(1, last_set),
        })
    }

    /// Counts `n` more `c` in `set`, if a QP is bound to one, else in the
    /// port's own.
    pub(crate) fn add(&self, set: Option<&Counters>, c: Counter, n: u64) {
        match set {
            Some(set) => {
                set.add(c, n);
                self.in_sets.add(c, n);
            }
            None => self.own.add(c, n),
        }
    }

    /// The set `id`, or a new one if `id` is none, and its id.
    pub(crate) fn set(&self, id: Option<u32>) -> Result<(u32, Arc<Counters>)> {
        match id {
            Some(id) => Ok((id, self.sets.get(id).ok_or(EINVAL)?)),
            None => self
                .sets
                .add(|_| Arc::new(Counters::new(), GFP_KERNEL).map_err(Into::into)),
        }
    }

    /// The set `id` goes; what it counted stays in the port's total.
    pub(crate) fn remove_set(&self, id: u32) {
        self.sets.remove(id);
    }

    /// The values of set `id`, in the order of [`NAMES`].
    pub(crate) fn read_set(&self, id: u32, values: &mut [u64]) -> Result {
        self.sets.get(id).ok_or(EINVAL)?.read(values);
        Ok(())
    }

    /// The port's own values, in the order of [`NAMES`].
    pub(crate) fn read_own(&self, values: &mut [u64]) {
        self.own.read(values);
    }

    /// What the Performance Management agent reports of the port.
    pub(crate) fn port_counts(&self) -> PortCounts {
        let get = |c| self.own.get(c) + self.in_sets.get(c);
        PortCounts {
            xmit_bytes: get(Counter::SentBytes),
            rcv_bytes: get(Counter::RcvdBytes),
            xmit_packets: get(Counter::SentPkts),
            rcv_packets: get(Counter::RcvdPkts),
            xmit_multicast: get(Counter::SentMcastPkts),
            rcv_multicast: get(Counter::RcvdMcastPkts),
            rcv_errors: get(Counter::DropBadIcrc) + get(Counter::DropBadHeader),
            xmit_discards: get(Counter::SendErr),
        }
    }
}
