// SPDX-License-Identifier: GPL-2.0

//! The requester: turns the send queue's work requests into packets, and
//! the peer's responses (ACKs, NAKs, read and atomic responses) into
//! completions, in order.
//!
//! Work requests are copied out of the ring when taken, so the process
//! cannot change one in flight. Each keeps the PSNs it was given, which is
//! all a retransmission needs: going back to a PSN means finding the request
//! that holds it and sending again from that packet.

use crate::counters::Counter;
use crate::device::RroceDevice;
use crate::kernel_ext::{
    jiffies, jiffies_to_usecs,
    rdma::{
        rxe_abi::{
            slot_wr_id, SendData, SendWqe, Wc, WcOpcode, WcStatus, WrOpcode, SEND_FENCE,
            SEND_SIGNALED, SEND_SOLICITED,
        },
        Access, Av, Device, QpAttr, QpType,
    },
    usecs_to_jiffies,
};
use crate::mr::MrError;
use crate::mw;
use crate::proto::{
    headers::{AtomicEth, Deth, Ieth, ImmDt, NakCode, Reth, Syndrome},
    opcode::{Opcode, Operation},
    packet::{ExtHeaders, Headers, Packet},
    psn::Psn,
    queue::Ring,
    rtt::Rtt,
};
use crate::qp::{QpCore, QpInner};
use crate::seg::Memory;
use kernel::prelude::*;

/// Unacknowledged packets a QP may have in flight.
const WINDOW: u32 = 128;
/// What timeouts may shrink a QP's window to.
const MIN_WINDOW: u32 = 8;
/// Packets between two that ask for an ACK, as the C rxe.
const ACK_EVERY: u32 = 64;
/// Each timeout doubles the retransmission timer, up to 2^MAX_BACKOFF times
/// the QP's timeout; each request that completes halves it again.
const MAX_BACKOFF: u8 = 3;
/// The most the peer's measured answer time may stretch the timeout to, in
/// microseconds, so that a dead link is still found in seconds.
const MAX_RTT_TIMEOUT_US: u32 = 4_000_000;
/// The most response packets one read request asks for. A large RDMA READ
/// goes out as several requests, so that its responses, like any other
/// packets, stay within the window instead of arriving in one burst.
const READ_CHUNK: u32 = WINDOW / 2;
/// The longest message, as the device reports.
const MAX_MSG: u32 = 1 << 31;

/// Where a UD request goes, from its AH and work request.
struct UdDest {
    av: Av,
    qpn: u32,
    qkey: u32,
}

/// A work request taken from the send queue.
struct Entry {
    wqe: SendWqe,
    local: Memory,
    ud: Option<UdDest>,
    first_psn: Psn,
    /// PSNs it uses: its packets, or for a read its response packets.
    npsn: u32,
    /// Request packets sent (an atomic has one); for a read, the response
    /// packets asked for.
    sent: u32,
    /// Packets of a SEND or WRITE the peer acknowledged.
    acked: u32,
    /// Read response packets received.
    got: u32,
    /// For a read, the response packets one request asks for: set when it
    /// is first sent, from the window then, and kept, so that a request
    /// sent again asks for part of one sent before, never more.
    chunk: u32,
    /// A read asked again from this response, after a gap or a timeout:
    /// until it moves on, a later response is no news.
    asked_again: Option<u32>,
    done: bool,
}

impl Entry {
    fn is_read_or_atomic(&self) -> bool {
        matches!(
            self.wqe.opcode,
            WrOpcode::Read | WrOpcode::CmpSwap | WrOpcode::FetchAdd
        )
    }

    /// What `sent` counts up to.
    fn request_packets(&self) -> u32 {
        if self.is_atomic() {
            1
        } else {
            self.npsn
        }
    }

    fn is_atomic(&self) -> bool {
        matches!(self.wqe.opcode, WrOpcode::CmpSwap | WrOpcode::FetchAdd)
    }

    fn holds(&self, psn: Psn) -> bool {
        psn.distance_from(self.first_psn) < self.npsn
    }

    /// The PSN of the next request packet.
    fn next_psn(&self) -> Psn {
        self.first_psn + self.sent
    }

    /// The PSN of its last packet; for a local operation, which has none,
    /// the one before `first_psn`.
    fn last_psn(&self) -> Psn {
        self.first_psn + self.npsn.wrapping_sub(1)
    }
}

