// SPDX-License-Identifier: GPL-2.0

//! Completion queues: a ring of completions laid out as `struct
//! rxe_queue_buf`, in memory shared with the process so that rdma-core's rxe
//! provider polls it without a system call; or, for a kernel consumer, the
//! same ring in kernel memory, which `poll_cq` reads.
//!
//! The kernel is the ring's producer and keeps the producer index it writes;
//! the consumer index belongs to the process and is only ever read, masked.

use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{
        rxe_abi::{CreateCqResp, ResizeCqResp},
        CqAttr, CqNotifier, KernelWc, Qpn, UData, UserContext,
    },
};
use crate::limits::MAX_CQE;
use crate::proto::cqe::{KernelCqe, KERNEL_WC_SIZE, USER_WC_SIZE};
use crate::user_ring::UserRing;
use crate::work::Wc;
use core::sync::atomic::{fence, AtomicBool, AtomicU8, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// Whether and how a CQ signals its next completion. Ordered so that the
/// wider request wins when both are made (`fetch_max`), as in rxe: asked
/// for the next completion and for the next solicited one, the CQ signals
/// the next.
#[repr(u8)]
enum Arm {
    /// No notification requested.
    Idle = 0,
    /// Signal the next solicited completion.
    Solicited = 1,
    /// Signal the next completion.
    Next = 2,
}

/// A completion queue, as ib_core holds it.
pub(crate) struct Cq {
    core: Arc<CqCore>,
}

impl Drop for Cq {
    fn drop(&mut self) {
        // QPs may hold the core longer than its user context lives.
        if let Some(ring) = &self.core.state.lock().user_ring {
            ring.withdraw();
        }
    }
}

/// What the QPs that complete into a CQ share with it.
#[pin_data]
pub(crate) struct CqCore {
    /// A user CQ's ring, which a resize replaces, and the producer index the
    /// kernel owns; the lock orders the producers and a resize.
    #[pin]
    state: Mutex<CqState>,
    /// A kernel CQ's ring, which `poll_cq` reads without a lock, in any
    /// context; kernel CQs are never resized.
    kernel_ring: Option<UserRing>,
    /// An [`Arm`].
    arm: AtomicU8,
    /// A completion found the CQ full, and its owner was told.
    overflowed: AtomicBool,
    notifier: Arc<CqNotifier>,
}

struct CqState {
    user_ring: Option<UserRing>,
    producer: u32,
}

/// The CQ had no room for a completion.
#[derive(Debug)]
pub(crate) struct Overflow;

impl CqCore {
    /// The ring: the user's or the kernel's, whichever the CQ has.
    fn ring<'a>(&'a self, state: &'a CqState) -> Option<&'a UserRing> {
        state.user_ring.as_ref().or(self.kernel_ring.as_ref())
    }

    /// Whether its consumer has taken every completion.
    pub(crate) fn drained(&self) -> bool {
        let state = self.state.lock();
        match self.ring(&state) {
            Some(r) => r.geometry().is_empty(r.producer(), r.consumer()),
            None => true,
        }
    }
}

impl Cq {
    /// A CQ of at least `attr.cqe` completions, for the process `user`,
    /// whose ring the response describes, or for a kernel consumer; also
    /// returns how many completions it holds.
    pub(crate) fn new(
        attr: &CqAttr,
        notifier: Arc<CqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, u32)> {
        if attr.cqe == 0 || attr.cqe > MAX_CQE {
            return Err(EINVAL);
        }
        // Flags ask for what rroce does not do (timestamps, ignoring
        // overruns): not a bad argument, an unsupported one.
        if attr.flags != 0 {
            return Err(eopnotsupp());
        }
        let (user_ring, kernel_ring) = match user {
            Some((uctx, udata)) => {
                let ring = UserRing::new(uctx, attr.cqe, USER_WC_SIZE)?;
                udata.respond(&CreateCqResp::new(ring.mapping()?))?;
                (Some(ring), None)
            }
            None => (None, Some(UserRing::new_kernel(attr.cqe, KERNEL_WC_SIZE)?)),
        };
        let capacity = user_ring
            .as_ref()
            .or(kernel_ring.as_ref())
            .map_or(0, UserRing::capacity);
        let core = Arc::pin_init(
            try_pin_init!(CqCore {
                state <- new_mutex!(CqState {
                    user_ring,
                    producer: 0,
                }),
                kernel_ring,
                arm: AtomicU8::new(Arm::Idle as u8),
                overflowed: AtomicBool::new(false),
                notifier,
            }),
            GFP_KERNEL,
        )?;
        Ok((Self { core }, capacity))
    }

    /// Arms the CQ; the completion that fires it will disarm it. Returns
    /// whether completions are waiting already.
    pub(crate) fn request_notify(&self, solicited_only: bool) -> bool {
        let arm = if solicited_only {
            Arm::Solicited
        } else {
            Arm::Next
        };
        self.core.arm.fetch_max(arm as u8, Ordering::AcqRel);
        // Pairs with the fence in `push`: either the producer sees the CQ
        // armed, or this sees its completion and reports it missed.
        fence(Ordering::SeqCst);
        let waiting = |r: &UserRing| !r.geometry().is_empty(r.producer(), r.consumer());
        // A kernel consumer arms its CQ in any context, e.g. from softirq
        // (ib_core's IB_POLL_SOFTIRQ), where the state's mutex must not be
        // taken; its ring never changes, so none is needed.
        if let Some(ring) = self.core.kernel_ring.as_ref() {
            return waiting(ring);
        }
        let state = self.core.state.lock();
        self.core.ring(&state).is_some_and(waiting)
    }

    /// Hands up to `max` completions of a kernel CQ to `take`; returns how
    /// many. Never sleeps: the producer publishes its index with release
    /// ordering, and concurrent pollers claim each element with a
    /// compare-and-exchange.
    pub(crate) fn poll(&self, max: usize, mut take: impl FnMut(&KernelWc)) -> usize {
        let Some(ring) = self.core.kernel_ring.as_ref() else {
            return 0;
        };
        let mut element = [0u8; KERNEL_WC_SIZE as usize];
        let mut n = 0;
        while n < max {
            let consumer = ring.consumer();
            if consumer == ring.producer() {
                break;
            }
            if ring.read(consumer, &mut element).is_ok() && ring.claim(consumer) {
                take(&kernel_wc(KernelCqe::read(&element)));
                n += 1;
            }
        }
        n
    }

    /// Moves the completions to a new ring of at least `cqe`, which the
    /// response describes; `EINVAL` if they would not fit (IBA 11.2.6.4:
    /// resizing below the completions present fails and loses nothing).
    pub(crate) fn resize(&self, cqe: u32, uctx: &UserContext, udata: &UData<'_>) -> Result<u32> {
        if cqe == 0 || cqe > MAX_CQE {
            return Err(EINVAL);
        }
        let mut state = self.core.state.lock();
        let state = &mut *state;
        let old = state.user_ring.as_ref().ok_or_else(eopnotsupp)?;
        let geometry = old.geometry();
        let mut consumer = old.consumer();
        let pending = geometry.count(state.producer, consumer);
        if cqe < pending {
            return Err(EINVAL);
        }
        let ring = UserRing::new(uctx, cqe, USER_WC_SIZE)?;
        let mut producer = 0;
        let mut wc = [0u8; USER_WC_SIZE as usize];
        while consumer != state.producer {
            old.read(consumer, &mut wc)?;
            ring.write(producer, &wc)?;
            producer = ring.geometry().next(producer);
            consumer = geometry.next(consumer);
        }
        ring.publish_producer(producer);
        udata.respond(&ResizeCqResp::new(ring.mapping()?))?;
        let capacity = ring.capacity();
        *state = CqState {
            user_ring: Some(ring),
            producer,
        };
        Ok(capacity)
    }

    /// The part QPs hold on to.
    pub(crate) fn core(&self) -> Arc<CqCore> {
        self.core.clone()
    }
}

impl CqCore {
    /// Adds a completion and signals it if the CQ is armed for it. The
    /// first completion that finds the CQ full tells its owner (the IBA's
    /// CQ overrun); the QP it is for fails.
    pub(crate) fn push(&self, wc: &Wc, solicited: bool) -> Result<(), Overflow> {
        let room = {
            let mut state = self.state.lock();
            let producer = state.producer;
            let ring = self.ring(&state).ok_or(Overflow)?;
            let geometry = ring.geometry();
            let room = !geometry.is_full(producer, ring.consumer());
            if room {
                let written = if self.kernel_ring.is_some() {
                    ring.write(producer, &wc.to_kernel_bytes())
                } else {
                    ring.write(producer, &wc.to_bytes())
                };
                written.map_err(|_| Overflow)?;
                let next = geometry.next(producer);
                ring.publish_producer(next);
                state.producer = next;
            }
            room
        };
        if !room {
            if !self.overflowed.swap(true, Ordering::Relaxed) {
                self.notifier.overflowed();
            }
            return Err(Overflow);
        }
        // The completion is published; only then may the arm be read (a
        // store then a load, which even x86 reorders without a fence).
        fence(Ordering::SeqCst);
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

/// A kernel CQ's element as `ib_poll_cq` hands it on.
fn kernel_wc(e: KernelCqe) -> KernelWc {
    KernelWc {
        wr_id: e.wr_id,
        status: e.status,
        opcode: e.opcode,
        byte_len: e.byte_len,
        ex: e.ex,
        src_qp: Qpn::new(e.src_qp),
        flags: e.flags,
        qp: e.qp,
        ip_version: e.ip_version,
    }
}
