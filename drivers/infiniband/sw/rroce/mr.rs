// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the life of the registration and
//! named by keys that are unique among live MRs and hard to guess.
//!
//! A key is an MR index in its top 16 bits, so the data path finds the MR in
//! one step, and 16 random bits below it, so that a peer cannot name an MR
//! it was not told about by counting, nor a new MR by an old key.

use crate::device::RroceDevice;
use crate::index::IndexTable;
use crate::kernel_ext::{
    errno::eopnotsupp,
    random_u32,
    rdma::{Access, Device, MrKeys, Umem, UserRegion},
};
use kernel::prelude::*;

/// The most MRs a device holds: the index part of a key, less index 0.
pub(crate) const MAX_MR: u32 = (1 << 16) - 1;
const INDEX_SHIFT: u32 = 16;

/// The access rights rroce implements (or will with the data path).
const SUPPORTED_ACCESS: Access = Access::LOCAL_WRITE
    .with(Access::REMOTE_WRITE)
    .with(Access::REMOTE_READ)
    .with(Access::REMOTE_ATOMIC)
    .with(Access::OPTIONAL);

/// The table of MR indices: 0 is never used, as key 0 is the local DMA lkey.
pub(crate) fn new_table() -> impl PinInit<IndexTable, Error> {
    IndexTable::new(1, MAX_MR)
}

/// A registered memory region.
pub(crate) struct Mr {
    /// The pinned pages, which the data path will copy to and from.
    _umem: Umem,
    index: u32,
}

impl Mr {
    /// Pins the user memory of `region` and gives it keys.
    pub(crate) fn register(
        dev: &Device<RroceDevice>,
        region: &UserRegion,
    ) -> Result<(Self, MrKeys)> {
        if !SUPPORTED_ACCESS.contains(region.access) {
            return Err(eopnotsupp());
        }
        if region.length == 0 {
            return Err(EINVAL);
        }
        let umem = Umem::pin(dev, region.start, region.length, region.access)?;
        let index = dev.data().mrs().alloc()?;
        let key = (index << INDEX_SHIFT) | (random_u32() >> INDEX_SHIFT);
        let keys = MrKeys {
            lkey: key,
            rkey: key,
        };
        Ok((Self { _umem: umem, index }, keys))
    }

    /// Gives the MR's index back; dropping it unpins the memory.
    pub(crate) fn deregister(self, dev: &Device<RroceDevice>) {
        dev.data().mrs().free(self.index);
    }
}