/// The requester's state.
pub(crate) struct Requester {
    /// Taken work requests, by send queue slot.
    entries: KVVec<Option<Entry>>,
    geometry: Ring,
    /// The oldest request not yet completed: the consumer index.
    head: u32,
    /// The request being sent.
    cur: u32,
    /// The next slot to take a request from.
    next: u32,
    /// The PSN of the next request.
    psn: Psn,
    /// The oldest PSN not acknowledged.
    una: Psn,
    /// The PSN after the last one ever sent: a rewind sends some again,
    /// but the peer may acknowledge any before this one.
    high: Psn,
    /// Unacknowledged packets allowed in flight: WINDOW at first, halved
    /// by each loss, one more with each response that makes progress.
    window: u32,
    /// Packets sent since one asked for an ACK.
    noack: u32,
    /// Retransmissions since the last progress.
    retries: u8,
    /// Timeouts have stretched the retransmission timer by 2^backoff.
    backoff: u8,
    rnr_retries: u8,
    /// When the requester began to wait for the peer, in jiffies: the last
    /// progress, or the last packet sent, whichever came later. Not the
    /// first packet of a burst: the answer to it is asked for at the end of
    /// the burst, which a busy requester may take longer than the timeout to
    /// send.
    waiting_since: u64,
    /// How long the peer takes to answer.
    rtt: Rtt,
    /// Asked again once since the last progress, before the timeout.
    probed: bool,
    /// After an RNR NAK: when to try again.
    rnr_until: Option<u64>,
    /// A copy of a ring element.
    scratch: KVec<u8>,
    /// The next request, fetched but waiting for its fence.
    pending: Option<SendWqe>,
}

impl Requester {
    /// The requester of a QP with send queue `sq`.
    /// The requester of a QP whose send queue has `geometry`: a process's
    /// ring (`user`), or the slots of a kernel consumer's queue.
    pub(crate) fn new(geometry: Ring, user: bool) -> Result<Self> {
        let slots = geometry.index_mask() as usize + 1;
        let mut entries = KVVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            entries.push(None, GFP_KERNEL)?;
        }
        let scratch =
            KVec::from_elem(0u8, if user { geometry.elem_size() } else { 0 }, GFP_KERNEL)?;
        Ok(Self {
            entries,
            geometry,
            head: 0,
            cur: 0,
            next: 0,
            psn: Psn::new(0),
            una: Psn::new(0),
            high: Psn::new(0),
            window: WINDOW,
            noack: 0,
            retries: 0,
            backoff: 0,
            rnr_retries: 0,
            waiting_since: 0,
            rtt: Rtt::default(),
            probed: false,
            rnr_until: None,
            scratch,
            pending: None,
        })
    }

    /// Starts the send PSNs at `psn` (modify with `IB_QP_SQ_PSN`).
    pub(crate) fn reset(&mut self, psn: Psn) {
        self.psn = psn;
        self.una = psn;
        self.high = psn;
        self.backoff = 0;
        self.window = WINDOW;
        self.rtt = Rtt::default();
        self.probed = false;
    }

    /// Whether packets wait for the peer.
    fn outstanding(&self) -> bool {
        self.una != self.psn
    }

    /// How soon the device timer must look at this QP, if at all.
    pub(crate) fn timer_usecs(&self, attr: &QpAttr) -> Option<u32> {
        if self.rnr_until.is_some() {
            return Some(1000);
        }
        if !self.outstanding() || attr.timeout == 0 {
            return None;
        }
        let timeout = timeout_usecs(attr.timeout);
        let probe = self.probe_after(timeout).map_or(timeout, jiffies_to_usecs);
        Some(timeout.min(probe).clamp(1000, 1_000_000))
    }

    /// The timeout the peer's answer times call for, in jiffies; 0 before
    /// any was measured.
    fn learnt_timeout(&self) -> u64 {
        self.rtt.timeout(usecs_to_jiffies(MAX_RTT_TIMEOUT_US))
    }

    /// The silence, in jiffies, after which to ask again before the QP's
    /// timeout of `timeout_us`: longer than the peer takes by a tick of the
    /// clock, which counts whole ticks, and at least half the timeout, as a
    /// peer that answers within a tick may still stall for several (a VM
    /// whose host is busy). None before an answer time is measured, or
    /// once asked again since the last progress.
    fn probe_after(&self, timeout_us: u32) -> Option<u64> {
        if self.probed {
            return None;
        }
        match self.learnt_timeout() {
            0 => None,
            j => Some((j + 1).max(usecs_to_jiffies(timeout_us / 2))),
        }
    }

    fn entry(&mut self, index: u32) -> Option<&mut Entry> {
        self.entries.get_mut(index as usize)?.as_mut()
    }

    /// The requests taken, oldest first.
    fn taken(&self) -> impl Iterator<Item = &Entry> {
        let mut i = self.head;
        core::iter::from_fn(move || {
            while i != self.next {
                let slot = i;
                i = self.geometry.next(i);
                if let Some(e) = self.entries[slot as usize].as_ref() {
                    return Some(e);
                }
            }
            None
        })
    }

    /// The slot of the request that holds `psn`, among those taken.
    fn find(&self, psn: Psn) -> Option<u32> {
        let mut i = self.head;
        while i != self.next {
            if self.entries[i as usize]
                .as_ref()
                .is_some_and(|e| e.holds(psn))
            {
                return Some(i);
            }
            i = self.geometry.next(i);
        }
        None
    }
}

/// The transport timeout: 4.096 us * 2^timeout, in microseconds.
fn timeout_usecs(timeout: u8) -> u32 {
    (4096u64 << timeout.min(31))
        .div_ceil(1000)
        .min(u32::MAX as u64) as u32
}

