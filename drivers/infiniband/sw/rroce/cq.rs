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
        rxe_abi::{CreateCqResp, Wc, USER_WC_SIZE},
        CqAttr, CqNotifier, UData, UserContext,
    },
};
use crate::ring::UserRing;
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

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

/// A completion queue, as ib_core holds it.
pub(crate) struct Cq {
    core: Arc<CqCore>,
}

/// What the QPs that complete into a CQ share with it.
#[pin_data]
pub(crate) struct CqCore {
    ring: UserRing,
    /// The producer index the kernel owns; its lock orders the producers.
    #[pin]
    producer: Mutex<u32>,
    /// An [`Arm`].
    arm: AtomicU8,
    notifier: Arc<CqNotifier>,
}

/// The CQ had no room for a completion.
#[derive(Debug)]
pub(crate) struct Overflow;

impl Cq {
    /// A CQ of at least `attr.cqe` completions for the process `uctx`,
    /// whose ring is described in the response; also returns how many
    /// completions it holds.
    pub(crate) fn new(
        attr: &CqAttr,
        notifier: Arc<CqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, u32)> {
        if attr.cqe == 0 || attr.cqe > MAX_CQE || attr.flags != 0 {
            return Err(EINVAL);
        }
        // Kernel consumers come with the kernel verbs.
        let (uctx, udata) = user.ok_or_else(eopnotsupp)?;
        let ring = UserRing::new(uctx, attr.cqe, USER_WC_SIZE)?;
        udata.respond(&CreateCqResp::new(ring.mapping()))?;
        let capacity = ring.capacity();
        let core = Arc::pin_init(
            try_pin_init!(CqCore {
                ring,
                producer <- new_mutex!(0),
                arm: AtomicU8::new(Arm::Idle as u8),
                notifier,
            }),
            GFP_KERNEL,
        )?;
        Ok((Self { core }, capacity))
    }

    /// Arms the CQ; the completion that fires it will disarm it.
    pub(crate) fn request_notify(&self, solicited_only: bool) {
        let arm = if solicited_only {
            Arm::Solicited
        } else {
            Arm::Next
        };
        self.core.arm.fetch_max(arm as u8, Ordering::AcqRel);
    }

    /// The part QPs hold on to.
    pub(crate) fn core(&self) -> Arc<CqCore> {
        self.core.clone()
    }
}

impl CqCore {
    /// Adds a completion and signals it if the CQ is armed for it.
    pub(crate) fn push(&self, wc: &Wc, solicited: bool) -> Result<(), Overflow> {
        {
            let mut producer = self.producer.lock();
            let geometry = self.ring.geometry();
            if geometry.is_full(*producer, self.ring.consumer()) {
                return Err(Overflow);
            }
            self.ring
                .write(*producer, &wc.to_bytes())
                .map_err(|_| Overflow)?;
            *producer = geometry.next(*producer);
            self.ring.publish_producer(*producer);
        }
        let armed = self.arm.load(Ordering::Acquire);
        let fire = armed == Arm::Next as u8 || (armed == Arm::Solicited as u8 && solicited);
        if fire
            && self
                .arm
                .compare_exchange(armed, Arm::Idle as u8, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            self.notifier.notify();
        }
        Ok(())
    }
}
