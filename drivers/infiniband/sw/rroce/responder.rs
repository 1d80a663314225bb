// SPDX-License-Identifier: GPL-2.0

//! The responder: carries out the peer's requests in PSN order (receives,
//! writes, reads, atomics, flushes and atomic writes) against the receive
//! queue and the memory regions their keys name, and acknowledges them.
//!
//! Nothing in a request is trusted: keys, addresses and lengths are checked
//! against the MR before a byte is copied, and a request that fails the
//! checks is answered with a NAK, never carried out in part.

use crate::answer_ring::{ack, read_npsn, Answer, ReadResponse};
use crate::answers;
use crate::counters::Counter;
use crate::device_services::Services;
use crate::kernel_ext::{
    rdma::{Access, AtomicOp, QpState, QpType, Rkey},
    write_barrier,
};
use crate::limits::MAX_MSG_SIZE;
use crate::local_mem::Memory;
use crate::mr::MrError;
use crate::mw::{self, RemoteTarget};
use crate::proto::{
    cqe::{WcOpcode, WcStatus, WC_GRH, WC_WITH_IMM, WC_WITH_INVALIDATE},
    headers::{Feth, NakCode, Reth, Syndrome},
    ip,
    opcode::{Opcode, Operation, Transport},
    packet::Packet,
    psn::Psn,
    wqe::{slot_wr_id, ATOMIC_WRITE_LEN},
};
use crate::qp_core::{QpCore, QpInner};
use crate::recv_queue::{Recv, Write};
use crate::srq::Taken;
use crate::work::{RecvWqe, Wc};
use kernel::prelude::*;

/// The GRH that UD receives start with: 40 bytes, the IPv4 header in its
/// last 20 as rxe places it.
const GRH_LEN: usize = 40;

/// Why a request was refused.
enum Refusal {
    Nak(NakCode),
    /// No receive request posted, or on-demand memory busy: RNR NAK.
    NotReady,
    /// A bad local resource (receive request): the QP fails.
    Local(WcStatus),
}

impl From<MrError> for Refusal {
    fn from(e: MrError) -> Self {
        match e {
            MrError::Key | MrError::Access => Self::Nak(NakCode::RemoteAccessError),
            MrError::Range => Self::Nak(NakCode::RemoteAccessError),
            // As hardware does while it resolves a page fault: the
            // requester sends the request again after the RNR timer.
            MrError::Busy => Self::NotReady,
        }
    }
}

/// Answers the request at `psn` with an ACK or NAK.
fn send_ack(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, psn: Psn, syndrome: Syndrome) {
    let ack = Answer::aeth(Opcode::RcAck, psn, syndrome, inner.recv.msn);
    answers::answer(dev, qp, inner, ack);
}

/// Handles a request packet for the QP.
pub(crate) fn receive(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    ip: &[u8],
) {
    if !matches!(inner.attr.state, QpState::Rtr | QpState::Rts) {
        inner.count(dev, Counter::DropBadState);
        return;
    }
    let opcode = pkt.headers.bth.opcode;
    let transport_ok = matches!(
        (opcode.transport(), qp.qp_type),
        (Transport::Rc, QpType::Rc)
            | (Transport::Uc, QpType::Uc)
            | (Transport::Ud, QpType::Ud | QpType::Gsi)
    );
    if !transport_ok || pkt.payload.len() > qp.mtu(inner) as usize {
        inner.count(dev, Counter::DropBadHeader);
        return;
    }
    match qp.qp_type {
        QpType::Ud | QpType::Gsi => receive_ud(dev, qp, inner, pkt, ip),
        QpType::Uc => receive_uc(dev, qp, inner, pkt),
        _ => receive_rc(dev, qp, inner, pkt),
    }
}

