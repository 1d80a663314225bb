// SPDX-License-Identifier: GPL-2.0

//! The responder: carries out the peer's requests in PSN order (receives,
//! writes, reads, atomics) against the receive queue and the memory regions
//! their keys name, and acknowledges them.
//!
//! Nothing in a request is trusted: keys, addresses and lengths are checked
//! against the MR before a byte is copied, and a request that fails the
//! checks is answered with a NAK, never carried out in part.

use crate::counters::Counter;
use crate::device::RroceDevice;
use crate::kernel_ext::rdma::{Access, AtomicOp, Device, QpState, QpType, RecvWqe, Wc};
use crate::limits::MAX_RD_ATOMIC;
use crate::mr::{MrCore, MrError};
use crate::mw;
use crate::proto::{
    cqe::{WcOpcode, WcStatus, WC_GRH, WC_WITH_IMM, WC_WITH_INVALIDATE},
    headers::{Aeth, AtomicAckEth, NakCode, Reth, Syndrome, UNLIMITED_CREDITS},
    opcode::{Opcode, Operation, Transport},
    packet::{ExtHeaders, Headers, Packet},
    psn::Psn,
    wqe::slot_wr_id,
};
use crate::qp::{QpCore, QpInner};
use crate::seg::Memory;
use crate::srq::Taken;
use kernel::{prelude::*, sync::Arc};

/// The GRH that UD receives start with: 40 bytes, the IPv4 header in its
/// last 20 as rxe places it.
const GRH_LEN: usize = 40;
/// MSNs are 24 bits.
const MSN_MASK: u32 = 0x00ff_ffff;

/// A receive request being filled.
struct Recv {
    wr_id: u64,
    segs: Memory,
    /// Bytes placed so far.
    len: usize,
}

/// An RDMA WRITE being carried out.
struct Write {
    /// None for a zero-length WRITE, which names no memory.
    mr: Option<Arc<MrCore>>,
    offset: usize,
    remaining: usize,
    /// The length its RETH announced, for a WRITE with immediate.
    total: u32,
}

/// The responder's state.
pub(crate) struct Responder {
    /// The PSN expected next.
    epsn: Psn,
    /// Messages completed, for the AETH.
    msn: u32,
    /// The next receive queue slot: the consumer index.
    head: u32,
    recv: Option<Recv>,
    write: Option<Write>,
    /// A sequence NAK was sent for this PSN; do not repeat it.
    nak_sent: Option<Psn>,
    /// The last atomics' PSNs and results, as many as a requester may have
    /// outstanding, to answer a duplicate without doing it again.
    atomics: KVec<Option<(Psn, u64)>>,
    /// Where the next result goes.
    next_atomic: usize,
    /// UC: a packet was lost; drop the rest of the message.
    uc_drop: bool,
    /// A copy of a receive queue element.
    scratch: KVec<u8>,
}

/// Why a request was refused.
enum Refusal {
    Nak(NakCode),
    /// No receive request posted: RNR NAK.
    NotReady,
    /// A bad local resource (receive request): the QP fails.
    Local(WcStatus),
}

impl From<MrError> for Refusal {
    fn from(e: MrError) -> Self {
        match e {
            MrError::Key | MrError::Access => Self::Nak(NakCode::RemoteAccessError),
            MrError::Range => Self::Nak(NakCode::RemoteAccessError),
        }
    }
}

impl Responder {
    /// The responder of a QP whose receive ring has elements of
    /// `elem_size` bytes (0 without one).
    pub(crate) fn new(elem_size: usize) -> Result<Self> {
        Ok(Self {
            epsn: Psn::new(0),
            msn: 0,
            head: 0,
            recv: None,
            write: None,
            nak_sent: None,
            atomics: KVec::from_elem(None, MAX_RD_ATOMIC.into(), GFP_KERNEL)?,
            next_atomic: 0,
            uc_drop: false,
            scratch: KVec::from_elem(0u8, elem_size, GFP_KERNEL)?,
        })
    }

