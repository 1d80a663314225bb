// SPDX-License-Identifier: GPL-2.0

//! The ring element parsers against hostile slots: the property behind the
//! `parse_wqe` fuzz target and its smoke test.
//!
//! A process can write anything into its send and receive rings. Checked:
//! no panic; a parsed element keeps to the queue's limits and to the slot
//! (its SGEs and inline data are bytes of the slot, where the layout puts
//! them); and writing the parsed element back as the provider would gives
//! a slot that parses to the same element.

use crate::proto::wqe::{
    dma, operands, recv, send, Operands, RecvWqe, RingData, SendWqe, Sge, Sges, UdDest, WrOpcode,
    ATOMIC_WRITE_LEN, RECV_WQE_SIZE, SEND_WQE_SIZE, SGE_SIZE,
};

/// The largest slot the check builds: 16 SGEs or 256 inline bytes.
const MAX_SLOT: usize = SEND_WQE_SIZE as usize + 256;
const SGE: usize = SGE_SIZE as usize;

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

fn put_sges(b: &mut [u8], at: usize, sges: impl Iterator<Item = Sge>) -> usize {
    let mut n = 0;
    for (i, s) in sges.enumerate() {
        let e = at + i * SGE;
        put64(b, e, s.addr);
        put32(b, e + 8, s.length);
        put32(b, e + 12, s.lkey);
        n += 1;
    }
    n
}

/// Writes `w` into `b` as rdma-core's rxe provider lays it out.
fn write_send(w: &SendWqe<RingData<'_>, ()>, b: &mut [u8]) {
    use operands::*;
    let u = send::OPERANDS;
    put64(b, send::WR_ID, w.wr_id);
    put32(b, send::OPCODE, w.opcode as u32);
    put32(b, send::SEND_FLAGS, w.flags);
    put32(b, send::EX, w.ex);
    // The union's members overlap: the remote address and key first, then
    // what the opcode's member holds besides, parsed from the same bytes.
    put64(b, u + REMOTE_ADDR, w.remote_addr);
    let rkey = match w.opcode {
        WrOpcode::CmpSwap | WrOpcode::FetchAdd => ATOMIC_RKEY,
        WrOpcode::Flush => FLUSH_RKEY,
        _ => RDMA_RKEY,
    };
    put32(b, u + rkey, w.rkey);
    match w.operands {
        Operands::None | Operands::Reg(_) => {}
        Operands::Ud {
            remote_qpn,
            remote_qkey,
            ref dest,
        } => {
            put32(b, u + UD_REMOTE_QPN, remote_qpn);
            put32(b, u + UD_REMOTE_QKEY, remote_qkey);
            if let UdDest::Ah(num) = *dest {
                put32(b, u + UD_AH_NUM, num);
            }
        }
        Operands::Atomic { compare_add, swap } => {
            put64(b, u + ATOMIC_COMPARE_ADD, compare_add);
            put64(b, u + ATOMIC_SWAP, swap);
        }
        Operands::Flush(flush) => {
            b[u + FLUSH_TYPE] = flush.placement;
            b[u + FLUSH_LEVEL] = flush.selectivity;
        }
        Operands::Bind(mw) => {
            put64(b, u + REMOTE_ADDR, mw.addr);
            put64(b, u + MW_LENGTH, mw.length);
            put32(b, u + MW_MR_LKEY, mw.mr_lkey);
            put32(b, u + MW_MW_RKEY, mw.mw_rkey);
            put32(b, u + MW_RKEY, mw.new_rkey);
            put32(b, u + MW_ACCESS, mw.access);
        }
    }
    put32(b, send::DMA + dma::LENGTH, w.length);
    let at = send::DMA + dma::DATA;
    match &w.data {
        RingData::Inline(bytes) => b[at..at + bytes.len()].copy_from_slice(bytes),
        RingData::Sges(sges) => {
            let n = put_sges(b, at, sges.clone());
            put32(b, send::DMA + dma::NUM_SGE, n as u32);
        }
    }
}

/// Where `inner` lies in `outer`, if it is a piece of it.
fn offset_in(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let at = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (at + inner.len() <= outer.len()).then_some(at)
}

fn check_sges(slot: &[u8], at: usize, sges: &Sges<'_>, max_sge: u32) {
    let n = sges.len();
    assert!(n <= max_sge as usize);
    assert!(at + n * SGE <= slot.len());
    assert_eq!(sges.clone().count(), n);
}

/// Parses `data` as a ring slot and checks the result; panics if it is
/// inconsistent.
///
/// The first byte picks the ring (send or receive) and the queue's SGE
/// limit, the second its inline limit; the rest is the slot.
pub fn check_wqe(data: &[u8]) {
    let [sel, inline_sel, slot @ ..] = data else {
        return;
    };
    let max_sge = u32::from(sel >> 1) % 17;
    let max_inline = u32::from(*inline_sel);
    let slot = &slot[..slot.len().min(MAX_SLOT)];
    if sel & 1 == 0 {
        let Some(w) = SendWqe::<RingData<'_>, ()>::parse(slot, max_sge, max_inline) else {
            return;
        };
        assert!(slot.len() >= SEND_WQE_SIZE as usize);
        let at = send::DMA + dma::DATA;
        match &w.data {
            // An ATOMIC WRITE's value is always its eight bytes; the
            // requester holds its length to that.
            RingData::Inline(bytes) if w.opcode == WrOpcode::AtomicWrite => {
                assert_eq!(bytes.len(), ATOMIC_WRITE_LEN as usize);
                assert_eq!(offset_in(slot, bytes), Some(at));
            }
            RingData::Inline(bytes) => {
                assert_eq!(bytes.len(), w.length as usize);
                assert!(w.length <= max_inline);
                assert_eq!(offset_in(slot, bytes), Some(at));
            }
            RingData::Sges(sges) => check_sges(slot, at, sges, max_sge),
        }
        // Each opcode's member of the union, and no other.
        let fits = match w.opcode {
            WrOpcode::Send | WrOpcode::SendImm => matches!(w.operands, Operands::Ud { .. }),
            WrOpcode::CmpSwap | WrOpcode::FetchAdd => matches!(w.operands, Operands::Atomic { .. }),
            WrOpcode::BindMw => matches!(w.operands, Operands::Bind(_)),
            WrOpcode::Flush => matches!(w.operands, Operands::Flush(_)),
            _ => w.operands == Operands::None,
        };
        assert!(fits, "{:?} with {:?}", w.opcode, w.operands);
        if w.opcode == WrOpcode::Flush {
            assert!(matches!(&w.data, RingData::Sges(s) if s.len() == 0));
        }
        let mut again = [0u8; MAX_SLOT];
        write_send(&w, &mut again);
        let again = &again[..slot.len()];
        assert_eq!(
            SendWqe::parse(again, max_sge, max_inline).as_ref(),
            Some(&w)
        );
    } else {
        let Some(w) = RecvWqe::parse(slot, max_sge) else {
            return;
        };
        assert!(slot.len() >= RECV_WQE_SIZE as usize);
        check_sges(slot, recv::DMA + dma::DATA, &w.data, max_sge);
        let mut again = [0u8; MAX_SLOT];
        put64(&mut again, recv::WR_ID, w.wr_id);
        let n = put_sges(&mut again, recv::DMA + dma::DATA, w.data.clone());
        put32(&mut again, recv::DMA + dma::NUM_SGE, n as u32);
        let again = &again[..slot.len()];
        let back = RecvWqe::parse(again, max_sge).expect("rewritten receive element parses");
        assert_eq!(back.wr_id, w.wr_id);
        assert!(back.data.eq(w.data));
    }
}