fn receive_rc(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    if inner.recv.answers.busy() {
        // Its answer could not wait behind the others: as if lost.
        inner.count(dev, Counter::DropResponderBusy);
        return;
    }
    let bth = &pkt.headers.bth;
    let psn = bth.psn;
    let epsn = inner.recv.epsn;
    if psn.before(epsn) {
        inner.count(dev, Counter::DuplicateRequest);
        duplicate(dev, qp, inner, pkt);
        return;
    }
    if psn != epsn {
        inner.count(dev, Counter::OutOfSeqRequest);
        if inner.recv.nak_sent != Some(epsn) {
            inner.recv.nak_sent = Some(epsn);
            inner.count(dev, Counter::SeqNakSent);
            send_ack(
                dev,
                qp,
                inner,
                epsn,
                Syndrome::Nak(NakCode::PsnSequenceError),
            );
        }
        return;
    }
    match execute(dev, qp, inner, pkt) {
        Ok(()) => {}
        Err(Refusal::NotReady) => {
            inner.count(dev, Counter::RnrNakSent);
            let timer = inner.attr.min_rnr_timer;
            send_ack(dev, qp, inner, psn, Syndrome::RnrNak { timer });
        }
        Err(Refusal::Nak(code)) => {
            // The request is dropped whole; the requester's QP fails.
            inner.recv.write = None;
            send_nak(dev, qp, inner, psn, code);
        }
        Err(Refusal::Local(status)) => local_error(dev, qp, inner, psn, status),
    }
}

/// Refuses the request at `psn` with a NAK of `code`, counting those for
/// access errors.
fn send_nak(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, psn: Psn, code: NakCode) {
    if code == NakCode::RemoteAccessError {
        inner.count(dev, Counter::AccessNakSent);
    }
    send_ack(dev, qp, inner, psn, Syndrome::Nak(code));
}

/// A receive request cannot hold the data: it completes in error, the peer
/// is told, and the QP fails.
fn local_error(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, psn: Psn, status: WcStatus) {
    if let Some(recv) = inner.recv.filling.take() {
        qp.consume_recv(inner);
        let wc = recv_wc(qp, recv.wr_id, status, WcOpcode::Recv, 0);
        qp.complete_recv(inner, &wc, false);
    }
    if qp.qp_type == QpType::Rc {
        send_ack(dev, qp, inner, psn, Syndrome::Nak(NakCode::InvalidRequest));
    }
    qp.enter_error(inner);
}

fn receive_uc(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let psn = pkt.headers.bth.psn;
    let starts = pkt.headers.bth.opcode.starts_message();
    let resp = &mut inner.recv;
    if psn != resp.epsn {
        // A lost packet loses its message: keep the receive request for
        // the next one, and wait for a message to start.
        resp.uc_drop = true;
        if let Some(recv) = resp.filling.as_mut() {
            recv.len = 0;
        }
        resp.write = None;
    }
    resp.epsn = psn.next();
    if resp.uc_drop && !starts {
        return;
    }
    resp.uc_drop = false;
    if starts {
        if let Some(recv) = resp.filling.as_mut() {
            recv.len = 0;
        }
    }
    match execute(dev, qp, inner, pkt) {
        Ok(()) => {}
        Err(Refusal::Local(status)) => local_error(dev, qp, inner, psn, status),
        Err(_) => inner.recv.uc_drop = true,
    }
    // `execute` moved the expected PSN on for RC; UC sets its own above.
    inner.recv.epsn = psn.next();
}

