// SPDX-License-Identifier: GPL-2.0

//! Work requests and completions of kernel consumers (ib_mad's QP1, ULPs):
//! what `ib_post_send`, `ib_post_recv` and `ib_poll_cq` pass, turned into
//! the same work request types the rings give, and back.
//!
//! Kernel consumers name their memory by the device's local DMA lkey, with
//! addresses that are kernel virtual addresses (ib_core's virtual DMA for
//! software devices), valid until the work request completes: the verbs
//! contract, which [`KernelSegs`] relies on.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use super::{
    rxe_abi::{u32_at, u64_at, RecvData, RecvWqe, SendData, SendWqe, Wc, WrOpcode, SEND_INLINE},
    Av,
};
use crate::bindings;
use kernel::{alloc::Flags, prelude::*};

/// The lkey of kernel memory: the device's `local_dma_lkey`.
pub(crate) const LOCAL_DMA_LKEY: u32 = 0;

/// Kernel memory a kernel work request names.
///
/// # Invariants
///
/// Each piece is valid kernel memory for its length until the work request
/// completes, which outlives this value's use by the driver.
pub(crate) struct KernelSegs {
    pieces: KVec<(usize, usize)>,
    len: usize,
}

// SAFETY: The memory belongs to the kernel consumer, which expects any
// thread of the device to access it until completion.
unsafe impl Send for KernelSegs {}
// SAFETY: As above; copies through `&self` only race on the consumer's data.
unsafe impl Sync for KernelSegs {}

