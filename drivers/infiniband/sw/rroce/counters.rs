// SPDX-License-Identifier: GPL-2.0

//! The device's counters, which `rdma statistic show link rroce0/1` shows:
//! packets, the protocol's recovery events, drops by reason, and bytes.
//! The Performance Management agent reports the port's share of them.

use crate::proto::pma::PortCounts;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::{c_str, prelude::*};

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
    SendErr,
    /// Bytes of the IP datagrams sent, and received whole (ICRC and
    /// headers good), as rxe counts them.
    SentBytes,
    RcvdBytes,
    /// Packets to and from multicast groups.
    SentMcastPkts,
    RcvdMcastPkts,
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
    c_str!("send_err"),
    c_str!("sent_bytes"),
    c_str!("rcvd_bytes"),
    c_str!("sent_mcast_pkts"),
    c_str!("rcvd_mcast_pkts"),
];

const COUNT: usize = Counter::RcvdMcastPkts as usize + 1;
const _: () = assert!(NAMES.len() == COUNT);

/// One device's counters.
pub(crate) struct Counters([AtomicU64; COUNT]);

impl Counters {
    /// All zero.
    pub(crate) fn new() -> Self {
        Self([const { AtomicU64::new(0) }; COUNT])
    }

    /// Counts one `c`.
    pub(crate) fn inc(&self, c: Counter) {
        self.add(c, 1);
    }

    /// Counts `n` more `c`.
    pub(crate) fn add(&self, c: Counter, n: u64) {
        self.0[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    fn get(&self, c: Counter) -> u64 {
        self.0[c as usize].load(Ordering::Relaxed)
    }

    /// What the Performance Management agent reports of the port.
    pub(crate) fn port_counts(&self) -> PortCounts {
        PortCounts {
            xmit_bytes: self.get(Counter::SentBytes),
            rcv_bytes: self.get(Counter::RcvdBytes),
            xmit_packets: self.get(Counter::SentPkts),
            rcv_packets: self.get(Counter::RcvdPkts),
            xmit_multicast: self.get(Counter::SentMcastPkts),
            rcv_multicast: self.get(Counter::RcvdMcastPkts),
            rcv_errors: self.get(Counter::DropBadIcrc) + self.get(Counter::DropBadHeader),
            xmit_discards: self.get(Counter::SendErr),
        }
    }

    /// The values, in the order of [`NAMES`].
    pub(crate) fn read(&self, values: &mut [u64]) {
        for (v, c) in values.iter_mut().zip(&self.0) {
            *v = c.load(Ordering::Relaxed);
        }
    }
}
