// SPDX-License-Identifier: GPL-2.0

//! What one device holds at most, in one place: `query_device` reports
//! these, and the object pools and the checks on each verb enforce them.
//! Documentation/user-guide.rst says why each has its value.

use crate::proto::psn::Psn;
use crate::proto::wqe::SGE_SIZE;

/// The only port, numbered from 1 as in IB.
pub(crate) const PORT: u32 = 1;
/// RoCE GIDs: one per IP address of the netdev and of its VLANs. Not the
/// C rxe's 1024: UCX, libfabric and `ibv_devinfo -v` read every entry, used
/// or not, each time they start, and ib_core makes three sysfs files of each.
pub(crate) const GID_TABLE_LEN: u32 = 64;
/// The longest message: 2 GiB, as IB allows.
pub(crate) const MAX_MSG_SIZE: u32 = 1 << 31;

/// QP numbers: 0 and 1 are the special QPs of IB, and numbers up to 15
/// stay free, as in the C rxe; the last is the C rxe's too. QPNs are 24
/// bits on the wire.
pub(crate) const FIRST_QPN: u32 = 16;
pub(crate) const LAST_QPN: u32 = (1 << 20) - 1;
/// The most QPs a device holds.
pub(crate) const MAX_QP: u32 = LAST_QPN - FIRST_QPN + 1;
/// The most work requests per queue, as the C rxe: a ring of 2 Mi slots.
pub(crate) const MAX_QP_WR: u32 = 1 << 20;
/// The most scatter/gather entries per work request, as the C rxe.
pub(crate) const MAX_SGE: u32 = 32;
/// The most pages a fast-registration MR maps, as the C rxe allows.
pub(crate) const MAX_FAST_REG_PAGES: u32 = 512;
/// The most inline data per send: the room of `MAX_SGE` entries.
pub(crate) const MAX_INLINE_DATA: u32 = MAX_SGE * SGE_SIZE;
/// The most RDMA READ and atomic requests in flight per QP, each way.
pub(crate) const MAX_RD_ATOMIC: u8 = 128;

/// Key indices: a key is an index in its top 20 bits (see `ids.rs`). MRs
/// have the lower half, less index 0 (key 0 is the local DMA lkey), memory
/// windows the upper half: as many of each as the C rxe allows, or one
/// more.
pub(crate) const FIRST_MR_INDEX: u32 = 1;
pub(crate) const LAST_MR_INDEX: u32 = (1 << 19) - 1;
pub(crate) const MAX_MR: u32 = LAST_MR_INDEX - FIRST_MR_INDEX + 1;
pub(crate) const FIRST_MW_INDEX: u32 = 1 << 19;
pub(crate) const LAST_MW_INDEX: u32 = (1 << 20) - 1;
pub(crate) const MAX_MW: u32 = LAST_MW_INDEX - FIRST_MW_INDEX + 1;

/// AH numbers; 0 means "none" to the rxe provider.
pub(crate) const MAX_AH: u32 = (1 << 16) - 1;
/// The most completions per CQ: a ring of 2^20 slots. libfabric's RDM
/// endpoints ask for 262,144 (the C rxe's 32,767 refuses them).
pub(crate) const MAX_CQE: u32 = (1 << 20) - 1;
/// The most CQs, PDs and SRQs the device reports, as the C rxe's 2^20.
pub(crate) const MAX_CQ: u32 = 1 << 20;
pub(crate) const MAX_PD: u32 = 1 << 20;
pub(crate) const MAX_SRQ: u32 = 1 << 20;

/// PSNs, QP numbers and the like are 24-bit fields on the wire.
pub(crate) const MAX_24BIT: u32 = Psn::MASK;

/// Multicast groups per device, and QPs per group (as the C rxe).
pub(crate) const MAX_MCAST_GRP: u32 = 8192;
pub(crate) const MAX_MCAST_QP_ATTACH: u32 = 56;