impl KernelSegs {
    /// Takes the scatter/gather list of a kernel work request.
    ///
    /// # Safety
    ///
    /// `sges` points to `num` valid entries whose memory stays valid until
    /// the work request completes.
    unsafe fn from_raw(sges: *const bindings::ib_sge, num: i32, flags: Flags) -> Result<Self> {
        let num = usize::try_from(num).map_err(|_| EINVAL)?;
        let mut pieces = KVec::with_capacity(num, flags)?;
        let mut len = 0usize;
        for i in 0..num {
            // SAFETY: In bounds, by the caller's guarantee.
            let sge = unsafe { &*sges.add(i) };
            if sge.length == 0 {
                continue;
            }
            if sge.lkey != LOCAL_DMA_LKEY {
                // Kernel MRs (fast registration) are not supported.
                return Err(EINVAL);
            }
            len = len.checked_add(sge.length as usize).ok_or(EINVAL)?;
            pieces.push((sge.addr as usize, sge.length as usize), flags)?;
        }
        // INVARIANT: Guaranteed by the caller.
        Ok(Self { pieces, len })
    }

    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f` with each piece of `at..at + len`: its address and its
    /// range relative to `at`.
    fn walk(
        &self,
        at: usize,
        len: usize,
        mut f: impl FnMut(usize, core::ops::Range<usize>),
    ) -> Result {
        crate::kernel_ext::walk_pieces(
            &self.pieces,
            self.len,
            |p| p.1,
            at,
            len,
            |&(addr, _), skip, r| {
                f(addr + skip, r);
                Ok(())
            },
        )
        .ok_or(EFAULT)?
    }

    /// Copies bytes `at..at + dst.len()` of the memory into `dst`.
    pub(crate) fn gather(&self, at: usize, dst: &mut [u8]) -> Result {
        self.walk(at, dst.len(), |addr, r| {
            let d = &mut dst[r];
            // SAFETY: By the type invariant the piece is valid kernel memory,
            // and `walk` keeps inside it and inside `dst`.
            unsafe { core::ptr::copy_nonoverlapping(addr as *const u8, d.as_mut_ptr(), d.len()) }
        })
    }

    /// Copies `src` to bytes `at..at + src.len()` of the memory.
    pub(crate) fn scatter(&self, at: usize, src: &[u8]) -> Result {
        self.walk(at, src.len(), |addr, r| {
            let s = &src[r];
            // SAFETY: As in `gather`, writing; the consumer gave the memory
            // for the device to write.
            unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), addr as *mut u8, s.len()) }
        })
    }
}

/// Reads one kernel send work request; `av` gives a UD request's AH's
/// address vector.
///
/// # Safety
///
/// `wr` is a valid work request of the verbs contract, of its opcode's
/// type (`ib_rdma_wr`, `ib_atomic_wr`, `ib_ud_wr`), whose memory stays
/// valid until it completes; `ud` says whether the QP is UD or GSI.
pub(super) unsafe fn send_wqe(
    wr: *const bindings::ib_send_wr,
    ud: bool,
    av: impl FnOnce(*mut bindings::ib_ah) -> Option<Av>,
) -> Result<SendWqe> {
    // SAFETY: Guaranteed by the caller.
    let w = unsafe { &*wr };
    let opcode = WrOpcode::from_raw(w.opcode).ok_or(EINVAL)?;
    // Kernel consumers have no memory windows.
    if opcode == WrOpcode::BindMw {
        return Err(EINVAL);
    }
    let flags = w.send_flags as u32;
    // SAFETY: Guaranteed by the caller.
    let segs = unsafe { KernelSegs::from_raw(w.sg_list, w.num_sge, GFP_ATOMIC)? };
    let length = u32::try_from(segs.len()).map_err(|_| EINVAL)?;
    let data = if flags & SEND_INLINE != 0 {
        // Inline data is the consumer's to reuse once posted: copy it now.
        let mut bytes = KVec::from_elem(0u8, segs.len(), GFP_ATOMIC)?;
        segs.gather(0, &mut bytes)?;
        SendData::Inline(bytes)
    } else {
        SendData::Kernel(segs)
    };
    let mut wqe = SendWqe {
        // SAFETY: `wr_id` and `wr_cqe` share the 8 bytes; either passes through.
        wr_id: unsafe { w.__bindgen_anon_1.wr_id },
        opcode,
        flags,
        // SAFETY: Both members of the union are `u32`-sized.
        ex: unsafe { w.ex.invalidate_rkey },
        remote_addr: 0,
        rkey: 0,
        compare_add: 0,
        swap: 0,
        remote_qpn: 0,
        remote_qkey: 0,
        ah_num: 0,
        av: None,
        mw: None,
        length,
        data,
    };
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

/// The `ib_qp` of a kernel QP, opaque to the driver, which hands it back
/// in completions (0 for user QPs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpHandle(pub(super) usize);

/// The bytes of a kernel CQ's ring element: the user format, then the
/// QP handle and IP version.
pub(crate) const KERNEL_WC_SIZE: u32 = 64;
const QP_AT: usize = 48;
const IP_VERSION_AT: usize = 56;

impl Wc {
    /// The bytes of a kernel CQ's ring element.
    pub(crate) fn to_kernel_bytes(self) -> [u8; KERNEL_WC_SIZE as usize] {
        let mut b = [0u8; KERNEL_WC_SIZE as usize];
        let user = self.to_bytes();
        b[..user.len()].copy_from_slice(&user);
        b[QP_AT..QP_AT + 8].copy_from_slice(&(self.qp.0 as u64).to_ne_bytes());
        b[IP_VERSION_AT] = self.ip_version;
        b
    }

    /// Fills in the kernel's `struct ib_wc` from a kernel CQ's ring element.
    pub(super) fn write_kernel(b: &[u8; KERNEL_WC_SIZE as usize], out: &mut bindings::ib_wc) {
        type W = bindings::ib_uverbs_wc;
        use core::mem::offset_of;
        let u32_at = |at| u32_at(b, at);
        let u64_at = |at| u64_at(b, at);
        out.__bindgen_anon_1.wr_id = u64_at(offset_of!(W, wr_id));
        out.status = u32_at(offset_of!(W, status));
        out.opcode = u32_at(offset_of!(W, opcode));
        out.vendor_err = 0;
        out.byte_len = u32_at(offset_of!(W, byte_len));
        out.qp = u64_at(QP_AT) as usize as *mut bindings::ib_qp;
        out.ex.imm_data = u32_at(offset_of!(W, ex));
        out.src_qp = u32_at(offset_of!(W, src_qp));
        out.slid = 0;
        let mut flags = u32_at(offset_of!(W, wc_flags));
        match b[IP_VERSION_AT] {
            4 => out.network_hdr_type = bindings::rdma_network_type_RDMA_NETWORK_IPV4 as _,
            6 => out.network_hdr_type = bindings::rdma_network_type_RDMA_NETWORK_IPV6 as _,
            _ => {}
        }
        if b[IP_VERSION_AT] != 0 {
            flags |= bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
        }
        out.wc_flags = flags as _;
        out.pkey_index = 0;
        out.sl = 0;
        out.dlid_path_bits = 0;
        out.port_num = 1;
    }
}
