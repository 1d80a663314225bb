// SPDX-License-Identifier: GPL-2.0

//! Work requests and completions of kernel consumers (ib_mad's QP1, ULPs):
//! what `ib_post_send`, `ib_post_recv` and `ib_poll_cq` pass, turned into
//! the same work request types the rings give, and back.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    kernel_segs::KernelSegs,
    work::{RecvData, RecvWqe, SendData, SendWqe},
    Av,
};
use crate::bindings;
use crate::kernel_ext::fill::Fill;
use crate::proto::{
    cqe::KernelWc,
    wqe::{FastReg, WrOpcode, SEND_INLINE},
};
use kernel::prelude::*;

/// Reads one kernel send work request; `av` gives a UD request's AH's
/// address vector.
///
/// # Safety
///
/// `wr` is a valid work request of the verbs contract, of its opcode's
/// type (`ib_rdma_wr`, `ib_atomic_wr`, `ib_ud_wr`, `ib_reg_wr` with a live
/// MR), whose memory stays
/// valid until it completes; `ud` says whether the QP is UD or GSI.
pub(super) unsafe fn send_wqe(
    wr: *const bindings::ib_send_wr,
    ud: bool,
    av: impl FnOnce(*mut bindings::ib_ah) -> Option<Av>,
) -> Result<SendWqe> {
    // SAFETY: Guaranteed by the caller.
    let w = unsafe { &*wr };
    let opcode = if w.opcode == bindings::ib_wr_opcode_IB_WR_REG_MR {
        WrOpcode::RegMr
    } else {
        WrOpcode::from_raw(w.opcode).ok_or(EINVAL)?
    };
    // Kernel consumers have no memory windows, and ib_core no work request
    // layout for FLUSH or ATOMIC WRITE.
    if matches!(
        opcode,
        WrOpcode::BindMw | WrOpcode::Flush | WrOpcode::AtomicWrite
    ) {
        return Err(EINVAL);
    }
    let flags = w.send_flags as u32;
    // SAFETY: Guaranteed by the caller.
    let segs = unsafe { KernelSegs::from_raw(w.sg_list, w.num_sge, GFP_ATOMIC)? };
    let length = u32::try_from(segs.len()).map_err(|_| EINVAL)?;
    let data = if flags & SEND_INLINE != 0 {
        // Inline data is the consumer's to reuse once posted: copy it now.
        let mut bytes = KVec::from_elem(0u8, segs.len(), GFP_ATOMIC)?;
        segs.gather(0, segs.len(), &mut Fill::over(&mut bytes))?;
        SendData::Inline(bytes)
    } else {
        SendData::Kernel(segs)
    };
    let mut wqe = SendWqe::new(
        // SAFETY: `wr_id` and `wr_cqe` share the 8 bytes; either passes through.
        unsafe { w.__bindgen_anon_1.wr_id },
        opcode,
        flags,
        // SAFETY: Both members of the union are `u32`-sized.
        unsafe { w.ex.invalidate_rkey },
        length,
        data,
    );
    if ud {
        // SAFETY: A UD QP's requests are `ib_ud_wr`s.
        let u = unsafe { &*wr.cast::<bindings::ib_ud_wr>() };
        wqe.remote_qpn = u.remote_qpn;
        wqe.remote_qkey = u.remote_qkey;
        wqe.av = Some(av(u.ah).ok_or(EINVAL)?);
    } else {
        match opcode {
            WrOpcode::Write | WrOpcode::WriteImm | WrOpcode::Read => {
                // SAFETY: RDMA requests are `ib_rdma_wr`s.
                let r = unsafe { &*wr.cast::<bindings::ib_rdma_wr>() };
                wqe.remote_addr = r.remote_addr;
                wqe.rkey = r.rkey;
            }
            WrOpcode::RegMr => {
                // SAFETY: Registrations are `ib_reg_wr`s, naming a live MR.
                let r = unsafe { &*wr.cast::<bindings::ib_reg_wr>() };
                wqe.reg = Some(FastReg {
                    key: r.key,
                    access: r.access as u32,
                    // SAFETY: As above.
                    iova: unsafe { (*r.mr).iova },
                });
            }
            WrOpcode::CmpSwap | WrOpcode::FetchAdd => {
                // SAFETY: Atomic requests are `ib_atomic_wr`s.
                let a = unsafe { &*wr.cast::<bindings::ib_atomic_wr>() };
                wqe.remote_addr = a.remote_addr;
                wqe.rkey = a.rkey;
                wqe.compare_add = a.compare_add;
                wqe.swap = a.swap;
            }
            _ => {}
        }
    }
    Ok(wqe)
}

/// Reads one kernel receive work request.
///
/// # Safety
///
/// `wr` is a valid receive work request whose memory stays valid until it
/// completes.
pub(super) unsafe fn recv_wqe(wr: *const bindings::ib_recv_wr) -> Result<RecvWqe> {
    // SAFETY: Guaranteed by the caller.
    let w = unsafe { &*wr };
    Ok(RecvWqe {
        // SAFETY: As for sends.
        wr_id: unsafe { w.__bindgen_anon_1.wr_id },
        // SAFETY: Guaranteed by the caller.
        data: RecvData::Kernel(unsafe { KernelSegs::from_raw(w.sg_list, w.num_sge, GFP_ATOMIC)? }),
    })
}

/// Fills in the kernel's `struct ib_wc` from a kernel CQ's completion.
pub(super) fn write_wc(wc: &KernelWc, out: &mut bindings::ib_wc) {
    out.__bindgen_anon_1.wr_id = wc.wr_id;
    out.status = wc.status;
    out.opcode = wc.opcode;
    out.vendor_err = 0;
    out.byte_len = wc.byte_len;
    // The driver wrote the element from a `QpHandle`, which only the
    // adapter makes, from the `ib_qp` it was given.
    out.qp = wc.qp as usize as *mut bindings::ib_qp;
    out.ex.imm_data = wc.ex;
    out.src_qp = wc.src_qp;
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
