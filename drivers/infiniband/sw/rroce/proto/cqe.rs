// SPDX-License-Identifier: GPL-2.0

//! Completions: the elements of a CQ ring.
//!
//! A user CQ's ring holds `struct ib_uverbs_wc`, which rdma-core's rxe
//! provider copies out as it is. A kernel CQ's ring, which only the kernel
//! sees, holds the same bytes followed by what `struct ib_wc` needs and the
//! user format lacks: the QP, and the IP version of a UD receive's GRH.
//!
//! ```text
//! struct ib_uverbs_wc (48 bytes)
//!   0 wr_id  8 status  12 opcode  20 byte_len  24 ex  28 qp_num  32 src_qp
//!  36 wc_flags  44 sl  46 port_num
//! kernel element (64 bytes): the above, then 48 QP handle  56 IP version
//! ```
//!
//! The driver checks the user offsets and the values below against
//! bindgen's at compile time.

use super::wqe::{ne_u32, ne_u64, WrOpcode};

/// `struct ib_uverbs_wc`: a user CQ's element, as the provider copies it.
pub(crate) const USER_WC_SIZE: u32 = 48;
/// A kernel CQ's element.
pub(crate) const KERNEL_WC_SIZE: u32 = 64;
const USER: usize = USER_WC_SIZE as usize;
const KERNEL: usize = KERNEL_WC_SIZE as usize;

/// Offsets in `struct ib_uverbs_wc`.
pub(crate) mod user {
    /// `wr_id`.
    pub(crate) const WR_ID: usize = 0;
    /// `status`.
    pub(crate) const STATUS: usize = 8;
    /// `opcode`.
    pub(crate) const OPCODE: usize = 12;
    /// `byte_len`.
    pub(crate) const BYTE_LEN: usize = 20;
    /// `ex`: immediate data or the invalidated rkey.
    pub(crate) const EX: usize = 24;
    /// `qp_num`.
    pub(crate) const QP_NUM: usize = 28;
    /// `src_qp`.
    pub(crate) const SRC_QP: usize = 32;
    /// `wc_flags`.
    pub(crate) const WC_FLAGS: usize = 36;
    /// `sl`.
    pub(crate) const SL: usize = 44;
    /// `port_num`.
    pub(crate) const PORT_NUM: usize = 46;
}

/// Where a kernel element keeps the QP handle and the IP version.
const KERNEL_QP: usize = 48;
const KERNEL_IP_VERSION: usize = 56;

/// A completion's opcode (`enum ib_wc_opcode`, the `IB_UVERBS_WC_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WcOpcode {
    Send = 0,
    Write = 1,
    Read = 2,
    CmpSwap = 3,
    FetchAdd = 4,
    BindMw = 5,
    LocalInv = 6,
    Flush = 8,
    AtomicWrite = 9,
    RegMr = 10,
    Recv = 1 << 7,
    RecvWriteImm = (1 << 7) + 1,
}

impl From<WrOpcode> for WcOpcode {
    /// The completion opcode the sender of a request sees.
    fn from(op: WrOpcode) -> Self {
        match op {
            WrOpcode::Write | WrOpcode::WriteImm => Self::Write,
            WrOpcode::Send | WrOpcode::SendImm | WrOpcode::SendInv => Self::Send,
            WrOpcode::Read => Self::Read,
            WrOpcode::CmpSwap => Self::CmpSwap,
            WrOpcode::FetchAdd => Self::FetchAdd,
            WrOpcode::LocalInv => Self::LocalInv,
            WrOpcode::BindMw => Self::BindMw,
            WrOpcode::Flush => Self::Flush,
            WrOpcode::AtomicWrite => Self::AtomicWrite,
            WrOpcode::RegMr => Self::RegMr,
        }
    }
}

/// A completion's status (`enum ib_wc_status`), those rroce reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum WcStatus {
    Success = 0,
    LocLenErr = 1,
    LocQpOpErr = 2,
    LocProtErr = 4,
    WrFlushErr = 5,
    MwBindErr = 6,
    BadRespErr = 7,
    RemInvReqErr = 9,
    RemAccessErr = 10,
    RemOpErr = 11,
    RetryExcErr = 12,
    RnrRetryExcErr = 13,
}

