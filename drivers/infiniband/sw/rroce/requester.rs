// SPDX-License-Identifier: GPL-2.0

//! The requester: takes work requests from the send queue and turns them
//! into packets, as far as the send window lets it.
//!
//! A request is checked and its memory resolved when it is taken; a local
//! operation (a memory window bind, a local invalidation) is carried out
//! then, in posting order. Each packet is built from the request and what
//! the window says comes next, so sending again after a loss is sending
//! from an earlier packet, the same way.

use crate::completer::{complete_done, error_wc, fail, flush_before};
use crate::device_services::Services;
use crate::kernel_ext::few::Few;
use crate::kernel_ext::{
    jiffies, now_ns,
    rdma::{Access, QpState, QpType, Qpn, Rkey},
};
use crate::limits::MAX_MSG_SIZE;
use crate::local_mem::Memory;
use crate::mr::{self, MrError};
use crate::mw;
use crate::proto::{
    cqe::{WcOpcode, WcStatus},
    headers::{AtomicEth, Deth, Feth, Ieth, ImmDt, Reth},
    opcode::{Ext, Opcode},
    packet::{ExtHeaders, Headers},
    psn::Psn,
    window::{Kind, Next, Track},
    wqe::{Operands, UdDest, WrOpcode, SEND_FENCE, SEND_SOLICITED},
};
use crate::qp_core::{QpCore, QpInner};
use crate::send_queue::{kind, Entry, Fetched};
use crate::work::{SendData, SendWqe};
use kernel::prelude::*;

/// A failed request: the completion status it ends with.
fn mr_status(e: MrError) -> WcStatus {
    match e {
        MrError::Key | MrError::Access => WcStatus::LocProtErr,
        MrError::Range => WcStatus::LocLenErr,
        // Resolving a request touches no page: never busy.
        MrError::Busy => WcStatus::LocProtErr,
    }
}

/// Whether a QP of `qp_type` carries `op`.
fn supported(qp_type: QpType, op: WrOpcode) -> bool {
    match qp_type {
        QpType::Rc => true,
        QpType::Uc => matches!(
            op,
            WrOpcode::Send
                | WrOpcode::SendImm
                | WrOpcode::Write
                | WrOpcode::WriteImm
                | WrOpcode::LocalInv
                | WrOpcode::BindMw
        ),
        QpType::Ud | QpType::Gsi => matches!(op, WrOpcode::Send | WrOpcode::SendImm),
        QpType::Other(_) => false,
    }
}

/// Checks a request and resolves its memory and destination, and makes
/// its entry in `slot`; it starts at `psn`. The request is moved into the
/// slot first and checked there: it is large, and each move a copy.
fn take(
    dev: &impl Services,
    qp: &QpCore,
    psn: Psn,
    wqe: SendWqe,
    mtu: u32,
    qkey: u32,
    slot: &mut Option<Entry>,
) -> Result<(), (u64, WcOpcode, WcStatus)> {
    let e = slot.insert(Entry {
        track: Track::local(psn),
        wqe,
        local: Memory::empty(),
    });
    let made = make_entry(dev, qp, psn, e, mtu, qkey);
    if made.is_err() {
        *slot = None;
    }
    made
}