/// Takes the next receive request, if the process posted one.
fn take_recv(dev: &impl Services, qp: &QpCore, inner: &mut QpInner) -> Result<(), Refusal> {
    if inner.recv.filling.is_some() {
        return Ok(());
    }
    let wqe = match (&qp.rq, &qp.srq) {
        (Some(rq), _) => {
            let head = inner.recv.head;
            if head == rq.producer() {
                return Err(Refusal::NotReady);
            }
            let buf = &mut inner.recv.scratch;
            rq.read(head, buf).map_err(|_| Refusal::NotReady)?;
            RecvWqe::from_slot(buf, qp.caps.max_recv_sge).ok_or_else(|| slot_wr_id(buf))
        }
        (None, Some(srq)) => match srq.take() {
            Taken::Empty => return Err(Refusal::NotReady),
            Taken::Bad(wr_id) => Err(wr_id),
            Taken::Wqe(wqe) => Ok(wqe),
        },
        (None, None) => match &qp.kernel {
            Some(k) => Ok(k.recv.take().ok_or(Refusal::NotReady)?),
            None => return Err(Refusal::NotReady),
        },
    };
    let wqe = match wqe {
        Ok(wqe) => wqe,
        Err(wr_id) => {
            // Complete the element that does not parse with its own id.
            inner.recv.filling = Some(Recv {
                wr_id,
                segs: Memory::empty(),
                len: 0,
            });
            return Err(Refusal::Local(WcStatus::LocQpOpErr));
        }
    };
    let segs = match Memory::for_recv(dev.keys().mrs, wqe.data, qp.pd) {
        Ok(segs) => segs,
        Err(_) => {
            // Complete it in error with its own id.
            inner.recv.filling = Some(Recv {
                wr_id: wqe.wr_id,
                segs: Memory::empty(),
                len: 0,
            });
            return Err(Refusal::Local(WcStatus::LocProtErr));
        }
    };
    inner.recv.filling = Some(Recv {
        wr_id: wqe.wr_id,
        segs,
        len: 0,
    });
    Ok(())
}

fn recv_wc(qp: &QpCore, wr_id: u64, status: WcStatus, opcode: WcOpcode, byte_len: u32) -> Wc {
    qp.wc(wr_id, status, opcode, byte_len)
}

/// The immediate data or invalidated rkey of a closing packet, as the
/// completion reports it.
fn recv_ex(pkt: &Packet<'_>) -> (u32, u32) {
    if let Some(imm) = pkt.headers.ext.imm() {
        (u32::from_ne_bytes(imm.imm.to_be_bytes()), WC_WITH_IMM)
    } else if let Some(ieth) = pkt.headers.ext.ieth() {
        (ieth.rkey, WC_WITH_INVALIDATE)
    } else {
        (0, 0)
    }
}

/// What a request carried out leaves to the PSN and ACK bookkeeping.
enum Done {
    /// A packet of a SEND or WRITE: the next PSN is expected, and an ACK
    /// is owed if it asked for one.
    Packet,
    /// A READ request, whose responses took `npsn` PSNs.
    Read { npsn: u32 },
    /// A compare-and-swap or fetch-and-add, which found `orig`.
    Atomic { orig: u64 },
    /// An ATOMIC WRITE or a FLUSH.
    Committed,
}

/// Carries out an in-sequence request, then moves the expected PSN on and
/// answers it. Each operation checks its request in its own order, which
/// decides the NAK a request with several faults draws; nothing of a
/// refused request is carried out.
fn execute(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
) -> Result<(), Refusal> {
    let bth = &pkt.headers.bth;
    let psn = bth.psn;
    let qp_access = Access::from_bits(inner.attr.access);
    let done = match bth.opcode.operation() {
        Operation::Send => send_packet(dev, qp, inner, pkt)?,
        Operation::Write => write_packet(dev, qp, inner, pkt, qp_access)?,
        Operation::ReadRequest => Done::Read {
            npsn: read(dev, qp, inner, pkt, qp_access)?,
        },
        Operation::CompareSwap | Operation::FetchAdd => atomic(dev, qp, pkt, qp_access)?,
        Operation::AtomicWrite => atomic_write(dev, qp, pkt, qp_access)?,
        Operation::Flush => {
            let (Some(feth), Some(reth)) = (pkt.headers.ext.feth(), pkt.headers.ext.reth()) else {
                return Err(Refusal::Nak(NakCode::InvalidRequest));
            };
            flush(dev, qp, qp_access, &feth, &reth)?;
            Done::Committed
        }
        _ => return Err(Refusal::Nak(NakCode::InvalidRequest)),
    };
    match done {
        Done::Packet => {
            inner.recv.advance(psn.next());
            if qp.qp_type == QpType::Rc && bth.ack_req {
                // It also answers the requests before it that owed one.
                inner.recv.ack_owed = Some(psn);
            }
        }
        Done::Read { npsn } => inner.recv.message_done(psn + npsn),
        Done::Atomic { orig } => {
            inner.recv.remember_atomic(psn, orig);
            inner.recv.message_done(psn.next());
            let answer = Answer::atomic(psn, orig, inner.recv.msn);
            answers::answer(dev, qp, inner, answer);
        }
        Done::Committed => committed(dev, qp, inner, psn),
    }
    Ok(())
}

