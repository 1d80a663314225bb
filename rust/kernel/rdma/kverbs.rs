// SPDX-License-Identifier: GPL-2.0

//! Work requests and completions of kernel consumers (ib_mad's QP1, ULPs):
//! what `ib_post_send`, `ib_post_recv` and `ib_poll_cq` pass, read into
//! the types of `work`, and back.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    kernel_segs::KernelSegs,
    work::{
        send_flags, wr_opcode, KernelOperands, KernelRecvWr, KernelSendData, KernelSendWr, KernelWc,
    },
    Av, Qpn, Rkey,
};
use crate::bindings;
use crate::kernel_ext::fill::Fill;
use kernel::prelude::*;

/// Reads one kernel send work request; `av` gives a UD request's AH's
/// address vector. Requests whose operands ib_core has no layout for
/// (memory window binds, FLUSH, ATOMIC WRITE) are `EINVAL`.
///
/// # Safety
///
/// `wr` is a valid work request of the verbs contract, of its opcode's
/// type (`ib_rdma_wr`, `ib_atomic_wr`, `ib_ud_wr`, `ib_reg_wr` with a live
/// MR), whose memory stays
/// valid until it completes; `ud` says whether the QP is UD or GSI.
pub(super) unsafe fn send_wr(
    wr: *const bindings::ib_send_wr,
    ud: bool,
    av: impl FnOnce(*mut bindings::ib_ah) -> Option<Av>,
) -> Result<KernelSendWr> {
    // SAFETY: Guaranteed by the caller.
    let w = unsafe { &*wr };
    let opcode = w.opcode;
    if matches!(
        opcode,
        wr_opcode::BIND_MW | wr_opcode::FLUSH | wr_opcode::ATOMIC_WRITE
    ) {
        return Err(EINVAL);
    }
    let flags = w.send_flags as u32;
    // SAFETY: Guaranteed by the caller.
    let segs = unsafe { KernelSegs::from_raw(w.sg_list, w.num_sge, GFP_ATOMIC)? };
    let data = if flags & send_flags::INLINE != 0 {
        // Inline data is the consumer's to reuse once posted: copy it now.
        let mut bytes = KVec::from_elem(0u8, segs.len(), GFP_ATOMIC)?;
        segs.gather(0, segs.len(), &mut Fill::over(&mut bytes))?;
        KernelSendData::Inline(bytes)
    } else {
        KernelSendData::Segs(segs)
    };
    let operands = if ud {
        // SAFETY: A UD QP's requests are `ib_ud_wr`s.
        let u = unsafe { &*wr.cast::<bindings::ib_ud_wr>() };
        KernelOperands::Ud {
            av: av(u.ah).ok_or(EINVAL)?,
            remote_qpn: Qpn::new(u.remote_qpn),
            remote_qkey: u.remote_qkey,
        }
    } else {
        match opcode {
            wr_opcode::RDMA_WRITE | wr_opcode::RDMA_WRITE_WITH_IMM | wr_opcode::RDMA_READ => {
                // SAFETY: RDMA requests are `ib_rdma_wr`s.
                let r = unsafe { &*wr.cast::<bindings::ib_rdma_wr>() };
                KernelOperands::Rdma {
                    remote_addr: r.remote_addr,
                    rkey: Rkey::new(r.rkey),
                }
            }
            wr_opcode::REG_MR => {
                // SAFETY: Registrations are `ib_reg_wr`s, naming a live MR.
                let r = unsafe { &*wr.cast::<bindings::ib_reg_wr>() };
                KernelOperands::RegMr {
                    key: Rkey::new(r.key),
                    access: r.access as u32,
                    // SAFETY: As above.
                    iova: unsafe { (*r.mr).iova },
                }
            }
            wr_opcode::ATOMIC_CMP_AND_SWP | wr_opcode::ATOMIC_FETCH_AND_ADD => {
                // SAFETY: Atomic requests are `ib_atomic_wr`s.
                let a = unsafe { &*wr.cast::<bindings::ib_atomic_wr>() };
                KernelOperands::Atomic {
                    remote_addr: a.remote_addr,
                    rkey: Rkey::new(a.rkey),
                    compare_add: a.compare_add,
                    swap: a.swap,
                }
            }
            _ => KernelOperands::None,
        }
    };
    Ok(KernelSendWr {
        // SAFETY: `wr_id` and `wr_cqe` share the 8 bytes; either passes through.
        wr_id: unsafe { w.__bindgen_anon_1.wr_id },
        opcode,
        flags,
        // SAFETY: Both members of the union are `u32`-sized.
        ex: unsafe { w.ex.invalidate_rkey },
        data,
        operands,
    })
}

/// Reads one kernel receive work request.
///
/// # Safety
///
/// `wr` is a valid receive work request whose memory stays valid until it
/// completes.
pub(super) unsafe fn recv_wr(wr: *const bindings::ib_recv_wr) -> Result<KernelRecvWr> {
    // SAFETY: Guaranteed by the caller.
    let w = unsafe { &*wr };
    Ok(KernelRecvWr {
        // SAFETY: As for sends.
        wr_id: unsafe { w.__bindgen_anon_1.wr_id },
        // SAFETY: Guaranteed by the caller.
        segs: unsafe { KernelSegs::from_raw(w.sg_list, w.num_sge, GFP_ATOMIC)? },
    })
}

/// Fills in the kernel's `struct ib_wc` from a kernel CQ's completion.
pub(super) fn write_wc(wc: &KernelWc, out: &mut bindings::ib_wc) {
    out.__bindgen_anon_1.wr_id = wc.wr_id;
    out.status = wc.status;
    out.opcode = wc.opcode;
    out.vendor_err = 0;
    out.byte_len = wc.byte_len;
    // The driver stored the completion from a `QpHandle`, which only the
    // adapter makes, from the `ib_qp` it was given.
    out.qp = wc.qp as usize as *mut bindings::ib_qp;
    out.ex.imm_data = wc.ex;
    out.src_qp = wc.src_qp.get();
    out.slid = 0;
    let mut flags = wc.flags;
    match wc.ip_version {
        4 => out.network_hdr_type = bindings::rdma_network_type_RDMA_NETWORK_IPV4 as _,
        6 => out.network_hdr_type = bindings::rdma_network_type_RDMA_NETWORK_IPV6 as _,
        _ => {}
    }
    if wc.ip_version != 0 {
        flags |= bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
    }
    out.wc_flags = flags as _;
    out.pkey_index = 0;
    out.sl = 0;
    out.dlid_path_bits = 0;
    out.port_num = 1;
}