/// Checks the request of `e` and resolves its memory and destination, as
/// [`take`] does.
fn make_entry(
    dev: &impl Services,
    qp: &QpCore,
    psn: Psn,
    e: &mut Entry,
    mtu: u32,
    qkey: u32,
) -> Result<(), (u64, WcOpcode, WcStatus)> {
    let wqe = &mut e.wqe;
    let fail = |status| (wqe.wr_id, WcOpcode::from(wqe.opcode), status);
    if !supported(qp.qp_type, wqe.opcode) {
        return Err(fail(WcStatus::LocQpOpErr));
    }
    if wqe.opcode.is_local() {
        // Done now, in posting order after the requests before it were
        // sent; it completes once they have.
        return local_op(dev, qp, wqe).map_err(fail);
    }
    let atomic = matches!(wqe.opcode, WrOpcode::CmpSwap | WrOpcode::FetchAdd);
    let access = if wqe.opcode == WrOpcode::Read || atomic {
        Access::LOCAL_WRITE
    } else {
        Access::from_bits(0)
    };
    // Left empty in place: an empty vector would be freed with a call.
    let data = core::mem::replace(&mut wqe.data, SendData::Sges(Few::new()));
    let local =
        Memory::for_send(dev.keys().mrs, data, qp.pd, access).map_err(|e| fail(mr_status(e)))?;
    let len = local.len();
    // A FLUSH's length is the remote range's: it carries no data.
    let data_len = if wqe.opcode == WrOpcode::Flush {
        0
    } else {
        wqe.length as usize
    };
    let eight_bytes = atomic || wqe.opcode == WrOpcode::AtomicWrite;
    if len != data_len || wqe.length > MAX_MSG_SIZE || (eight_bytes && len != 8) {
        return Err(fail(WcStatus::LocLenErr));
    }
    if let Operands::Flush(f) = wqe.operands {
        if Feth::new(f.placement, f.selectivity).is_none() {
            return Err(fail(WcStatus::LocQpOpErr));
        }
    }
    if qp.qp_type.is_ud() {
        // A datagram is one packet.
        if wqe.length > mtu {
            return Err(fail(WcStatus::LocLenErr));
        }
        let Operands::Ud {
            remote_qpn,
            remote_qkey,
            dest,
        } = &mut wqe.operands
        else {
            return Err(fail(WcStatus::LocQpOpErr));
        };
        // Its destination, resolved once: a kernel consumer's request
        // carries its AH's address vector, a process's names its AH.
        if let UdDest::Ah(num) = *dest {
            let ah = dev.ahs().get(num).filter(|ah| ah.pd == qp.pd);
            *dest = UdDest::Av(ah.ok_or(fail(WcStatus::LocQpOpErr))?.av);
        }
        *remote_qpn &= Psn::MASK;
        // A Q_Key with the high bit set means the QP's own (IBA 10.2.5).
        if *remote_qkey & 0x8000_0000 != 0 {
            *remote_qkey = qkey;
        }
    } else if matches!(wqe.operands, Operands::Ud { .. }) {
        // Connected: the QP's own destination.
        wqe.operands = Operands::None;
    }
    e.track = Track::new(kind(wqe.opcode), wqe.length, mtu, psn);
    // The placeholder owns nothing: forgotten, it costs no drop.
    core::mem::forget(core::mem::replace(&mut e.local, local));
    Ok(())
}

/// Carries out a memory window bind or a local invalidation.
fn local_op(dev: &impl Services, qp: &QpCore, wqe: &SendWqe) -> Result<(), WcStatus> {
    match &wqe.operands {
        Operands::Bind(bind) => {
            mw::bind(dev.keys(), qp.for_mw(), bind).map_err(|_| WcStatus::MwBindErr)
        }
        Operands::Reg(reg) => {
            mr::fast_register(dev.keys().mrs, qp.pd, reg).map_err(|_| WcStatus::LocQpOpErr)
        }
        // Type 2 windows and fast-registration MRs: user MRs cannot be.
        _ => mw::invalidate(dev.keys(), qp.for_mw(), Rkey::new(wqe.ex), false)
            .map_err(|_| WcStatus::LocQpOpErr),
    }
}

/// The opcode of packet `n` of a SEND or WRITE of `npsn` packets.
fn data_opcode(qp_type: QpType, op: WrOpcode, n: u32, npsn: u32) -> Option<Opcode> {
    use Opcode::*;
    let (first, last) = (n == 0, n + 1 == npsn);
    let rc = qp_type == QpType::Rc;
    let pick = |rc_op, uc_op| Some(if rc { rc_op } else { uc_op });
    match (op, first, last) {
        (WrOpcode::Send, true, true) => pick(RcSendOnly, UcSendOnly),
        (WrOpcode::SendImm, true, true) => pick(RcSendOnlyImm, UcSendOnlyImm),
        (WrOpcode::SendInv, true, true) if rc => Some(RcSendOnlyInv),
        (WrOpcode::Send | WrOpcode::SendImm | WrOpcode::SendInv, true, false) => {
            pick(RcSendFirst, UcSendFirst)
        }
        (WrOpcode::Send | WrOpcode::SendImm | WrOpcode::SendInv, false, false) => {
            pick(RcSendMiddle, UcSendMiddle)
        }
        (WrOpcode::Send, false, true) => pick(RcSendLast, UcSendLast),
        (WrOpcode::SendImm, false, true) => pick(RcSendLastImm, UcSendLastImm),
        (WrOpcode::SendInv, false, true) if rc => Some(RcSendLastInv),
        (WrOpcode::Write, true, true) => pick(RcWriteOnly, UcWriteOnly),
        (WrOpcode::WriteImm, true, true) => pick(RcWriteOnlyImm, UcWriteOnlyImm),
        (WrOpcode::Write | WrOpcode::WriteImm, true, false) => pick(RcWriteFirst, UcWriteFirst),
        (WrOpcode::Write | WrOpcode::WriteImm, false, false) => pick(RcWriteMiddle, UcWriteMiddle),
        (WrOpcode::Write, false, true) => pick(RcWriteLast, UcWriteLast),
        (WrOpcode::WriteImm, false, true) => pick(RcWriteLastImm, UcWriteLastImm),
        _ => None,
    }
}