/// A packet of a SEND: the first takes a receive request (RNR if there is
/// none), each is scattered into it, and the last completes it, after
/// invalidating the rkey a SEND with invalidate names.
fn send_packet(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
) -> Result<Done, Refusal> {
    let opcode = pkt.headers.bth.opcode;
    if opcode.starts_message() {
        take_recv(dev, qp, inner)?;
    }
    let Some(recv) = inner.recv.filling.as_mut() else {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    };
    // No message may pass MAX_MSG_SIZE, however large the receive, or
    // its completion's 32-bit byte count would be wrong: refused as one
    // too long for its receive.
    if recv.len + pkt.payload.len() > MAX_MSG_SIZE as usize {
        return Err(Refusal::Local(WcStatus::LocLenErr));
    }
    match recv.segs.scatter(recv.len, pkt.payload) {
        Ok(()) => {}
        // The receive stays taken, for this packet sent again.
        Err(MrError::Busy) => return Err(Refusal::NotReady),
        Err(_) => return Err(Refusal::Local(WcStatus::LocLenErr)),
    }
    recv.len += pkt.payload.len();
    if opcode.ends_message() {
        if let Some(ieth) = pkt.headers.ext.ieth() {
            // As the C rxe: the receive completes in error, and
            // the peer is told its request was invalid.
            mw::invalidate(dev.keys(), qp.for_mw(), Rkey::new(ieth.rkey), true)
                .map_err(|_| Refusal::Local(WcStatus::RemInvReqErr))?;
        }
        finish_recv(qp, inner, pkt, WcOpcode::Recv, None);
    }
    Ok(Done::Packet)
}

/// A packet of an RDMA WRITE. The first carries the RETH: the QP's
/// access, then the rkey and range, are checked; one with immediate data
/// takes a receive request before any byte lands. Every packet must fit
/// what the RETH announced, and the last end it exactly.
fn write_packet(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    qp_access: Access,
) -> Result<Done, Refusal> {
    let opcode = pkt.headers.bth.opcode;
    if opcode.starts_message() {
        let reth = pkt
            .headers
            .ext
            .reth()
            .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
        if !qp_access.contains(Access::REMOTE_WRITE) {
            return Err(Refusal::Nak(NakCode::RemoteAccessError));
        }
        let (mr, offset) = remote_target(dev, qp, &reth, Access::REMOTE_WRITE)?;
        inner.recv.write = Some(Write {
            mr,
            offset,
            remaining: reth.dma_len as usize,
            total: reth.dma_len,
        });
    }
    if opcode.has_imm() {
        // Check before any byte lands that there is a receive request
        // to report the immediate with.
        take_recv(dev, qp, inner)?;
    }
    let Some(w) = inner.recv.write.as_mut() else {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    };
    let len = pkt.payload.len();
    let last = opcode.ends_message();
    if len > w.remaining || (last && len != w.remaining) {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    }
    if let Some(mr) = &w.mr {
        mr.write(w.offset, pkt.payload)?;
    }
    w.offset += len;
    w.remaining -= len;
    if last {
        let total = w.total;
        inner.recv.write = None;
        if opcode.has_imm() {
            finish_recv(qp, inner, pkt, WcOpcode::RecvWriteImm, Some(total));
        } else {
            inner.recv.msn = inner.recv.msn.wrapping_add(1);
        }
    }
    Ok(Done::Packet)
}

