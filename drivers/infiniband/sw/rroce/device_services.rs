// SPDX-License-Identifier: GPL-2.0

//! What a QP needs of the device it lives on: its counters, the keys of its
//! memory, its AHs, its link, and its work and timer.
//!
//! The QP code reaches its device only through this trait, which the device
//! implements, so that the device can hold its QPs without the QPs knowing
//! the device: the files that run QPs sit below `device.rs`, never beside it.

use crate::ah::AhCore;
use crate::counters::{Counter, Counters};
use crate::kernel_ext::rdma::Qpn;
use crate::kernel_ext::{fill::Fill, net::NetDevice, rdma::Av};
use crate::mw::Keys;
use crate::pool::Pool;
use crate::proto::{dcqcn::Params, packet::Headers};
use crate::xmit::Flow;
use kernel::{prelude::*, types::ARef};

/// A device's services to its QPs.
pub(crate) trait Services {
    /// Counts `n` more `counter` of a QP bound to the counter set `set`,
    /// or of one that is not.
    fn count(&self, set: Option<&Counters>, counter: Counter, n: u64);

    /// The MRs and memory windows, where keys are looked up.
    fn keys(&self) -> Keys<'_>;

    /// The live AHs, by number, which UD requests name.
    fn ahs(&self) -> &Pool<AhCore>;

    /// The netdev the device sends through, while it has one.
    fn netdev(&self) -> Option<ARef<NetDevice>>;

    /// Sends one packet of `flow` to `av`, with `headers` and a payload of
    /// `payload_len` bytes, which `fill` appends, and counts it as sent or
    /// as a send error, in `set` as [`Services::count`] does.
    fn transmit(
        &self,
        set: Option<&Counters>,
        av: &Av,
        flow: &Flow,
        headers: Headers,
        payload_len: usize,
        fill: impl FnOnce(&mut Fill<'_>) -> Result,
    ) -> Result;

    /// Sends a CNP from `flow` to QP `dest_qpn` at `av`, and counts it, in
    /// `set` as [`Services::count`] does.
    fn transmit_cnp(&self, set: Option<&Counters>, av: &Av, flow: &Flow, dest_qpn: Qpn);

    /// Whether the device does congestion control: its packets leave
    /// ECN-capable, CNPs slow its QPs down, and its QPs are paced.
    fn congestion_control(&self) -> bool;

    /// How a QP that a CNP slows down recovers.
    fn cc_params(&self) -> Params;

    /// Has the device's work run QP `qpn` soon: a kernel consumer posted to
    /// it, perhaps where the QP's lock cannot be taken, or its answers
    /// wait (`urgent`: the work then runs on the high-priority workers, as
    /// the receive work does). Callable in any context; an error if the QP
    /// cannot be listed, and then the device timer runs it.
    fn kick(&self, qpn: Qpn, urgent: bool) -> Result;

    /// Takes up to `want` of the answer packets the burst being received
    /// may still send itself; returns how many it got. Only the receive
    /// path may call it.
    fn take_inline_answers(&self, want: u32) -> u32;

    /// Has the device timer run within `usecs`.
    fn arm_tick(&self, usecs: u32);
}