/// A packet to send: its headers but the BTH, and which of the request's
/// bytes it carries.
struct Planned {
    opcode: Opcode,
    ext: ExtHeaders,
    at: usize,
    len: usize,
}

/// The packet of `e` that starts at packet `n` (for a read, asking for
/// `responses` response packets), on a QP whose packets come from `src_qpn`.
fn plan(
    e: &Entry,
    qp_type: QpType,
    src_qpn: Qpn,
    n: u32,
    responses: u32,
    mtu: u32,
) -> Option<Planned> {
    let w = &e.wqe;
    let mut ext = ExtHeaders::default();
    let (opcode, at, len) = match w.opcode {
        WrOpcode::Read => {
            let from = n * mtu;
            ext.set_reth(Reth {
                va: w.remote_addr.wrapping_add(from.into()),
                rkey: w.rkey,
                dma_len: (w.length - from).min(responses * mtu),
            });
            (Opcode::RcReadRequest, 0, 0)
        }
        WrOpcode::CmpSwap | WrOpcode::FetchAdd => {
            let cmp = w.opcode == WrOpcode::CmpSwap;
            let (compare_add, swap) = match w.operands {
                Operands::Atomic { compare_add, swap } => (compare_add, swap),
                _ => (0, 0),
            };
            ext.set_atomic(AtomicEth {
                va: w.remote_addr,
                rkey: w.rkey,
                swap_add: if cmp { swap } else { compare_add },
                compare: if cmp { compare_add } else { 0 },
            });
            let opcode = if cmp {
                Opcode::RcCompareSwap
            } else {
                Opcode::RcFetchAdd
            };
            (opcode, 0, 0)
        }
        WrOpcode::Flush => {
            // `take` checked that it fits.
            if let Operands::Flush(f) = w.operands {
                if let Some(feth) = Feth::new(f.placement, f.selectivity) {
                    ext.set_feth(feth);
                }
            }
            ext.set_reth(Reth {
                va: w.remote_addr,
                rkey: w.rkey,
                dma_len: w.length,
            });
            (Opcode::RcFlush, 0, 0)
        }
        WrOpcode::AtomicWrite => {
            ext.set_reth(Reth {
                va: w.remote_addr,
                rkey: w.rkey,
                dma_len: w.length,
            });
            (Opcode::RcAtomicWrite, 0, w.length as usize)
        }
        _ => {
            let opcode = if qp_type.is_ud() {
                // `take` resolved the Q_Key to send.
                let qkey = match w.operands {
                    Operands::Ud { remote_qkey, .. } => remote_qkey,
                    _ => 0,
                };
                ext.set_deth(Deth {
                    qkey,
                    src_qpn: src_qpn.get(),
                });
                if w.opcode == WrOpcode::SendImm {
                    Opcode::UdSendOnlyImm
                } else {
                    Opcode::UdSendOnly
                }
            } else {
                data_opcode(qp_type, w.opcode, n, e.track.npsn())?
            };
            let at = (n * mtu) as usize;
            let len = (w.length as usize - at).min(mtu as usize);
            if n == 0 && matches!(w.opcode, WrOpcode::Write | WrOpcode::WriteImm) {
                ext.set_reth(Reth {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    dma_len: w.length,
                });
            }
            if opcode.has_imm() {
                ext.set_imm(ImmDt {
                    imm: u32::from_be(w.ex),
                });
            }
            if opcode.ext().contains(Ext::IETH) {
                ext.set_ieth(Ieth { rkey: w.ex });
            }
            (opcode, at, len)
        }
    };
    Some(Planned {
        opcode,
        ext,
        at,
        len,
    })
}

