// SPDX-License-Identifier: GPL-2.0

//! rroce's tracepoints (`events/rroce/` in tracefs), defined in C
//! (`rroce_trace.h`, `trace.c`): safe calls for the driver. While none of
//! the events is on, each costs a load and a branch, inlined; the call into
//! C is made only when one is.

use crate::bindings;
use kernel::c_str;

/// Whether any of rroce's events is on.
#[inline]
fn on() -> bool {
    // SAFETY: An `int` that the events' (un)registration changes under the
    // tracepoint mutex; a read racing with it sees either value, and at
    // worst makes a call that traces nothing or misses one event.
    unsafe { core::ptr::read_volatile(core::ptr::addr_of!(bindings::rroce_tracing)) != 0 }
}

/// QP `qpn` sent a packet to `dest_qpn`: its BTH opcode and PSN, payload
/// length, and the AETH syndrome of an ACK.
#[inline]
pub(crate) fn send(qpn: u32, dest_qpn: u32, opcode: u8, psn: u32, len: u32, syndrome: Option<u8>) {
    if !on() {
        return;
    }
    // SAFETY: Copies plain values into the trace buffer.
    unsafe {
        bindings::rroce_trace_send(qpn, dest_qpn, opcode, psn, len, syndrome.unwrap_or(0xff))
    };
}

/// A packet for QP `dest_qpn` arrived, as [`send`], and waited
/// `waited_us()` microseconds in the device's backlog (asked only if traced).
#[inline]
pub(crate) fn recv(
    dest_qpn: u32,
    opcode: u8,
    psn: u32,
    len: u32,
    syndrome: Option<u8>,
    waited_us: impl FnOnce() -> u32,
) {
    if !on() {
        return;
    }
    let (syndrome, waited_us) = (syndrome.unwrap_or(0xff), waited_us());
    // SAFETY: As in `send`.
    unsafe { bindings::rroce_trace_recv(dest_qpn, opcode, psn, len, syndrome, waited_us) };
}

/// Why a requester sends again.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resend {
    /// The peer was silent for the QP's timeout.
    Timeout,
    /// The peer was silent for a while: one request goes again to see.
    Probe,
    /// The peer asked for a PSN again (a sequence NAK).
    SeqNak,
    /// The RNR wait the peer asked for is over.
    Rnr,
}

/// The requester of QP `qpn` sends again from `psn`, for `reason`.
#[inline]
pub(crate) fn retransmit(qpn: u32, psn: u32, reason: Resend) {
    if !on() {
        return;
    }
    let reason = match reason {
        Resend::Timeout => c_str!("timeout"),
        Resend::Probe => c_str!("probe"),
        Resend::SeqNak => c_str!("seq_nak"),
        Resend::Rnr => c_str!("rnr"),
    };
    // SAFETY: `reason` is a NUL-terminated string, copied out during the call.
    unsafe { bindings::rroce_trace_retransmit(qpn, psn, reason.as_char_ptr()) };
}

/// QP `qpn` waits as an RNR NAK for `psn` with `timer` asked.
#[inline]
pub(crate) fn rnr_wait(qpn: u32, psn: u32, timer: u8) {
    if !on() {
        return;
    }
    // SAFETY: As in `send`.
    unsafe { bindings::rroce_trace_rnr_wait(qpn, psn, timer) };
}

/// QP `qpn` moved from state `from` to `to` (`enum ib_qp_state`).
#[inline]
pub(crate) fn qp_state(qpn: u32, from: u8, to: u8) {
    if !on() {
        return;
    }
    // SAFETY: As in `send`.
    unsafe { bindings::rroce_trace_qp_state(qpn, from, to) };
}

/// QP `qpn` completed `wr_id` with error `status` (`enum ib_wc_status`).
#[inline]
pub(crate) fn wc_error(qpn: u32, wr_id: u64, status: u8, opcode: u8) {
    if !on() {
        return;
    }
    // SAFETY: As in `send`.
    unsafe { bindings::rroce_trace_wc_error(qpn, wr_id, status, opcode) };
}
