// SPDX-License-Identifier: GPL-2.0

//! Work requests and completions as the driver handles them, whoever posted
//! them: a process through its rings, or a kernel consumer through
//! `ib_post_send` and `ib_post_recv`.
//!
//! The protocol core parses the rings' elements (`proto::wqe`) and lays out
//! completions (`proto::cqe`); what is here gives them owned data: a copy of
//! a ring element's SGEs or inline bytes, or a kernel consumer's memory.

use crate::kernel_ext::few::Few;
use crate::kernel_ext::rdma::{
    wr_opcode, Av, KernelOperands, KernelRecvWr, KernelSegs, KernelSendData, KernelSendWr, QpHandle,
};
use crate::proto::{
    cqe,
    wqe::{self, FastReg, Operands, RingData, Sge, UdDest, WrOpcode},
};
use kernel::prelude::*;

/// Where a send's data comes from.
pub(crate) enum SendData {
    /// Copied into the work request.
    Inline(KVec<u8>),
    /// Gathered from memory regions.
    Sges(Few<Sge, 1>),
    /// A kernel consumer's memory.
    Kernel(KernelSegs),
}

/// Where a receive's data goes.
pub(crate) enum RecvData {
    /// Into memory regions.
    Sges(Few<Sge, 1>),
    /// Into a kernel consumer's memory.
    Kernel(KernelSegs),
}

/// A send work request, checked to be self-consistent; keys and addresses
/// are checked on use.
pub(crate) type SendWqe = wqe::SendWqe<SendData, Av>;
/// A receive work request.
pub(crate) type RecvWqe = wqe::RecvWqe<RecvData>;
/// A completion, of a user or a kernel QP.
pub(crate) type Wc = cqe::Wc<QpHandle>;

fn copy_sges(sges: wqe::Sges<'_>) -> Option<Few<Sge, 1>> {
    let mut v = Few::with_capacity(sges.len(), GFP_KERNEL).ok()?;
    for sge in sges {
        v.push(sge, GFP_KERNEL).ok()?;
    }
    Some(v)
}

impl SendWqe {
    /// Parses and copies a snapshot of a send ring slot; `None` if it is
    /// malformed, asks for more than `max_sge` SGEs or `max_inline` inline
    /// bytes, or the copy cannot be allocated.
    pub(crate) fn from_slot(b: &[u8], max_sge: u32, max_inline: u32) -> Option<Self> {
        wqe::SendWqe::parse(b, max_sge, max_inline)?.try_map_data(|data| match data {
            RingData::Inline(bytes) => {
                let mut v = KVec::with_capacity(bytes.len(), GFP_KERNEL).ok()?;
                v.extend_from_slice(bytes, GFP_KERNEL).ok()?;
                Some(SendData::Inline(v))
            }
            RingData::Sges(sges) => copy_sges(sges).map(SendData::Sges),
        })
    }

    /// A kernel consumer's send; `EINVAL` for an operation the driver does
    /// not know or a message longer than a work request can say.
    pub(crate) fn from_kernel(wr: KernelSendWr) -> Result<Self> {
        // Fast registration is the kernel's alone: no ring element carries it.
        let opcode = if wr.opcode == wr_opcode::REG_MR {
            WrOpcode::RegMr
        } else {
            WrOpcode::from_raw(wr.opcode).ok_or(EINVAL)?
        };
        let length = u32::try_from(wr.data.len()).map_err(|_| EINVAL)?;
        let data = match wr.data {
            KernelSendData::Inline(bytes) => SendData::Inline(bytes),
            KernelSendData::Segs(segs) => SendData::Kernel(segs),
        };
        let mut wqe = Self::new(wr.wr_id, opcode, wr.flags, wr.ex, length, data);
        match wr.operands {
            KernelOperands::None => {}
            KernelOperands::Ud {
                av,
                remote_qpn,
                remote_qkey,
            } => {
                wqe.operands = Operands::Ud {
                    remote_qpn: remote_qpn.get(),
                    remote_qkey,
                    dest: UdDest::Av(av),
                };
            }
            KernelOperands::Rdma { remote_addr, rkey } => {
                wqe.remote_addr = remote_addr;
                wqe.rkey = rkey.get();
            }
            KernelOperands::Atomic {
                remote_addr,
                rkey,
                compare_add,
                swap,
            } => {
                wqe.remote_addr = remote_addr;
                wqe.rkey = rkey.get();
                wqe.operands = Operands::Atomic { compare_add, swap };
            }
            KernelOperands::RegMr { key, access, iova } => {
                wqe.operands = Operands::Reg(FastReg {
                    key: key.get(),
                    access,
                    iova,
                });
            }
        }
        Ok(wqe)
    }
}

impl RecvWqe {
    /// Parses and copies a snapshot of a receive ring slot; `None` if it is
    /// malformed, has more than `max_sge` SGEs, or the copy cannot be
    /// allocated.
    pub(crate) fn from_slot(b: &[u8], max_sge: u32) -> Option<Self> {
        let w = wqe::RecvWqe::parse(b, max_sge)?;
        Some(Self {
            wr_id: w.wr_id,
            data: RecvData::Sges(copy_sges(w.data)?),
        })
    }

    /// A kernel consumer's receive.
    pub(crate) fn from_kernel(wr: KernelRecvWr) -> Self {
        Self {
            wr_id: wr.wr_id,
            data: RecvData::Kernel(wr.segs),
        }
    }
}