/// Sends the next request packet of the entry at `index`; false if it has
/// none to send.
fn send_packet(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    index: u32,
    mtu: u32,
    clock: Option<u64>,
) -> bool {
    let rc = qp.qp_type == QpType::Rc;
    let window = &mut inner.send.window;
    let Some(next) = window.next_packet(index) else {
        return false;
    };
    let Some(e) = window.get(index) else {
        return false;
    };
    let Some(p) = plan(e, qp.qp_type, qp.qpn, next.n, next.responses, mtu) else {
        return false;
    };
    let (av, dest) = match e.wqe.operands {
        Operands::Ud {
            remote_qpn,
            dest: UdDest::Av(av),
            ..
        } => (av, Qpn::new(remote_qpn)),
        _ => (inner.av, inner.attr.dest_qpn),
    };
    let kind = e.track.kind();
    let ends = p.opcode.ends_message() || kind != Kind::Data;
    let solicited = ends && e.wqe.flags & SEND_SOLICITED != 0;
    let awaited = kind.awaits_answer(ends, qp.signals(&e.wqe));
    let mut bth = qp.bth(dest, p.opcode, next.psn);
    bth.solicited = solicited;
    bth.ack_req = window.ack_req(rc, awaited, next.psn, jiffies());
    let headers = Headers { bth, ext: p.ext };
    let mut gathered = Ok(());
    if let Some(e) = window.get(index) {
        let local = &e.local;
        qp.send(
            dev,
            inner.counter_set.as_deref(),
            &av,
            headers,
            p.len,
            |buf| {
                gathered = local.gather(p.at, p.len, buf);
                gathered.map_err(|_| EFAULT)
            },
        );
    }
    match gathered {
        // Busy on-demand memory: the packet goes as if lost on the way,
        // and is sent again as such a packet would be.
        Ok(()) | Err(MrError::Busy) => {}
        // Resolved when taken, so only on-demand memory can fail here: the
        // process unmapped it since.
        Err(_) => {
            fail(qp, inner, index, WcStatus::LocProtErr);
            return false;
        }
    }
    let window = &mut inner.send.window;
    window.sent(index, next, rc, jiffies());
    if clock.is_some() {
        inner.send.rate.sent(p.len as u64);
    }
    true
}

/// The most packets a UC or UD QP sends in one run of its requester. No
/// window holds them back, and one request may be 2^31 bytes: the rest goes
/// on from the device's kick work, a burst a run, so that a doorbell
/// neither keeps its CPU nor piles up packets for this host to receive.
const UNRELIABLE_BURST: u32 = 1024;

/// Sends what the send queue holds, as far as the window allows.
pub(crate) fn run(dev: &impl Services, qp: &QpCore, inner: &mut QpInner) {
    // A process that goes on posting to a UC or UD QP while its doorbell
    // runs must not keep the doorbell, and the QP's lock, for ever. Every
    // post rings again.
    let mut takes = qp.takes_per_run();
    let mut packets = if qp.qp_type == QpType::Rc {
        u32::MAX
    } else {
        UNRELIABLE_BURST
    };
    inner.send.cut = false;
    loop {
        let window = &inner.send.window;
        let before = (window.head(), window.next_slot());
        send_some(dev, qp, inner, &mut takes, &mut packets);
        // On UC the requests before a fenced one complete as they are sent,
        // which lifts the fence at once: go on while that makes progress.
        let send = &inner.send;
        let (head, next) = (send.window.head(), send.window.next_slot());
        let lifted = send
            .pending
            .as_ref()
            .is_some_and(|w| !fenced(inner, w, next));
        if !lifted || (head, next) == before {
            break;
        }
    }
    if packets == 0 {
        inner.send.cut = true;
        let _ = qp.kick(dev, false);
    }
}

/// Sends until the window, the queue, a fence or the number of requests
/// (`takes`) or packets (`packets`) it may still send stops it; completes
/// what is done.
fn send_some(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    takes: &mut u32,
    packets: &mut u32,
) {
    let rc = qp.qp_type == QpType::Rc;
    loop {
        match send_burst(dev, qp, inner, takes, packets) {
            Burst::Failed => return,
            Burst::AwaitsAck if rc && inner.send.window.ask_for_ack(jiffies()) => {}
            Burst::AwaitsAck | Burst::Stopped => break,
        }
    }
    complete_done(qp, inner);
}