/// The RNR NAK timer code's delay in microseconds (IBA table 45).
fn rnr_usecs(code: u8) -> u32 {
    const TABLE: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
        327_680, 491_520,
    ];
    TABLE[(code & 31) as usize]
}

/// A failed request: the completion status it ends with.
fn mr_status(e: MrError) -> WcStatus {
    match e {
        MrError::Key | MrError::Access => WcStatus::LocProtErr,
        MrError::Range => WcStatus::LocLenErr,
    }
}

/// What the send queue holds next.
enum Fetched {
    Empty,
    /// A ring element that does not parse, and its `wr_id`.
    Bad(u64),
    Wqe(SendWqe),
}

/// Takes the next request: from the ring at `index`, or a kernel
/// consumer's next post.
fn fetch(qp: &QpCore, inner: &mut QpInner, index: u32) -> Fetched {
    match (&qp.sq, &qp.kernel) {
        (Some(sq), _) => {
            let req = &mut inner.req;
            if index == sq.producer() {
                Fetched::Empty
            } else if sq.read(index, &mut req.scratch).is_err() {
                Fetched::Bad(0)
            } else {
                SendWqe::parse(&req.scratch, qp.caps.max_send_sge, qp.caps.max_inline_data)
                    .map_or(Fetched::Bad(slot_wr_id(&req.scratch)), Fetched::Wqe)
            }
        }
        (None, Some(k)) => k
            .send
            .take(&mut inner.ksend)
            .map_or(Fetched::Empty, Fetched::Wqe),
        (None, None) => Fetched::Empty,
    }
}

/// Checks a request and resolves its memory and destination.
fn take(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    psn: Psn,
    mut wqe: SendWqe,
    mtu: u32,
    qkey: u32,
) -> Result<Entry, (u64, WcOpcode, WcStatus)> {
    let fail = |status| (wqe.wr_id, wqe.opcode.wc_opcode(), status);
    let supported = match qp.qp_type {
        QpType::Rc => true,
        QpType::Uc => matches!(
            wqe.opcode,
            WrOpcode::Send
                | WrOpcode::SendImm
                | WrOpcode::Write
                | WrOpcode::WriteImm
                | WrOpcode::LocalInv
                | WrOpcode::BindMw
        ),
        QpType::Ud | QpType::Gsi => matches!(wqe.opcode, WrOpcode::Send | WrOpcode::SendImm),
        QpType::Other(_) => false,
    };
    if !supported {
        return Err(fail(WcStatus::LocQpOpErr));
    }
    if wqe.opcode.is_local() {
        // Done now, in posting order after the requests before it were
        // sent; it completes once they have.
        local_op(dev, qp, &wqe).map_err(fail)?;
        return Ok(Entry {
            wqe,
            local: Memory::empty(),
            ud: None,
            first_psn: psn,
            npsn: 0,
            sent: 0,
            acked: 0,
            got: 0,
            chunk: 0,
            asked_again: None,
            done: true,
        });
    }
    let atomic = matches!(wqe.opcode, WrOpcode::CmpSwap | WrOpcode::FetchAdd);
    let access = if wqe.opcode == WrOpcode::Read || atomic {
        Access::LOCAL_WRITE
    } else {
        Access::from_bits(0)
    };
    let data = core::mem::replace(&mut wqe.data, SendData::Inline(KVec::new()));
    let local = Memory::for_send(dev, data, qp.pd, access).map_err(|e| fail(mr_status(e)))?;
    let len = local.len();
    if len != wqe.length as usize || wqe.length > MAX_MSG || (atomic && len != 8) {
        return Err(fail(WcStatus::LocLenErr));
    }
    let ud = if qp.qp_type.is_ud() {
        // A datagram is one packet.
        if wqe.length > mtu {
            return Err(fail(WcStatus::LocLenErr));
        }
        // A kernel consumer's request carries its AH's address vector.
        let av = match wqe.av {
            Some(av) => av,
            None => {
                dev.data()
                    .ah_map()
                    .get(wqe.ah_num)
                    .filter(|ah| ah.pd == qp.pd)
                    .ok_or(fail(WcStatus::LocQpOpErr))?
                    .av
            }
        };
        Some(UdDest {
            av,
            qpn: wqe.remote_qpn & Psn::MASK,
            // A Q_Key with the high bit set means the QP's own (IBA 10.2.5).
            qkey: if wqe.remote_qkey & 0x8000_0000 != 0 {
                qkey
            } else {
                wqe.remote_qkey
            },
        })
    } else {
        None
    };
    let npsn = if atomic {
        1
    } else {
        wqe.length.div_ceil(mtu.max(1)).max(1)
    };
    Ok(Entry {
        wqe,
        local,
        ud,
        first_psn: psn,
        npsn,
        sent: 0,
        acked: 0,
        got: 0,
        chunk: 0,
        asked_again: None,
        done: false,
    })
}