/// `IB_WC_*` flags of a completion: it carries a GRH (UD receives).
pub(crate) const WC_GRH: u32 = 1 << 0;
/// It carries immediate data.
pub(crate) const WC_WITH_IMM: u32 = 1 << 1;
/// It carries the rkey a SEND with Invalidate invalidated.
pub(crate) const WC_WITH_INVALIDATE: u32 = 1 << 2;

/// libibverbs' `IBV_WC_WITH_INV`, which the provider hands on from the ring
/// unchanged. It is not the kernel's `IB_WC_WITH_INVALIDATE` (bit 2 is
/// `IBV_WC_IP_CSUM_OK` there), and no uapi header names it.
const USER_WC_WITH_INV: u32 = 1 << 3;

/// The `sl` of a UD receive in a user ring: the RoCE v2 packet's L3 header
/// type, as Mellanox NICs report it there (1 IPv6, 2 IPv4), since the
/// verbs' `struct ibv_wc` has no other field for the flag IBTA Annex A17
/// (A17.4.5.1) puts in a UD completion. UCX up to 1.18 reads it to find the
/// destination GID in the GRH area: without it, it drops every packet of an
/// IPv4 GID. RoCE has no SL on the wire, so nothing else is lost.
fn user_sl(flags: u32, ip_version: u8) -> u8 {
    match ip_version {
        4 if flags & WC_GRH != 0 => 2,
        6 if flags & WC_GRH != 0 => 1,
        _ => 0,
    }
}

/// The flags of a completion as a process reads them.
fn user_wc_flags(flags: u32) -> u32 {
    let same = flags & (WC_GRH | WC_WITH_IMM);
    if flags & WC_WITH_INVALIDATE != 0 {
        same | USER_WC_WITH_INV
    } else {
        same
    }
}

/// A completion. `Q` names the QP of a kernel consumer's completion, in a
/// form only the kernel side can make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wc<Q> {
    pub(crate) wr_id: u64,
    pub(crate) status: WcStatus,
    pub(crate) opcode: WcOpcode,
    pub(crate) byte_len: u32,
    /// Immediate data as on the wire, or the invalidated rkey.
    pub(crate) ex: u32,
    pub(crate) qp_num: u32,
    pub(crate) src_qp: u32,
    /// `WC_*`.
    pub(crate) flags: u32,
    /// Kernel CQs: the QP, and for a UD receive the IP version of its GRH.
    pub(crate) qp: Q,
    pub(crate) ip_version: u8,
}

impl<Q> Wc<Q> {
    /// The bytes of the `struct ib_uverbs_wc`.
    pub(crate) fn to_bytes(&self) -> [u8; USER] {
        let mut b = [0u8; USER];
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(user::WR_ID, &self.wr_id.to_ne_bytes());
        put(user::STATUS, &(self.status as u32).to_ne_bytes());
        put(user::OPCODE, &(self.opcode as u32).to_ne_bytes());
        put(user::BYTE_LEN, &self.byte_len.to_ne_bytes());
        put(user::EX, &self.ex.to_ne_bytes());
        put(user::QP_NUM, &self.qp_num.to_ne_bytes());
        put(user::SRC_QP, &self.src_qp.to_ne_bytes());
        put(user::WC_FLAGS, &user_wc_flags(self.flags).to_ne_bytes());
        put(user::SL, &[user_sl(self.flags, self.ip_version)]);
        put(user::PORT_NUM, &[1]);
        b
    }

    /// The bytes of a kernel CQ's element.
    pub(crate) fn to_kernel_bytes(self) -> [u8; KERNEL]
    where
        Q: Copy + Into<u64>,
    {
        let mut b = [0u8; KERNEL];
        b[..USER].copy_from_slice(&self.to_bytes());
        b[KERNEL_QP..KERNEL_QP + 8].copy_from_slice(&self.qp.into().to_ne_bytes());
        b[KERNEL_IP_VERSION] = self.ip_version;
        b
    }
}

/// A kernel CQ's element read back: the fields `struct ib_wc` takes, as
/// numbers. The kernel wrote the element, so it is not parsed with
/// suspicion; only the kernel side turns `qp` back into a QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct KernelCqe {
    pub(crate) wr_id: u64,
    pub(crate) status: u32,
    pub(crate) opcode: u32,
    pub(crate) byte_len: u32,
    pub(crate) ex: u32,
    pub(crate) src_qp: u32,
    /// `WC_*`, as the kernel has them.
    pub(crate) flags: u32,
    pub(crate) qp: u64,
    /// 4 or 6 for a UD receive, else 0.
    pub(crate) ip_version: u8,
}