/// How [`send_burst`] ended.
enum Burst {
    Stopped,
    /// A LOCAL_INV waiting for the requests before it, or a signalled
    /// local operation completing after them, waits for an ACK that an
    /// unsignalled request may not have asked for, and has no packet of
    /// its own to ask with.
    AwaitsAck,
    /// A request failed when taken: the QP is in the error state.
    Failed,
}

/// Sends until the window, the queue, a fence, `takes` or `packets` stops
/// it.
fn send_burst(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    takes: &mut u32,
    packets: &mut u32,
) -> Burst {
    let mtu = qp.mtu(inner);
    let rc = qp.qp_type == QpType::Rc;
    let max_rd_atomic = u32::from(inner.attr.max_rd_atomic.max(1));
    let qkey = inner.attr.qkey;
    // Once CNPs have cut its rate, the QP is paced: the burst goes at one
    // time, and the requester waits for the timer when the rate allows no
    // more. Unpaced, it reads no clock.
    let paced = dev.congestion_control() && inner.send.rate.current().is_some();
    let clock = paced.then(now_ns);
    let mut awaits_ack = false;
    while inner.attr.state == QpState::Rts && !inner.send.window.rnr_waiting() {
        match inner.send.window.next_to_send(rc, max_rd_atomic) {
            Next::Wait => break,
            Next::Send(index) => {
                if *packets == 0 {
                    break;
                }
                if let Some(wait) = clock.and_then(|now| inner.send.rate.wait_ns(now)) {
                    dev.arm_tick(wait.div_ceil(1000).min(u32::MAX.into()) as u32);
                    break;
                }
                if !send_packet(dev, qp, inner, index, mtu, clock) {
                    break;
                }
                *packets -= 1;
            }
            Next::Take => {
                let Some(left) = takes.checked_sub(1) else {
                    break;
                };
                *takes = left;
                let index = inner.send.window.next_slot();
                let fetched = match inner.send.pending.take() {
                    Some(wqe) => Fetched::Wqe(wqe),
                    None => qp.fetch(inner, index),
                };
                let psn = inner.send.window.next_psn();
                let taken = match fetched {
                    Fetched::Empty => break,
                    Fetched::Bad(wr_id) => Err((wr_id, WcOpcode::Send, WcStatus::LocQpOpErr)),
                    Fetched::Wqe(wqe) if fenced(inner, &wqe, index) => {
                        awaits_ack |= wqe.opcode == WrOpcode::LocalInv;
                        inner.send.pending = Some(wqe);
                        break;
                    }
                    Fetched::Wqe(wqe) => {
                        let local_signalled = wqe.opcode.is_local() && qp.signals(&wqe);
                        let at_peer = wqe.opcode.completes_at_peer();
                        let window = &mut inner.send.window;
                        window
                            .admit_with(|slot| take(dev, qp, psn, wqe, mtu, qkey, slot))
                            .map(|()| (local_signalled, at_peer))
                    }
                };
                match taken {
                    Ok((local_signalled, at_peer)) => {
                        awaits_ack |= local_signalled;
                        inner.send.took_for_receiver |= at_peer;
                    }
                    Err((wr_id, opcode, status)) => {
                        complete_done(qp, inner);
                        flush_before(qp, inner, index);
                        let wc = error_wc(qp, wr_id, opcode, status);
                        qp.complete_send(inner, &wc, false);
                        inner.send.window.skip_failed(index);
                        qp.send_done(inner.send.window.head());
                        qp.enter_error(inner);
                        return Burst::Failed;
                    }
                }
            }
        }
    }
    if awaits_ack {
        Burst::AwaitsAck
    } else {
        Burst::Stopped
    }
}

/// Whether the request for slot `index` must wait: a LOCAL_INV until every
/// request before it has completed, and a fenced request until the reads
/// and atomics before it have (IBA 10.8.3.3), sent or not.
fn fenced(inner: &QpInner, wqe: &SendWqe, index: u32) -> bool {
    let window = &inner.send.window;
    (wqe.opcode == WrOpcode::LocalInv && window.head() != index)
        || (wqe.flags & SEND_FENCE != 0 && window.reads_pending())
}
