// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: one ring of receive requests that several QPs
//! take from. The kernel owns the consumer index, under the SRQ's lock, and
//! moves it when a QP takes a request, since another QP may take the next.

use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{rxe_abi::CreateSrqResp, RecvWqe, SrqAttr, SrqMask, SrqNotifier, UData, UserContext},
};
use crate::limits::{MAX_QP_WR, MAX_SGE};
use crate::proto::wqe::{slot_wr_id, RECV_WQE_SIZE, SGE_SIZE};
use crate::ring::UserRing;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// SRQ numbers, which the rxe provider only uses for XRC: a counter.
static LAST_SRQ_NUM: AtomicU32 = AtomicU32::new(0);

/// A shared receive queue, as ib_core holds it.
pub(crate) struct Srq {
    core: Arc<SrqCore>,
}

impl Drop for Srq {
    fn drop(&mut self) {
        // QPs may hold the core longer than its user context lives.
        self.core.ring.withdraw();
    }
}

/// What the QPs on an SRQ share.
#[pin_data]
pub(crate) struct SrqCore {
    ring: UserRing,
    max_sge: u32,
    #[pin]
    state: Mutex<SrqState>,
    notifier: Arc<SrqNotifier>,
}

struct SrqState {
    /// The consumer index.
    head: u32,
    /// The limit event's threshold; 0 when disarmed.
    limit: u32,
    /// A copy of a ring element.
    scratch: KVec<u8>,
}

impl Srq {
    /// An SRQ of at least `attr.max_wr` requests for the process `user`,
    /// whose ring is described in the response.
    pub(crate) fn create(
        attr: &SrqAttr,
        notifier: Arc<SrqNotifier>,
        user: Option<(&UserContext, &UData<'_>)>,
    ) -> Result<(Self, SrqAttr)> {
        if attr.max_wr == 0
            || attr.max_wr > MAX_QP_WR
            || attr.max_sge > MAX_SGE
            || attr.limit > attr.max_wr
        {
            return Err(EINVAL);
        }
        // Kernel consumers come with the kernel verbs.
        let (uctx, udata) = user.ok_or_else(eopnotsupp)?;
        let max_sge = attr.max_sge.max(1);
        let ring = UserRing::new(uctx, attr.max_wr, RECV_WQE_SIZE + max_sge * SGE_SIZE)?;
        let num = LAST_SRQ_NUM.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        udata.respond(&CreateSrqResp::new(ring.mapping()?, num))?;
        let actual = SrqAttr {
            max_wr: ring.capacity(),
            max_sge,
            limit: attr.limit,
        };
        let scratch = KVec::from_elem(0u8, ring.geometry().elem_size(), GFP_KERNEL)?;
        let core = Arc::pin_init(
            try_pin_init!(SrqCore {
                ring,
                max_sge,
                state <- new_mutex!(SrqState {
                    head: 0,
                    limit: attr.limit,
                    scratch,
                }),
                notifier,
            }),
            GFP_KERNEL,
        )?;
        Ok((Self { core }, actual))
    }

    /// Arms the limit event; resizing is not supported.
    pub(crate) fn modify(&self, attr: &SrqAttr, mask: SrqMask) -> Result {
        if mask.has(SrqMask::MAX_WR) {
            return Err(eopnotsupp());
        }
        if mask.has(SrqMask::LIMIT) {
            if attr.limit > self.core.ring.capacity() {
                return Err(EINVAL);
            }
            self.core.state.lock().limit = attr.limit;
        }
        Ok(())
    }

    /// The attributes.
    pub(crate) fn query(&self) -> SrqAttr {
        SrqAttr {
            max_wr: self.core.ring.capacity(),
            max_sge: self.core.max_sge,
            limit: self.core.state.lock().limit,
        }
    }

    /// The part QPs hold on to.
    pub(crate) fn core(&self) -> Arc<SrqCore> {
        self.core.clone()
    }
}

/// What taking a request from the SRQ found.
pub(crate) enum Taken {
    /// Nothing posted.
    Empty,
    /// A request that does not parse, and its `wr_id`.
    Bad(u64),
    Wqe(RecvWqe),
}

impl SrqCore {
    /// Takes the next receive request; raises the limit event if this
    /// leaves fewer than the limit.
    pub(crate) fn take(&self) -> Taken {
        let mut fire = false;
        let taken = {
            let mut state = self.state.lock();
            let state = &mut *state;
            let producer = self.ring.producer();
            if state.head == producer {
                return Taken::Empty;
            }
            let taken = match self.ring.read(state.head, &mut state.scratch) {
                Ok(()) => RecvWqe::from_slot(&state.scratch, self.max_sge)
                    .map_or(Taken::Bad(slot_wr_id(&state.scratch)), Taken::Wqe),
                Err(_) => Taken::Bad(0),
            };
            let geometry = self.ring.geometry();
            state.head = geometry.next(state.head);
            self.ring.publish_consumer(state.head);
            if state.limit != 0 && geometry.count(producer, state.head) < state.limit {
                state.limit = 0;
                fire = true;
            }
            taken
        };
        if fire {
            self.notifier.limit_reached();
        }
        taken
    }
}