/// A compare-and-swap or fetch-and-add: the QP's access, the AtomicETH,
/// the rkey and range, then the alignment.
fn atomic(
    dev: &impl Services,
    qp: &QpCore,
    pkt: &Packet<'_>,
    qp_access: Access,
) -> Result<Done, Refusal> {
    if !qp_access.contains(Access::REMOTE_ATOMIC) {
        return Err(Refusal::Nak(NakCode::RemoteAccessError));
    }
    let a = pkt
        .headers
        .ext
        .atomic()
        .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
    let (mr, offset) = atomic_target(dev, qp, Rkey::new(a.rkey), Access::REMOTE_ATOMIC, a.va)?;
    let op = if pkt.headers.bth.opcode.operation() == Operation::CompareSwap {
        AtomicOp::CompareSwap {
            compare: a.compare,
            swap: a.swap_add,
        }
    } else {
        AtomicOp::FetchAdd { add: a.swap_add }
    };
    let orig = mr.atomic(offset, op)?;
    Ok(Done::Atomic { orig })
}

/// An ATOMIC WRITE: the RETH and an 8-byte payload and length, the QP's
/// access, the rkey and range, then the alignment.
fn atomic_write(
    dev: &impl Services,
    qp: &QpCore,
    pkt: &Packet<'_>,
    qp_access: Access,
) -> Result<Done, Refusal> {
    let reth = pkt
        .headers
        .ext
        .reth()
        .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
    let value =
        <[u8; 8]>::try_from(pkt.payload).map_err(|_| Refusal::Nak(NakCode::InvalidRequest))?;
    if reth.dma_len != ATOMIC_WRITE_LEN {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    }
    if !qp_access.contains(Access::REMOTE_WRITE) {
        return Err(Refusal::Nak(NakCode::RemoteAccessError));
    }
    let (mr, offset) = atomic_target(dev, qp, Rkey::new(reth.rkey), Access::REMOTE_WRITE, reth.va)?;
    // The value's bytes as the requester's memory held them, as the
    // C rxe stores them.
    let value = u64::from_ne_bytes(value);
    mr.atomic(offset, AtomicOp::StoreRelease { value })?;
    Ok(Done::Committed)
}

/// The 8 bytes at `va` that `rkey` must grant `access` to: the rkey and
/// range first, then the alignment an atomic needs. Held as a WRITE's
/// memory is, so that the atomic checks again that the rkey still names
/// it: an invalidation and registration anew in between must not move it.
fn atomic_target(
    dev: &impl Services,
    qp: &QpCore,
    rkey: Rkey,
    access: Access,
    va: u64,
) -> Result<(RemoteTarget, usize), Refusal> {
    let target = mw::hold_remote(dev.keys(), qp.for_mw(), rkey, access, va, 8)?;
    if va % 8 != 0 {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    }
    Ok(target)
}

/// Makes the writes before a FLUSH visible, once the QP and the memory its
/// rkey names grant the placement it asks for.
///
/// A CPU's memory offers global visibility, which a write barrier gives.
/// Persistence would need persistent memory, which no rroce MR is: the
/// device does not advertise it, so no MR grants it, and a FLUSH asking for
/// it gets a remote access error, as it does from the C rxe on ordinary
/// memory.
fn flush(
    dev: &impl Services,
    qp: &QpCore,
    qp_access: Access,
    feth: &Feth,
    reth: &Reth,
) -> Result<(), Refusal> {
    let mut access = Access::from_bits(0);
    if feth.placement & Feth::GLOBAL != 0 {
        access = access.with(Access::FLUSH_GLOBAL);
    }
    if feth.placement & Feth::PERSISTENT != 0 {
        access = access.with(Access::FLUSH_PERSISTENT);
    }
    if !qp_access.contains(access) {
        return Err(Refusal::Nak(NakCode::RemoteAccessError));
    }
    let keys = dev.keys();
    let (va, rkey) = (reth.va, Rkey::new(reth.rkey));
    match feth.selectivity {
        // Unlike a zero-length READ or WRITE's, a FLUSH's key is checked
        // whatever its length, as the C rxe does.
        Feth::RANGE => {
            mw::lookup_remote(keys, qp.for_mw(), rkey, access, va, reth.dma_len.into())?;
        }
        // The whole region: the address does not matter. The lookup checks
        // the key and the rights before the range, so a range error means
        // they passed.
        Feth::MR => match mw::lookup_remote(keys, qp.for_mw(), rkey, access, va, 0) {
            Ok(_) | Err(MrError::Range) => {}
            Err(e) => return Err(e.into()),
        },
        _ => return Err(Refusal::Nak(NakCode::InvalidRequest)),
    }
    write_barrier();
    Ok(())
}