    /// Keeps an atomic's result for a duplicate of its request.
    fn remember_atomic(&mut self, psn: Psn, orig: u64) {
        if let Some(slot) = self.atomics.get_mut(self.next_atomic) {
            *slot = Some((psn, orig));
        }
        self.next_atomic = (self.next_atomic + 1) % self.atomics.len().max(1);
    }

    /// The result of the atomic at `psn`, the newest if several match.
    fn atomic_result(&self, psn: Psn) -> Option<u64> {
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
        self.uc_drop = false;
        self.write = None;
        // Results of a former connection's atomics answer nothing now.
        for slot in self.atomics.iter_mut() {
            *slot = None;
        }
        self.next_atomic = 0;
    }
}

/// Sends an ACK or NAK for `psn`.
fn send_ack(dev: &Device<RroceDevice>, qp: &QpCore, inner: &QpInner, psn: Psn, syndrome: Syndrome) {
    let ext = ExtHeaders {
        aeth: Some(Aeth {
            syndrome,
            msn: inner.resp.msn & MSN_MASK,
        }),
        ..Default::default()
    };
    let headers = Headers {
        bth: qp.bth(inner.attr.dest_qpn, Opcode::RcAck, psn),
        ext,
    };
    qp.send(dev, &inner.av, headers, 0, |_| Ok(()));
}

fn ack() -> Syndrome {
    Syndrome::Ack {
        credits: UNLIMITED_CREDITS,
    }
}

/// Handles a request packet for the QP.
pub(crate) fn receive(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    ip: &[u8],
) {
    if !matches!(inner.attr.state, QpState::Rtr | QpState::Rts) {
        dev.data().count(Counter::DropBadState);
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
        dev.data().count(Counter::DropBadHeader);
        return;
    }
    match qp.qp_type {
        QpType::Ud | QpType::Gsi => receive_ud(dev, qp, inner, pkt, ip),
        QpType::Uc => receive_uc(dev, qp, inner, pkt),
        _ => receive_rc(dev, qp, inner, pkt),
    }
}

fn receive_rc(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let bth = &pkt.headers.bth;
    let psn = bth.psn;
    let epsn = inner.resp.epsn;
    if psn.before(epsn) {
        dev.data().count(Counter::DuplicateRequest);
        duplicate(dev, qp, inner, pkt);
        return;
    }
    if psn != epsn {
        dev.data().count(Counter::OutOfSeqRequest);
        if inner.resp.nak_sent != Some(epsn) {
            inner.resp.nak_sent = Some(epsn);
            dev.data().count(Counter::SeqNakSent);
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
            dev.data().count(Counter::RnrNakSent);
            let timer = inner.attr.min_rnr_timer;
            send_ack(dev, qp, inner, psn, Syndrome::RnrNak { timer });
        }
        Err(Refusal::Nak(code)) => {
            // The request is dropped whole; the requester's QP fails.
            if code == NakCode::RemoteAccessError {
                dev.data().count(Counter::AccessNakSent);
            }
            inner.resp.write = None;
            send_ack(dev, qp, inner, psn, Syndrome::Nak(code));
        }
        Err(Refusal::Local(status)) => local_error(dev, qp, inner, psn, status),
    }
}

/// A receive request cannot hold the data: it completes in error, the peer
/// is told, and the QP fails.
fn local_error(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &mut QpInner,
    psn: Psn,
    status: WcStatus,
) {
    if let Some(recv) = inner.resp.recv.take() {
        consume_recv(qp, inner);
        let wc = recv_wc(qp, recv.wr_id, status, WcOpcode::Recv, 0);
        qp.complete_recv(inner, &wc, false);
    }
    if qp.qp_type == QpType::Rc {
        send_ack(dev, qp, inner, psn, Syndrome::Nak(NakCode::InvalidRequest));
    }
    qp.enter_error(inner);
}