/// Carries out a memory window bind or a local invalidation.
fn local_op(dev: &Device<RroceDevice>, qp: &QpCore, wqe: &SendWqe) -> Result<(), WcStatus> {
    match &wqe.mw {
        Some(bind) => mw::bind(dev, qp, bind).map_err(|_| WcStatus::MwBindErr),
        // Only type 2 windows can be invalidated: user MRs cannot.
        None => mw::invalidate(dev, qp, wqe.ex, false).map_err(|_| WcStatus::LocQpOpErr),
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

/// The response packets the next request of a read asks for: up to the end
/// of its chunk, so that a request sent again after a loss asks for part of
/// what one earlier request asked for, never more, as responders expect.
/// Nor less: the responder may have lost that earlier one and taken this
/// one as new, and it must hold any request sent again after it too.
fn read_chunk(e: &Entry) -> u32 {
    (e.chunk - e.sent % e.chunk).min(e.npsn - e.sent)
}

/// Sends the next request packet of the entry at `index`.
fn send_packet(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, index: u32, mtu: u32) {
    let rc = qp.qp_type == QpType::Rc;
    let req = &mut inner.req;
    let window = req.window;
    let Some(e) = req.entries.get_mut(index as usize).and_then(|e| e.as_mut()) else {
        return;
    };
    // Request packets, or for a read response packets, this one sends.
    let mut step = 1;
    let (av, dest) = match &e.ud {
        Some(ud) => (ud.av, ud.qpn),
        None => (inner.av, inner.attr.dest_qpn),
    };
    let w = &e.wqe;
    let mut ext = ExtHeaders::default();
    let (opcode, psn, at, len) = match w.opcode {
        WrOpcode::Read => {
            if e.chunk == 0 {
                e.chunk = (window / 2).clamp(1, READ_CHUNK);
            }
            let from = e.sent * mtu;
            let psn = e.next_psn();
            step = read_chunk(e);
            ext.reth = Some(Reth {
                va: w.remote_addr.wrapping_add(from.into()),
                rkey: w.rkey,
                dma_len: (w.length - from).min(step * mtu),
            });
            (Opcode::RcReadRequest, psn, 0, 0)
        }
        WrOpcode::CmpSwap | WrOpcode::FetchAdd => {
            let cmp = w.opcode == WrOpcode::CmpSwap;
            ext.atomic = Some(AtomicEth {
                va: w.remote_addr,
                rkey: w.rkey,
                swap_add: if cmp { w.swap } else { w.compare_add },
                compare: if cmp { w.compare_add } else { 0 },
            });
            let opcode = if cmp {
                Opcode::RcCompareSwap
            } else {
                Opcode::RcFetchAdd
            };
            (opcode, e.first_psn, 0, 0)
        }
        _ => {
            let n = e.sent;
            let opcode = match &e.ud {
                Some(ud) => {
                    ext.deth = Some(Deth {
                        qkey: ud.qkey,
                        src_qpn: qp.qpn,
                    });
                    Some(if w.opcode == WrOpcode::SendImm {
                        Opcode::UdSendOnlyImm
                    } else {
                        Opcode::UdSendOnly
                    })
                }
                None => data_opcode(qp.qp_type, w.opcode, n, e.npsn),
            };
            let Some(opcode) = opcode else {
                return;
            };
            let at = (n * mtu) as usize;
            let len = (w.length as usize - at).min(mtu as usize);
            if n == 0 && matches!(w.opcode, WrOpcode::Write | WrOpcode::WriteImm) {
                ext.reth = Some(Reth {
                    va: w.remote_addr,
                    rkey: w.rkey,
                    dma_len: w.length,
                });
            }
            if opcode.has_imm() {
                ext.imm = Some(ImmDt {
                    imm: u32::from_be(w.ex),
                });
            }
            if opcode.ext().contains(crate::proto::opcode::Ext::IETH) {
                ext.ieth = Some(Ieth { rkey: w.ex });
            }
            (opcode, e.first_psn + n, at, len)
        }
    };
    let mut bth = qp.bth(dest, opcode, psn);
    let ends = opcode.ends_message() || e.is_read_or_atomic();
    bth.solicited = ends && w.flags & SEND_SOLICITED != 0;
    req.noack += 1;
    // A window shrunk below 2 * ACK_EVERY would otherwise fill before the
    // peer is asked for the ACK that opens it again.
    if rc && (ends || req.noack >= (window / 2).min(ACK_EVERY)) {
        bth.ack_req = true;
        req.noack = 0;
        if !psn.before(req.high) {
            req.rtt.sent(psn, jiffies());
        }
    }
    let headers = Headers { bth, ext };
    let local = &e.local;
    qp.send(dev, &av, headers, len, |buf| {
        local.gather(at, buf).map_err(|_| EFAULT)
    });
    e.sent += step;
    let end = e.next_psn();
    if end.after(req.high) {
        req.high = end;
    }
}

/// Sends what the send queue holds, as far as the window allows.
pub(crate) fn run(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner) {
    loop {
        let before = (inner.req.head, inner.req.next);
        send_some(dev, qp, inner);
        // On UC the requests before a fenced one complete as they are sent,
        // which lifts the fence at once: go on while that makes progress.
        let req = &inner.req;
        let lifted = req
            .pending
            .as_ref()
            .is_some_and(|w| !fenced(req, w, req.next));
        if !lifted || (req.head, req.next) == before {
            break;
        }
    }
}

/// Sends until the window, the queue or a fence stops it; completes what
/// is done.
fn send_some(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner) {
    let mtu = qp.mtu(inner);
    let rc = qp.qp_type == QpType::Rc;
    let max_rd_atomic = u32::from(inner.attr.max_rd_atomic.max(1));
    let qkey = inner.attr.qkey;
    while inner.attr.state == crate::kernel_ext::rdma::QpState::Rts && inner.req.rnr_until.is_none()
    {
        let req = &mut inner.req;
        if req.cur == req.next {
            let index = req.next;
            if req.entries[index as usize].is_some() {
                break;
            }
            let psn = req.psn;
            let fetched = match req.pending.take() {
                Some(wqe) => Fetched::Wqe(wqe),
                None => fetch(qp, inner, index),
            };
            let taken = match fetched {
                Fetched::Empty => break,
                Fetched::Bad(wr_id) => Err((wr_id, WcOpcode::Send, WcStatus::LocQpOpErr)),
                Fetched::Wqe(wqe) if fenced(&inner.req, &wqe, index) => {
                    inner.req.pending = Some(wqe);
                    break;
                }
                Fetched::Wqe(wqe) => take(dev, qp, psn, wqe, mtu, qkey),
            };
            let req = &mut inner.req;
            match taken {
                Ok(e) => {
                    req.psn = req.psn + e.npsn;
                    req.entries[index as usize] = Some(e);
                    req.next = req.geometry.next(index);
                }
                Err((wr_id, opcode, status)) => {
                    complete_done(qp, inner);
                    flush_before(qp, inner, index);
                    let wc = error_wc(qp, wr_id, opcode, status);
                    qp.complete_send(inner, &wc, false);
                    let req = &mut inner.req;
                    req.head = req.geometry.next(index);
                    req.cur = req.head;
                    req.next = req.head;
                    qp.send_done(req.head);
                    qp.enter_error(inner);
                    return;
                }
            }
        }
        let req = &mut inner.req;
        let cur = req.cur;
        let una = req.una;
        let window = req.window;
        let Some(e) = req.entry(cur) else { break };
        if e.sent >= e.request_packets() {
            req.cur = req.geometry.next(cur);
            continue;
        }
        if rc {
            let psn = e.next_psn();
            if psn.distance_from(una) >= window {
                break;
            }
            // Asking again takes no new responder resource; asking anew does.
            let new_read = e.is_read_or_atomic() && !psn.before(req.high);
            if new_read && reads_in_flight(req) >= max_rd_atomic {
                break;
            }
        }
        send_packet(dev, qp, inner, cur, mtu);
        inner.req.waiting_since = jiffies();
        if !rc {
            // Unacknowledged transports are done once sent.
            if let Some(e) = inner.req.entry(cur) {
                if e.sent >= e.npsn {
                    e.done = true;
                }
            }
            let req = &mut inner.req;
            req.una = req.psn;
        }
    }
    complete_done(qp, inner);
}

/// Whether the request for slot `index` must wait: a LOCAL_INV until every
/// request before it has completed, and a fenced request until the reads
/// and atomics before it have (IBA 10.8.3.3), sent or not.
fn fenced(req: &Requester, wqe: &SendWqe, index: u32) -> bool {
    (wqe.opcode == WrOpcode::LocalInv && req.head != index)
        || (wqe.flags & SEND_FENCE != 0 && req.taken().any(|e| e.is_read_or_atomic() && !e.done))
}

/// Read and atomic requests on the wire that the peer has not answered in
/// full: what `max_rd_atomic` bounds. Each chunk of a read counts, as the
/// responder holds a resource for each (the C rxe a ring of
/// `max_dest_rd_atomic`, whose oldest a new one overwrites).
fn reads_in_flight(req: &Requester) -> u32 {
    req.taken()
        .filter(|e| e.is_read_or_atomic() && !e.done && e.first_psn.before(req.high))
        .map(|e| {
            if e.is_atomic() {
                return 1;
            }
            // The chunks asked for, from the one that holds the first
            // missing response.
            let chunk = e.chunk.max(1);
            let asked = req.high.distance_from(e.first_psn).min(e.npsn);
            // Saturating: a new SQ PSN may set `high` back under it.
            asked.div_ceil(chunk).saturating_sub(e.got / chunk)
        })
        .sum()
}

fn error_wc(qp: &QpCore, wr_id: u64, opcode: WcOpcode, status: WcStatus) -> Wc {
    qp.wc(wr_id, status, opcode, 0)
}

/// Completes, in order, the requests that are done.
fn complete_done(qp: &QpCore, inner: &mut QpInner) {
    loop {
        let req = &mut inner.req;
        let head = req.head;
        if head == req.next || !req.entries[head as usize].as_ref().is_some_and(|e| e.done) {
            break;
        }
        let Some(e) = req.entries[head as usize].take() else {
            break;
        };
        if req.cur == head {
            req.cur = req.geometry.next(head);
        }
        req.head = req.geometry.next(head);
        // Not straight back to the QP's timeout on the first response after
        // one: a peer that was too slow for it may still be, and what
        // arrives may answer the requests that timed out. A request done
        // shows the peer keeping up.
        req.backoff = req.backoff.saturating_sub(1);
        qp.send_done(req.head);
        complete_entry(qp, inner, &e, WcStatus::Success);
    }
}

/// Reports a request that left the queue with `status`: always in error,
/// and when it succeeded only if it was signalled.
fn complete_entry(qp: &QpCore, inner: &mut QpInner, e: &Entry, status: WcStatus) {
    let ok = status == WcStatus::Success;
    if ok && e.wqe.flags & SEND_SIGNALED == 0 && !qp.sq_sig_all {
        return;
    }
    let wc = Wc {
        byte_len: if ok { e.wqe.length } else { 0 },
        ..error_wc(qp, e.wqe.wr_id, e.wqe.opcode.wc_opcode(), status)
    };
    qp.complete_send(inner, &wc, false);
}

/// Completes the requests before slot `index` that are not done with
/// `IBV_WC_WR_FLUSH_ERR`, in order: the one at `index` failed, and
/// completions come in posting order.
fn flush_before(qp: &QpCore, inner: &mut QpInner, index: u32) {
    loop {
        let req = &mut inner.req;
        let head = req.head;
        if head == index || head == req.next {
            break;
        }
        let taken = req.entries.get_mut(head as usize).and_then(|e| e.take());
        req.head = req.geometry.next(head);
        qp.send_done(req.head);
        let Some(e) = taken else { continue };
        // A bind or invalidation behind a read took effect: say so.
        let status = if e.done {
            WcStatus::Success
        } else {
            WcStatus::WrFlushErr
        };
        complete_entry(qp, inner, &e, status);
    }
}

/// Ends the request at `index` with `status`; the QP enters the error state.
fn fail(qp: &QpCore, inner: &mut QpInner, index: u32, status: WcStatus) {
    complete_done(qp, inner);
    flush_before(qp, inner, index);
    let req = &mut inner.req;
    if let Some(e) = req.entries.get_mut(index as usize).and_then(|e| e.take()) {
        req.head = req.geometry.next(index);
        req.cur = req.head;
        qp.send_done(req.head);
        let wc = error_wc(qp, e.wqe.wr_id, e.wqe.opcode.wc_opcode(), status);
        qp.complete_send(inner, &wc, false);
    }
    qp.enter_error(inner);
}

/// Marks the requests before `until` done: a later response acknowledges
/// them. Stops at a read or atomic still waiting for its answer.
fn ack_before(req: &mut Requester, until: u32) {
    let mut i = req.head;
    while i != until {
        if let Some(e) = req.entries[i as usize].as_mut() {
            if e.is_read_or_atomic() && !e.done {
                return;
            }
            e.acked = e.npsn;
            e.done = true;
        }
        i = req.geometry.next(i);
    }
}

/// The oldest PSN not acknowledged: in the first request not done.
fn update_una(req: &mut Requester) {
    let mut i = req.head;
    while i != req.next {
        if let Some(e) = req.entries[i as usize].as_ref() {
            if !e.done {
                let n = if e.wqe.opcode == WrOpcode::Read {
                    e.got
                } else {
                    e.acked
                };
                req.una = e.first_psn + n;
                return;
            }
        }
        i = req.geometry.next(i);
    }
    req.una = req.psn;
}

/// Records that the peer made progress.
fn progress(req: &mut Requester) {
    update_una(req);
    let now = jiffies();
    req.rtt.answered_before(req.una, now);
    req.retries = 0;
    req.rnr_retries = 0;
    req.probed = false;
    req.window = (req.window + 1).min(WINDOW);
    req.waiting_since = now;
}

/// Handles an ACK: every request whose packets are all at or before `psn`
/// is done, up to the first read or atomic still waiting for its answer.
fn ack_through(req: &mut Requester, psn: Psn) {
    let mut i = req.head;
    while i != req.next {
        let Some(e) = req.entries[i as usize].as_mut() else {
            break;
        };
        if e.is_read_or_atomic() {
            if !e.done {
                break;
            }
        } else if !e.last_psn().after(psn) {
            // Even if a rewind has it to send again: all of it arrived.
            e.sent = e.npsn;
            e.acked = e.npsn;
            e.done = true;
        } else {
            if e.holds(psn) {
                e.acked = e.acked.max(psn.distance_from(e.first_psn) + 1);
                // Nor is what arrived sent again.
                e.sent = e.sent.max(e.acked);
            }
            break;
        }
        i = req.geometry.next(i);
    }
    progress(req);
}

/// A loss, seen by a timeout, a sequence NAK or a gap in read responses:
/// halve the window, so that what is sent again does not swamp a link that
/// has just dropped packets, or a peer already behind.
fn lost(req: &mut Requester) {
    req.window = (req.window / 2).max(MIN_WINDOW);
}

/// Goes back to `psn`: the request that holds it, and everything after it,
/// will be sent again from there.
fn rewind(req: &mut Requester, psn: Psn) {
    let Some(k) = req.find(psn) else { return };
    req.rtt.resent();
    let high = req.high;
    let mut i = k;
    while i != req.next {
        if let Some(e) = req.entries[i as usize].as_mut() {
            if e.wqe.opcode == WrOpcode::Read {
                // What arrived stays placed. Asking for it again could even
                // fail: the C rxe, having replayed a read from some point,
                // refuses to read from before it.
                e.sent = e.got;
                if (e.first_psn + e.got).before(high) {
                    e.asked_again = Some(e.got);
                }
            } else if i == k && !e.is_atomic() {
                e.sent = psn.distance_from(e.first_psn);
            } else if !e.done {
                e.sent = 0;
            }
        }
        i = req.geometry.next(i);
    }
    // Never forward: a request before this one may wait to be sent again
    // from an earlier rewind (a gap in a later read, whose responses are
    // taken meanwhile, rewinds to it).
    let ring = req.geometry;
    if ring.count(k, req.head) < ring.count(req.cur, req.head) {
        req.cur = k;
    }
    update_una(req);
}

/// Handles a response packet from the peer.
pub(crate) fn receive_response(
    dev: &Device<RroceDevice>,
    qp: &QpCore,
    inner: &mut QpInner,
    pkt: &Packet<'_>,
) {
    if qp.qp_type != QpType::Rc || inner.attr.state != crate::kernel_ext::rdma::QpState::Rts {
        return;
    }
    let psn = pkt.headers.bth.psn;
    let req = &mut inner.req;
    // Only PSNs sent and not yet acknowledged mean anything.
    if psn.distance_from(req.una) >= req.high.distance_from(req.una) {
        return;
    }
    let mtu = qp.mtu(inner);
    match pkt.headers.bth.opcode.operation() {
        Operation::Ack => {
            let Some(aeth) = pkt.headers.ext.aeth else {
                return;
            };
            let before = psn + Psn::MASK;
            let req = &mut inner.req;
            match aeth.syndrome {
                Syndrome::Ack { .. } => ack_through(req, psn),
                Syndrome::RnrNak { timer } => {
                    dev.data().count(Counter::RnrNakRcvd);
                    ack_through(req, before);
                    req.rnr_retries = req.rnr_retries.saturating_add(1);
                    let limit = inner.attr.rnr_retry;
                    if limit != 7 && req.rnr_retries > limit {
                        dev.data().count(Counter::RnrRetryExceeded);
                        if let Some(k) = req.find(psn) {
                            fail(qp, inner, k, WcStatus::RnrRetryExcErr);
                        }
                        return;
                    }
                    rewind(req, psn);
                    req.rnr_until = Some(jiffies() + usecs_to_jiffies(rnr_usecs(timer)));
                }
                Syndrome::Nak(code) => {
                    ack_through(req, before);
                    if code == NakCode::PsnSequenceError {
                        dev.data().count(Counter::SeqNakRcvd);
                        lost(req);
                        rewind(req, psn);
                    } else if let Some(k) = req.find(psn) {
                        let status = match code {
                            NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                            NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                            _ => WcStatus::RemInvReqErr,
                        };
                        fail(qp, inner, k, status);
                        return;
                    }
                }
            }
        }
        Operation::ReadResponse => read_response(qp, inner, pkt, mtu),
        Operation::AtomicAck => atomic_ack(qp, inner, pkt),
        _ => return,
    }
    complete_done(qp, inner);
    run(dev, qp, inner);
}

/// Places a read response's data, if it is the one the read expects next.
fn read_response(qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>, mtu: u32) {
    let psn = pkt.headers.bth.psn;
    let req = &mut inner.req;
    let high = req.high;
    let Some(k) = req.find(psn) else { return };
    let Some(e) = req.entry(k) else { return };
    // Any response asked for is taken, even one a rewind has since set to
    // ask for again.
    let expected = e.first_psn + e.got;
    if e.wqe.opcode != WrOpcode::Read || e.done || !expected.before(high) {
        return;
    }
    // Only the next response is taken. A later one means the next was
    // lost: ask again from there at once, rather than after a transport
    // timeout, as a sequence NAK does for writes; unless that was done.
    if psn != expected {
        if psn.after(expected) && e.asked_again != Some(e.got) {
            lost(req);
            rewind(req, expected);
        }
        return;
    }
    // Each request's responses end with a Last, the read's last one with
    // its last byte; every other packet is full.
    let at = (e.got * mtu) as usize;
    let len = pkt.payload.len();
    let length = e.wqe.length as usize;
    let last = at + len == length;
    let fits = (last || len == mtu as usize) && at + len <= length;
    let placed = fits && (len == 0 || e.local.scatter(at, pkt.payload).is_ok());
    if !placed {
        fail(qp, inner, k, WcStatus::BadRespErr);
        return;
    }
    e.got += 1;
    e.sent = e.sent.max(e.got);
    if last {
        e.done = true;
        e.acked = e.npsn;
    }
    ack_before(req, k);
    progress(req);
}

/// Places an atomic's original value.
fn atomic_ack(qp: &QpCore, inner: &mut QpInner, pkt: &Packet<'_>) {
    let psn = pkt.headers.bth.psn;
    let Some(ack) = pkt.headers.ext.atomic_ack else {
        return;
    };
    let req = &mut inner.req;
    let Some(k) = req.find(psn) else { return };
    let Some(e) = req.entry(k) else { return };
    if !e.is_read_or_atomic() || e.wqe.opcode == WrOpcode::Read || e.done || e.sent == 0 {
        return;
    }
    let orig = ack.orig.to_ne_bytes();
    if e.local.scatter(0, &orig).is_err() {
        fail(qp, inner, k, WcStatus::LocProtErr);
        return;
    }
    e.done = true;
    ack_before(req, k);
    progress(req);
}

/// The device timer: resend after a silence longer than the timeout, and
/// give up with `IBV_WC_RETRY_EXC_ERR` after `retry_cnt` tries.
pub(crate) fn tick(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, now: u64) {
    let req = &mut inner.req;
    if let Some(until) = req.rnr_until {
        if now < until {
            return;
        }
        req.rnr_until = None;
        req.waiting_since = now;
        run(dev, qp, inner);
        return;
    }
    if !req.outstanding() || inner.attr.timeout == 0 || qp.qp_type != QpType::Rc {
        return;
    }
    // The backoff stretches the QP's timeout, not the measured one: that
    // one is already what the peer takes.
    let timeout_us = timeout_usecs(inner.attr.timeout);
    let limit = (usecs_to_jiffies(timeout_us) << req.backoff).max(req.learnt_timeout());
    // Saturating: the receive clock lags while packets wait, so it may be
    // behind the last packet sent, or the progress one of them made.
    let silence = now.saturating_sub(req.waiting_since);
    if silence < limit {
        // The last packets lost leave nothing after them to tell of the
        // loss, and the peer silent. Once it has been silent for longer
        // than it takes to answer, ask again, without waiting for the whole
        // of the QP's timeout and without counting a retry.
        if req
            .probe_after(timeout_us)
            .is_some_and(|after| silence >= after)
        {
            req.probed = true;
            resend(dev, qp, inner, now);
        }
        return;
    }
    if req.retries >= inner.attr.retry_cnt {
        dev.data().count(Counter::RetryExceeded);
        let head = req.head;
        fail(qp, inner, head, WcStatus::RetryExcErr);
        return;
    }
    req.retries += 1;
    // A peer slower than the timeout, not gone, would otherwise get the
    // whole window again on every timeout, fall further behind and never
    // answer in time; a dead link still fails within retry_cnt timeouts of
    // at most 2^MAX_BACKOFF times the QP's.
    req.backoff = (req.backoff + 1).min(MAX_BACKOFF);
    // Nor should it get a whole window to chew through again.
    lost(req);
    resend(dev, qp, inner, now);
}

/// Sends again, as of `now`, from the oldest packet not acknowledged.
fn resend(dev: &Device<RroceDevice>, qp: &QpCore, inner: &mut QpInner, now: u64) {
    dev.data().count(Counter::Retransmits);
    let req = &mut inner.req;
    req.waiting_since = now;
    let una = req.una;
    rewind(req, una);
    run(dev, qp, inner);
}

/// Ends every request, taken or not, with the completion `flushed` makes
/// of it, if any.
pub(crate) fn flush(
    qp: &QpCore,
    inner: &mut QpInner,
    flushed: &impl Fn(u64, WcOpcode) -> Option<Wc>,
) {
    let mut completions = KVec::new();
    let req = &mut inner.req;
    let pending = req.pending.take();
    while req.head != req.next {
        if let Some(wc) = req.entries[req.head as usize]
            .take()
            .and_then(|e| flushed(e.wqe.wr_id, e.wqe.opcode.wc_opcode()))
        {
            let _ = completions.push(wc, GFP_KERNEL);
        }
        req.head = req.geometry.next(req.head);
        qp.send_done(req.head);
    }
    // Then what was posted and not taken yet, first the one fetched.
    if let Some(w) = pending {
        if let Some(wc) = flushed(w.wr_id, w.opcode.wc_opcode()) {
            let _ = completions.push(wc, GFP_KERNEL);
        }
        let req = &mut inner.req;
        req.head = req.geometry.next(req.head);
        qp.send_done(req.head);
    }
    loop {
        let head = inner.req.head;
        let (wr_id, op) = match fetch(qp, inner, head) {
            Fetched::Empty => break,
            Fetched::Bad(wr_id) => (wr_id, WcOpcode::Send),
            Fetched::Wqe(w) => (w.wr_id, w.opcode.wc_opcode()),
        };
        if let Some(wc) = flushed(wr_id, op) {
            let _ = completions.push(wc, GFP_KERNEL);
        }
        let req = &mut inner.req;
        req.head = req.geometry.next(req.head);
        qp.send_done(req.head);
    }
    let req = &mut inner.req;
    req.cur = req.head;
    req.next = req.head;
    req.rnr_until = None;
    update_una(req);
    for wc in completions.iter() {
        // A full CQ loses the flush completions; the QP is already in error.
        let _ = qp.send_cq.push(wc, false);
    }
}