/// A FLUSH or ATOMIC WRITE at `psn` was carried out: it completes a
/// message, and its answer goes back.
fn committed(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, psn: Psn) {
    inner.recv.message_done(psn.next());
    send_commit_ack(dev, qp, inner, psn);
}

/// Answers a FLUSH or ATOMIC WRITE at `psn` as the C rxe does: with a read
/// response that holds only an ACK.
fn send_commit_ack(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, psn: Psn) {
    let answer = Answer::aeth(Opcode::RcReadResponseOnly, psn, ack(), inner.recv.msn);
    answers::answer(dev, qp, inner, answer);
}

/// Completes the receive request that a message filled.
fn finish_recv(
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    opcode: WcOpcode,
    write_len: Option<u32>,
) {
    let Some(recv) = inner.recv.filling.take() else {
        return;
    };
    qp.consume_recv(inner);
    inner.recv.msn = inner.recv.msn.wrapping_add(1);
    let (ex, flags) = recv_ex(pkt);
    let byte_len = write_len.unwrap_or(recv.len as u32);
    let wc = Wc {
        ex,
        flags,
        src_qp: inner.attr.dest_qpn.get(),
        ..recv_wc(qp, recv.wr_id, WcStatus::Success, opcode, byte_len)
    };
    qp.complete_recv(inner, &wc, pkt.headers.bth.solicited);
}

/// The memory a WRITE or READ request's RETH names, and the offset in it.
///
/// A zero-length request names none: the IBTA (C9-88) lets it carry any
/// address and R_Key, and rxe does not check them either; rsockets sends
/// such WRITEs with immediate data. None may be longer than a message can
/// be (2^31 bytes): its PSNs could pass half the PSN space.
fn remote_target(
    dev: &impl Services,
    qp: &QpCore,
    reth: &Reth,
    access: Access,
) -> Result<(Option<RemoteTarget>, usize), Refusal> {
    if reth.dma_len == 0 {
        return Ok((None, 0));
    }
    if reth.dma_len > MAX_MSG_SIZE {
        return Err(Refusal::Nak(NakCode::InvalidRequest));
    }
    let keys = dev.keys();
    let (mr, offset) = mw::hold_remote(
        keys,
        qp.for_mw(),
        Rkey::new(reth.rkey),
        access,
        reth.va,
        reth.dma_len.into(),
    )?;
    Ok((Some(mr), offset))
}

/// Answers a read request, new or repeated, with its response, which goes
/// out a burst at a time, after checking the QP's access (`qp_access`),
/// then the rkey and range; returns the PSNs it takes.
fn read(
    dev: &impl Services,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    qp_access: Access,
) -> Result<u32, Refusal> {
    if !qp_access.contains(Access::REMOTE_READ) {
        return Err(Refusal::Nak(NakCode::RemoteAccessError));
    }
    let reth = pkt
        .headers
        .ext
        .reth()
        .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
    let (mr, offset) = remote_target(dev, qp, &reth, Access::REMOTE_READ)?;
    // The response is read a packet at a time; on-demand memory that is
    // gone must be NAKed now, as the response cannot be.
    if let Some(mr) = &mr {
        mr.fault_in(offset, reth.dma_len as usize, false)?;
    }
    let mtu = qp.mtu(inner) as usize;
    // The AETH carries the MSN this read completes.
    let msn = inner.recv.msn.wrapping_add(1);
    let psn = pkt.headers.bth.psn;
    let response = ReadResponse::new(mr, offset, reth.dma_len as usize, psn, mtu, msn);
    let npsn = response.npsn;
    answers::answer(dev, qp, inner, Answer::Read(response));
    Ok(npsn)
}