impl KernelCqe {
    /// Reads a kernel CQ's element. Its flags are in the user format, whose
    /// invalidate bit is another than the kernel's: that one is put back.
    pub(crate) fn read(b: &[u8; KERNEL]) -> Self {
        let flags = ne_u32(b, user::WC_FLAGS);
        Self {
            wr_id: ne_u64(b, user::WR_ID),
            status: ne_u32(b, user::STATUS),
            opcode: ne_u32(b, user::OPCODE),
            byte_len: ne_u32(b, user::BYTE_LEN),
            ex: ne_u32(b, user::EX),
            src_qp: ne_u32(b, user::SRC_QP),
            flags: if flags & USER_WC_WITH_INV != 0 {
                flags & !USER_WC_WITH_INV | WC_WITH_INVALIDATE
            } else {
                flags
            },
            qp: ne_u64(b, KERNEL_QP),
            ip_version: b[KERNEL_IP_VERSION],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wc(flags: u32) -> Wc<u64> {
        Wc {
            wr_id: 7,
            status: WcStatus::RemAccessErr,
            opcode: WcOpcode::RecvWriteImm,
            byte_len: 4096,
            ex: 0xaabb_ccdd,
            qp_num: 17,
            src_qp: 18,
            flags,
            qp: 0xffff_8880_1234_5678,
            ip_version: 6,
        }
    }

    #[test]
    fn user_element_has_the_uverbs_layout() {
        let b = wc(WC_WITH_IMM).to_bytes();
        assert_eq!(ne_u64(&b, user::WR_ID), 7);
        assert_eq!(ne_u32(&b, user::STATUS), 10);
        assert_eq!(ne_u32(&b, user::OPCODE), 129);
        assert_eq!(ne_u32(&b, user::BYTE_LEN), 4096);
        assert_eq!(ne_u32(&b, user::EX), 0xaabb_ccdd);
        assert_eq!(ne_u32(&b, user::QP_NUM), 17);
        assert_eq!(ne_u32(&b, user::SRC_QP), 18);
        assert_eq!(ne_u32(&b, user::WC_FLAGS), WC_WITH_IMM);
        assert_eq!(b[user::PORT_NUM], 1);
    }

    #[test]
    fn invalidate_flag_is_the_user_bit_in_user_rings_only() {
        let user = wc(WC_WITH_INVALIDATE | WC_GRH).to_bytes();
        assert_eq!(ne_u32(&user, user::WC_FLAGS), USER_WC_WITH_INV | WC_GRH);
        let kernel = KernelCqe::read(&wc(WC_WITH_INVALIDATE | WC_GRH).to_kernel_bytes());
        assert_eq!(kernel.flags, WC_WITH_INVALIDATE | WC_GRH);
    }

    #[test]
    fn ud_receives_tell_the_ip_version_in_sl() {
        let ud = |ip_version| {
            Wc {
                ip_version,
                ..wc(WC_GRH)
            }
            .to_bytes()[user::SL]
        };
        assert_eq!(ud(4), 2);
        assert_eq!(ud(6), 1);
        assert_eq!(wc(WC_WITH_IMM).to_bytes()[user::SL], 0);
    }

    #[test]
    fn requests_complete_with_their_kind() {
        assert_eq!(WcOpcode::from(WrOpcode::SendInv), WcOpcode::Send);
        assert_eq!(WcOpcode::from(WrOpcode::WriteImm), WcOpcode::Write);
        assert_eq!(WcOpcode::from(WrOpcode::BindMw), WcOpcode::BindMw);
        assert_eq!(WcOpcode::from(WrOpcode::RegMr), WcOpcode::RegMr);
    }

    #[test]
    fn kernel_element_reads_back() {
        let w = wc(WC_WITH_IMM);
        let k = KernelCqe::read(&w.to_kernel_bytes());
        let want = KernelCqe {
            wr_id: 7,
            status: 10,
            opcode: 129,
            byte_len: 4096,
            ex: 0xaabb_ccdd,
            src_qp: 18,
            flags: WC_WITH_IMM,
            qp: 0xffff_8880_1234_5678,
            ip_version: 6,
        };
        assert_eq!(k, want);
    }
}