fn receive_uc(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let psn = pkt.headers.bth.psn;
    let starts = pkt.headers.bth.opcode.starts_message();
    let resp = &mut inner.resp;
    if psn != resp.epsn {
        // A lost packet loses its message: keep the receive request for
        // the next one, and wait for a message to start.
        resp.uc_drop = true;
        if let Some(recv) = resp.recv.as_mut() {
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
        if let Some(recv) = resp.recv.as_mut() {
            recv.len = 0;
        }
    }
    match execute(dev, qp, inner, pkt) {
        Ok(()) => {}
        Err(Refusal::Local(status)) => local_error(dev, qp, inner, psn, status),
        Err(_) => inner.resp.uc_drop = true,
    }
    // `execute` moved the expected PSN on for RC; UC sets its own above.
    inner.resp.epsn = psn.next();
}

/// Takes the next receive request, if the process posted one.
fn take_recv(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner) -> Result<(), Refusal> {
    if inner.resp.recv.is_some() {
        return Ok(());
    }
    let wqe = match (&qp.rq, &qp.srq) {
        (Some(rq), _) => {
            let head = inner.resp.head;
            if head == rq.producer() {
                return Err(Refusal::NotReady);
            }
            let buf = &mut inner.resp.scratch;
            rq.read(head, buf).map_err(|_| Refusal::NotReady)?;
            RecvWqe::from_slot(buf, qp.caps.max_recv_sge).ok_or_else(|| slot_wr_id(buf))
        }
        (None, Some(srq)) => match srq.take() {
            Taken::Empty => return Err(Refusal::NotReady),
            Taken::Bad(wr_id) => Err(wr_id),
            Taken::Wqe(wqe) => Ok(wqe),
        },
        (None, None) => match &qp.kernel {
            Some(k) => Ok(k.recv.take(&mut inner.krecv).ok_or(Refusal::NotReady)?),
            None => return Err(Refusal::NotReady),
        },
    };
    let wqe = match wqe {
        Ok(wqe) => wqe,
        Err(wr_id) => {
            // Complete the element that does not parse with its own id.
            inner.resp.recv = Some(Recv {
                wr_id,
                segs: Memory::empty(),
                len: 0,
            });
            return Err(Refusal::Local(WcStatus::LocQpOpErr));
        }
    };
    let segs = match Memory::for_recv(dev.data().mrs(), wqe.data, qp.pd) {
        Ok(segs) => segs,
        Err(_) => {
            // Complete it in error with its own id.
            inner.resp.recv = Some(Recv {
                wr_id: wqe.wr_id,
                segs: Memory::empty(),
                len: 0,
            });
            return Err(Refusal::Local(WcStatus::LocProtErr));
        }
    };
    inner.resp.recv = Some(Recv {
        wr_id: wqe.wr_id,
        segs,
        len: 0,
    });
    Ok(())
}

/// Gives the receive queue slot back to the process (an SRQ's moved on
/// when the request was taken).
fn consume_recv(qp: &QpCore, inner: &mut QpInner) {
    if let Some(rq) = &qp.rq {
        let resp = &mut inner.resp;
        resp.head = rq.geometry().next(resp.head);
        rq.publish_consumer(resp.head);
    } else if let (Some(k), None) = (&qp.kernel, &qp.srq) {
        k.recv.completed();
    }
}

fn recv_wc(qp: &QpCore, wr_id: u64, status: WcStatus, opcode: WcOpcode, byte_len: u32) -> Wc {
    qp.wc(wr_id, status, opcode, byte_len)
}

/// The immediate data or invalidated rkey of a closing packet, as the
/// completion reports it.
fn recv_ex(pkt: &Packet<'_>) -> (u32, u32) {
    if let Some(imm) = pkt.headers.ext.imm {
        (u32::from_ne_bytes(imm.imm.to_be_bytes()), WC_WITH_IMM)
    } else if let Some(ieth) = pkt.headers.ext.ieth {
        (ieth.rkey, WC_WITH_INVALIDATE)
    } else {
        (0, 0)
    }
}

/// Carries out an in-sequence request.
fn execute(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
) -> Result<(), Refusal> {
    let bth = &pkt.headers.bth;
    let opcode = bth.opcode;
    let psn = bth.psn;
    let qp_access = Access::from_bits(inner.attr.access);
    match opcode.operation() {
        Operation::Send => {
            if opcode.starts_message() {
                take_recv(dev, qp, inner)?;
            }
            let Some(recv) = inner.resp.recv.as_mut() else {
                return Err(Refusal::Nak(NakCode::InvalidRequest));
            };
            if recv.segs.scatter(recv.len, pkt.payload).is_err() {
                return Err(Refusal::Local(WcStatus::LocLenErr));
            }
            recv.len += pkt.payload.len();
            if opcode.ends_message() {
                if let Some(ieth) = pkt.headers.ext.ieth {
                    // As the C rxe: the receive completes in error, and
                    // the peer is told its request was invalid.
                    mw::invalidate(dev.data().mws(), qp.for_mw(), ieth.rkey, true)
                        .map_err(|_| Refusal::Local(WcStatus::RemInvReqErr))?;
                }
                finish_recv(qp, inner, pkt, WcOpcode::Recv, None);
            }
        }
        Operation::Write => {
            if opcode.starts_message() {
                let reth = pkt
                    .headers
                    .ext
                    .reth
                    .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
                if !qp_access.contains(Access::REMOTE_WRITE) {
                    return Err(Refusal::Nak(NakCode::RemoteAccessError));
                }
                let (mr, offset) = remote_target(dev, qp, &reth, Access::REMOTE_WRITE)?;
                inner.resp.write = Some(Write {
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
            let Some(w) = inner.resp.write.as_mut() else {
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
                inner.resp.write = None;
                if opcode.has_imm() {
                    finish_recv(qp, inner, pkt, WcOpcode::RecvWriteImm, Some(total));
                } else {
                    inner.resp.msn = inner.resp.msn.wrapping_add(1);
                }
            }
        }
        Operation::ReadRequest => {
            if !qp_access.contains(Access::REMOTE_READ) {
                return Err(Refusal::Nak(NakCode::RemoteAccessError));
            }
            let npsn = read(dev, qp, inner, pkt)?;
            inner.resp.msn = inner.resp.msn.wrapping_add(1);
            inner.resp.epsn = psn + npsn;
            inner.resp.nak_sent = None;
            return Ok(());
        }
        Operation::CompareSwap | Operation::FetchAdd => {
            if !qp_access.contains(Access::REMOTE_ATOMIC) {
                return Err(Refusal::Nak(NakCode::RemoteAccessError));
            }
            let a = pkt
                .headers
                .ext
                .atomic
                .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
            let (mr, offset) = mw::lookup_remote(
                dev.data().keys(),
                qp.for_mw(),
                a.rkey,
                Access::REMOTE_ATOMIC,
                a.va,
                8,
            )?;
            if a.va % 8 != 0 {
                return Err(Refusal::Nak(NakCode::InvalidRequest));
            }
            let op = if opcode.operation() == Operation::CompareSwap {
                AtomicOp::CompareSwap {
                    compare: a.compare,
                    swap: a.swap_add,
                }
            } else {
                AtomicOp::FetchAdd { add: a.swap_add }
            };
            let orig = mr.atomic(offset, op)?;
            inner.resp.msn = inner.resp.msn.wrapping_add(1);
            inner.resp.remember_atomic(psn, orig);
            inner.resp.epsn = psn.next();
            inner.resp.nak_sent = None;
            send_atomic_ack(dev, qp, inner, psn, orig);
            return Ok(());
        }
        _ => return Err(Refusal::Nak(NakCode::InvalidRequest)),
    }
    inner.resp.epsn = psn.next();
    inner.resp.nak_sent = None;
    if qp.qp_type == QpType::Rc && bth.ack_req {
        send_ack(dev, qp, inner, psn, ack());
    }
    Ok(())
}

/// Completes the receive request that a message filled.
fn finish_recv(
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    opcode: WcOpcode,
    write_len: Option<u32>,
) {
    let Some(recv) = inner.resp.recv.take() else {
        return;
    };
    consume_recv(qp, inner);
    inner.resp.msn = inner.resp.msn.wrapping_add(1);
    let (ex, flags) = recv_ex(pkt);
    let byte_len = write_len.unwrap_or(recv.len as u32);
    let wc = Wc {
        ex,
        flags,
        src_qp: inner.attr.dest_qpn,
        ..recv_wc(qp, recv.wr_id, WcStatus::Success, opcode, byte_len)
    };
    qp.complete_recv(inner, &wc, pkt.headers.bth.solicited);
}

/// The memory a WRITE or READ request's RETH names, and the offset in it.
///
/// A zero-length request names none: the IBTA (C9-88) lets it carry any
/// address and R_Key, and rxe does not check them either; rsockets sends
/// such WRITEs with immediate data.
fn remote_target(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    reth: &Reth,
    access: Access,
) -> Result<(Option<Arc<MrCore>>, usize), MrError> {
    if reth.dma_len == 0 {
        return Ok((None, 0));
    }
    let keys = dev.data().keys();
    let (mr, offset) = mw::lookup_remote(
        keys,
        qp.for_mw(),
        reth.rkey,
        access,
        reth.va,
        reth.dma_len.into(),
    )?;
    Ok((Some(mr), offset))
}

/// Answers a read request with its response packets; returns how many.
fn read(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &QpInner,
    pkt: &Packet<'_>,
) -> Result<u32, Refusal> {
    let reth = pkt
        .headers
        .ext
        .reth
        .ok_or(Refusal::Nak(NakCode::InvalidRequest))?;
    let len = reth.dma_len as usize;
    let (mr, offset) = remote_target(dev, qp, &reth, Access::REMOTE_READ)?;
    let mtu = qp.mtu(inner) as usize;
    let npsn = len.div_ceil(mtu).max(1) as u32;
    let psn = pkt.headers.bth.psn;
    // The AETH carries the MSN this read completes.
    let msn = inner.resp.msn.wrapping_add(1) & MSN_MASK;
    for n in 0..npsn {
        let opcode = match (n == 0, n + 1 == npsn) {
            (true, true) => Opcode::RcReadResponseOnly,
            (true, false) => Opcode::RcReadResponseFirst,
            (false, false) => Opcode::RcReadResponseMiddle,
            (false, true) => Opcode::RcReadResponseLast,
        };
        let mut ext = ExtHeaders::default();
        if opcode != Opcode::RcReadResponseMiddle {
            ext.aeth = Some(Aeth {
                syndrome: ack(),
                msn,
            });
        }
        let at = n as usize * mtu;
        let chunk = (len - at).min(mtu);
        let headers = Headers {
            bth: qp.bth(inner.attr.dest_qpn, opcode, psn + n),
            ext,
        };
        let mr = &mr;
        qp.send(dev, &inner.av, headers, chunk, |buf| match mr {
            Some(mr) => mr.read(offset + at, buf).map_err(|_| EFAULT),
            None => Ok(()),
        });
    }
    Ok(npsn)
}

fn send_atomic_ack(dev: &Device<RroceDevice>, qp: &QpCore, inner: &QpInner, psn: Psn, orig: u64) {
    let ext = ExtHeaders {
        aeth: Some(Aeth {
            syndrome: ack(),
            msn: inner.resp.msn & MSN_MASK,
        }),
        atomic_ack: Some(AtomicAckEth { orig }),
        ..Default::default()
    };
    let headers = Headers {
        bth: qp.bth(inner.attr.dest_qpn, Opcode::RcAtomicAck, psn),
        ext,
    };
    qp.send(dev, &inner.av, headers, 0, |_| Ok(()));
}

/// A request seen before: its response was lost, so answer it again
/// without carrying out a SEND, WRITE or atomic twice.
fn duplicate(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let psn = pkt.headers.bth.psn;
    match pkt.headers.bth.opcode.operation() {
        Operation::ReadRequest => {
            // Reading again is harmless; the MR may have gone meanwhile. A
            // retried read may also ask for more than was asked before (the
            // rest of a read whose later request was lost): then the PSNs
            // past the expected one are taken as new.
            match read(dev, qp, inner, pkt) {
                Ok(npsn) => {
                    let end = psn + npsn;
                    if end.after(inner.resp.epsn) {
                        inner.resp.epsn = end;
                        inner.resp.nak_sent = None;
                    }
                }
                Err(Refusal::Nak(code)) => send_ack(dev, qp, inner, psn, Syndrome::Nak(code)),
                Err(_) => {}
            }
        }
        Operation::CompareSwap | Operation::FetchAdd => {
            // One too old to be remembered is dropped: the requester has
            // had its answer, or it would not have sent so many since.
            if let Some(orig) = inner.resp.atomic_result(psn) {
                send_atomic_ack(dev, qp, inner, psn, orig);
            }
        }
        _ => {
            if pkt.headers.bth.ack_req {
                let last = inner.resp.epsn + Psn::MASK;
                send_ack(dev, qp, inner, last, ack());
            }
        }
    }
}

fn receive_ud(
    _dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
    ip: &[u8],
) {
    let Some(deth) = pkt.headers.ext.deth else {
        return;
    };
    if deth.qkey != inner.attr.qkey {
        return;
    }
    if take_recv(_dev, qp, inner).is_err() {
        return;
    }
    let Some(recv) = inner.resp.recv.as_mut() else {
        return;
    };
    // The GRH: the IPv6 header, or the IPv4 header in its last 20 bytes.
    let mut grh = [0u8; GRH_LEN];
    let n = ip.len().min(GRH_LEN);
    grh[GRH_LEN - n..].copy_from_slice(&ip[..n]);
    let ok = recv.segs.scatter(0, &grh).is_ok() && recv.segs.scatter(GRH_LEN, pkt.payload).is_ok();
    let status = if ok {
        WcStatus::Success
    } else {
        WcStatus::LocLenErr
    };
    let len = (GRH_LEN + pkt.payload.len()) as u32;
    let wr_id = recv.wr_id;
    inner.resp.recv = None;
    consume_recv(qp, inner);
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

/// Ends every receive request with the completion `flushed` makes of it,
/// if any.
pub(crate) fn flush(
    qp: &QpCore,
    inner: &mut QpInner,
    flushed: &impl Fn(u64, WcOpcode) -> Option<Wc>,
) {
    if let Some(recv) = inner.resp.recv.take() {
        if let Some(wc) = flushed(recv.wr_id, WcOpcode::Recv) {
            let _ = qp.recv_cq.push(&wc, false);
        }
        consume_recv(qp, inner);
    }
    // A kernel consumer's posted requests.
    if let (Some(k), None) = (&qp.kernel, &qp.srq) {
        while let Some(wqe) = k.recv.take(&mut inner.krecv) {
            if let Some(wc) = flushed(wqe.wr_id, WcOpcode::Recv) {
                let _ = qp.recv_cq.push(&wc, false);
            }
            k.recv.completed();
        }
    }
    // An SRQ's requests stay for the other QPs.
    let Some(rq) = &qp.rq else { return };
    let producer = rq.producer();
    while inner.resp.head != producer {
        let head = inner.resp.head;
        let buf = &mut inner.resp.scratch;
        let wr_id = match rq.read(head, buf) {
            Ok(()) => slot_wr_id(buf),
            Err(_) => 0,
        };
        if let Some(wc) = flushed(wr_id, WcOpcode::Recv) {
            let _ = qp.recv_cq.push(&wc, false);
        }
        consume_recv(qp, inner);
    }
}
