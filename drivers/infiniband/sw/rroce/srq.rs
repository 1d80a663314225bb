// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: receive requests that several QPs take from. A
//! process's SRQ is a ring; the kernel owns its consumer index, under the
//! SRQ's lock, and moves it when a QP takes a request, since another QP may
//! take the next. A kernel consumer's SRQ is a lock-free queue its posts go
//! onto from any context, which QPs take from under the same lock.

use crate::kernel_ext::{
    errno::eopnotsupp,
    rdma::{rxe_abi::CreateSrqResp, SrqAttr, SrqMask, SrqNotifier, UData, UserContext},
};
use crate::kernel_posts::PostList;
use crate::limits::{MAX_QP_WR, MAX_SGE};
use crate::proto::wqe::{slot_wr_id, RECV_WQE_SIZE, SGE_SIZE};
use crate::user_ring::UserRing;
use crate::work::RecvWqe;
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
        if let Requests::User { ring, .. } = &self.core.state.lock().requests {
            ring.withdraw();
        }
    }
}

/// What the QPs on an SRQ share.
#[pin_data]
pub(crate) struct SrqCore {
    /// A kernel consumer's posts, not yet taken; always empty for a user SRQ.
    posted: PostList<RecvWqe>,
    capacity: u32,
    max_sge: u32,
    #[pin]
    state: Mutex<SrqState>,
    notifier: Arc<SrqNotifier>,
}

struct SrqState {
    /// The limit event's threshold; 0 when disarmed.
    limit: u32,
    requests: Requests,
}

/// Where the requests come from.
enum Requests {
    /// A ring the process writes.
    User {
        ring: UserRing,
        /// The consumer index.
        head: u32,
        /// A copy of a ring element.
        scratch: KVec<u8>,
    },
    /// A kernel consumer's posts, in `posted`.
    Kernel,
}

impl Srq {
    /// An SRQ of at least `attr.max_wr` requests: for the process `user`, a
    /// ring described in the response; for a kernel consumer, a queue that
    /// [`Srq::post_kernel`] fills.
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
        let max_sge = attr.max_sge.max(1);
        let (requests, capacity) = match user {
            Some((uctx, udata)) => {
                let ring = UserRing::new(uctx, attr.max_wr, RECV_WQE_SIZE + max_sge * SGE_SIZE)?;
                let num = LAST_SRQ_NUM.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
                udata.respond(&CreateSrqResp::new(ring.mapping()?, num))?;
                let scratch = KVec::from_elem(0u8, ring.geometry().elem_size(), GFP_KERNEL)?;
                let capacity = ring.capacity();
                let requests = Requests::User {
                    ring,
                    head: 0,
                    scratch,
                };
                (requests, capacity)
            }
            None => (Requests::Kernel, attr.max_wr),
        };
        // Slots for a kernel consumer's posts; a process posts to its ring.
        let posted = PostList::new(match requests {
            Requests::Kernel => capacity,
            Requests::User { .. } => 0,
        })?;
        let actual = SrqAttr {
            max_wr: capacity,
            max_sge,
            limit: attr.limit,
        };
        let core = Arc::pin_init(
            try_pin_init!(SrqCore {
                posted,
                capacity,
                max_sge,
                state <- new_mutex!(SrqState {
                    limit: attr.limit,
                    requests,
                }),
                notifier,
            }),
            GFP_KERNEL,
        )?;
        Ok((Self { core }, actual))
    }

    /// Posts a kernel consumer's receive request; `ENOMEM` when full.
    /// Callable in any context.
    pub(crate) fn post_kernel(&self, wqe: RecvWqe) -> Result {
        self.core.posted.post(wqe)
    }

    /// Arms the limit event; resizing is not supported.
    pub(crate) fn modify(&self, attr: &SrqAttr, mask: SrqMask) -> Result {
        if mask.has(SrqMask::MAX_WR) {
            return Err(eopnotsupp());
        }
        if mask.has(SrqMask::LIMIT) {
            if attr.limit > self.core.capacity {
                return Err(EINVAL);
            }
            self.core.state.lock().limit = attr.limit;
        }
        Ok(())
    }

    /// The attributes.
    pub(crate) fn query(&self) -> SrqAttr {
        SrqAttr {
            max_wr: self.core.capacity,
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
            let (taken, left) = match &mut state.requests {
                Requests::User {
                    ring,
                    head,
                    scratch,
                } => {
                    let producer = ring.producer();
                    if *head == producer {
                        return Taken::Empty;
                    }
                    let taken = match ring.read(*head, scratch) {
                        Ok(()) => RecvWqe::from_slot(scratch, self.max_sge)
                            .map_or(Taken::Bad(slot_wr_id(scratch)), Taken::Wqe),
                        Err(_) => Taken::Bad(0),
                    };
                    let geometry = ring.geometry();
                    *head = geometry.next(*head);
                    ring.publish_consumer(*head);
                    (taken, geometry.count(producer, *head))
                }
                Requests::Kernel => {
                    let Some(wqe) = self.posted.take() else {
                        return Taken::Empty;
                    };
                    // Taken off the SRQ: room for another post.
                    self.posted.completed();
                    (Taken::Wqe(wqe), self.posted.outstanding())
                }
            };
            if state.limit != 0 && left < state.limit {
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