/// A request seen before: its response was lost, so answer it again
/// without carrying out a SEND, WRITE or atomic twice.
fn duplicate(dev: &impl Services, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let psn = pkt.headers.bth.psn;
    match pkt.headers.bth.opcode.operation() {
        Operation::ReadRequest => {
            let len = pkt.headers.ext.reth().map_or(0, |r| r.dma_len as usize);
            let npsn = read_npsn(len, qp.mtu(inner) as usize);
            if inner.recv.answers.resend_read_from(psn, npsn) {
                inner.count(dev, Counter::DuplicateReadMerged);
                return;
            }
            // Reading again is harmless; the MR may have gone meanwhile. A
            // retried read may also ask for more than was asked before (the
            // rest of a read whose later request was lost): then the PSNs
            // past the expected one are taken as new.
            match read(dev, qp, inner, pkt, Access::from_bits(inner.attr.access)) {
                Ok(npsn) => {
                    let end = psn + npsn;
                    if end.after(inner.recv.epsn) {
                        inner.recv.advance(end);
                    }
                }
                Err(Refusal::Nak(code)) => send_nak(dev, qp, inner, psn, code),
                Err(_) => {}
            }
        }
        Operation::CompareSwap | Operation::FetchAdd => {
            // One too old to be remembered is dropped: the requester has
            // had its answer, or it would not have sent so many since. Nor
            // is one whose answer still waits answered twice: a requester
            // that keeps asking would fill the turns of a slow responder
            // with answers it already has coming.
            if inner.recv.answers.holds_atomic(psn) {
                return;
            }
            if let Some(orig) = inner.recv.atomic_result(psn) {
                let answer = Answer::atomic(psn, orig, inner.recv.msn);
                answers::answer(dev, qp, inner, answer);
            }
        }
        // Done when it first came (a refused one does not move the
        // expected PSN past it), and nothing to return: answer again.
        Operation::Flush | Operation::AtomicWrite => send_commit_ack(dev, qp, inner, psn),
        _ => {
            if pkt.headers.bth.ack_req {
                let last = inner.recv.epsn + Psn::MASK;
                send_ack(dev, qp, inner, last, ack());
            }
        }
    }
}

fn receive_ud(_dev: &impl Services, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>, ip: &[u8]) {
    let Some(deth) = pkt.headers.ext.deth() else {
        return;
    };
    if deth.qkey != inner.attr.qkey {
        return;
    }
    if take_recv(_dev, qp, inner).is_err() {
        return;
    }
    let Some(recv) = inner.recv.filling.as_mut() else {
        return;
    };
    // The GRH: the IPv6 header, or the IPv4 header in its last 20 bytes,
    // without options.
    let mut grh = [0u8; GRH_LEN];
    let v4 = ip.first().is_some_and(|b| b >> 4 == 4);
    let n = ip.len().min(if v4 { ip::IPV4_LEN } else { GRH_LEN });
    grh[GRH_LEN - n..].copy_from_slice(&ip[..n]);
    let ok = recv.segs.scatter(0, &grh).is_ok() && recv.segs.scatter(GRH_LEN, pkt.payload).is_ok();
    let status = if ok {
        WcStatus::Success
    } else {
        WcStatus::LocLenErr
    };
    let len = (GRH_LEN + pkt.payload.len()) as u32;
    let wr_id = recv.wr_id;
    inner.recv.filling = None;
    qp.consume_recv(inner);
    let (ex, flags) = recv_ex(pkt);
    let wc = Wc {
        ex,
        flags: flags | WC_GRH,
        src_qp: deth.src_qpn,
        ip_version: ip.first().map_or(0, |b| b >> 4),
        ..recv_wc(qp, wr_id, status, WcOpcode::Recv, if ok { len } else { 0 })
    };
    qp.complete_recv(inner, &wc, pkt.headers.bth.solicited);
}
