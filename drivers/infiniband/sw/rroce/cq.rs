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
        rxe_abi::{CreateCqResp, ResizeCqResp, Wc, USER_WC_SIZE},
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
    /// The ring and the producer index the kernel owns; the lock orders
    /// the producers, and a resize.
    #[pin]
    state: Mutex<CqState>,
    /// An [`Arm`].
    arm: AtomicU8,
    notifier: Arc<CqNotifier>,
}

struct CqState {
    ring: UserRing,
    producer: u32,
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
                state <- new_mutex!(CqState { ring, producer: 0 }),
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

    /// Moves the completions to a new ring of at least `cqe`, which the
    /// response describes; `EINVAL` if they would not fit.
    pub(crate) fn resize(&self, cqe: u32, uctx: &UserContext, udata: &UData<'_>) -> Result<u32> {
        if cqe == 0 || cqe > MAX_CQE {
            return Err(EINVAL);
        }
        let mut state = self.core.state.lock();
        let old = state.ring.geometry();
        let mut consumer = state.ring.consumer();
        let pending = old.count(state.producer, consumer);
        let ring = UserRing::new(uctx, cqe.max(pending), USER_WC_SIZE)?;
        let mut producer = 0;
        let mut wc = [0u8; USER_WC_SIZE as usize];
        while consumer != state.producer {
            state.ring.read(consumer, &mut wc)?;
            ring.write(producer, &wc)?;
            producer = ring.geometry().next(producer);
            consumer = old.next(consumer);
        }
        ring.publish_producer(producer);
        udata.respond(&ResizeCqResp::new(ring.mapping()))?;
        let capacity = ring.capacity();
        *state = CqState { ring, producer };
        Ok(capacity)
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
            let mut state = self.state.lock();
            let state = &mut *state;
            let geometry = state.ring.geometry();
            if geometry.is_full(state.producer, state.ring.consumer()) {
                return Err(Overflow);
            }
            state
                .ring
                .write(state.producer, &wc.to_bytes())
                .map_err(|_| Overflow)?;
            state.producer = geometry.next(state.producer);
            state.ring.publish_producer(state.producer);
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
