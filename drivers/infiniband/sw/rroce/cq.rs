// SPDX-License-Identifier: GPL-2.0

//! Completion queues: a ring of completions in memory shared with the
//! process, laid out as `struct rxe_queue_buf` so that rdma-core's rxe
//! provider polls it without a system call.
//!
//! The kernel is the ring's producer and keeps the producer index it writes;
//! the consumer index belongs to the process and is only ever read, masked.

use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{
        rxe_abi::{CreateCqResp, USER_WC_SIZE},
        CqAttr, UData, UserContext,
    },
};
use crate::ring::UserRing;
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::prelude::*;

/// The most completions a CQ holds, as the C rxe: 2^15 - 1, a 2 MiB ring.
pub(crate) const MAX_CQE: u32 = (1 << 15) - 1;

/// Whether and how a CQ signals its next completion.
#[repr(u8)]
enum Arm {
    /// No notification requested.
    Idle = 0,
    /// Signal the next completion.
    Next = 1,
    /// Signal the next solicited completion.
    Solicited = 2,
}

/// A completion queue.
pub(crate) struct Cq {
    /// The ring, which the data path will fill.
    _ring: UserRing,
    /// An [`Arm`].
    arm: AtomicU8,
}

impl Cq {
    /// A CQ of at least `attr.cqe` completions for the process `uctx`,
    /// whose ring is described in the response; also returns how many
    /// completions it holds.
    pub(crate) fn new(
        attr: &CqAttr,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, u32)> {
        if attr.cqe == 0 || attr.cqe > MAX_CQE || attr.flags != 0 {
            return Err(EINVAL);
        }
        // Kernel consumers come with the kernel verbs of the data path.
        let (uctx, udata) = user.ok_or_else(eopnotsupp)?;
        let ring = UserRing::new(uctx, attr.cqe, USER_WC_SIZE)?;
        udata.respond(&CreateCqResp::new(ring.mapping()))?;
        let capacity = ring.capacity();
        let cq = Self {
            _ring: ring,
            arm: AtomicU8::new(Arm::Idle as u8),
        };
        Ok((cq, capacity))
    }

    /// Arms the CQ; the completion that fires it will disarm it.
    pub(crate) fn request_notify(&self, solicited_only: bool) {
        let arm = if solicited_only {
            Arm::Solicited
        } else {
            Arm::Next
        };
        self.arm.fetch_max(arm as u8, Ordering::AcqRel);
    }
}
