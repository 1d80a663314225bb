// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the life of the registration and
//! named by keys that are unique among live MRs and hard to guess.
//!
//! A key is an MR index in its top 16 bits, so the data path finds the MR in
//! one step, and 16 random bits below it, so that a peer cannot name an MR
//! it was not told about by counting, nor a new MR by an old key. MRs have
//! the lower half of the indices, memory windows (`mw.rs`) the upper half.

use crate::index::{PdNum, Pool};
use crate::kernel_ext::{
    errno::eopnotsupp,
    random_u32,
    rdma::{Access, AtomicOp, Device, Driver, MrKeys, Umem, UserRegion, LOCAL_DMA_LKEY},
};
use crate::limits::{FIRST_MR_INDEX, LAST_MR_INDEX};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{prelude::*, sync::Arc};

const INDEX_SHIFT: u32 = 16;

/// The index part of a key, which names the MR or memory window.
pub(crate) fn key_index(key: u32) -> u32 {
    key >> INDEX_SHIFT
}

/// A key with `index` in its top bits and `low` below.
pub(crate) fn make_key(index: u32, low: u32) -> u32 {
    (index << INDEX_SHIFT) | (low & ((1 << INDEX_SHIFT) - 1))
}

/// In `MrCore::windows`: the MR is deregistered, no window may be bound.
const DEREGISTERED: u32 = 1 << 31;

/// The access rights rroce implements.
const SUPPORTED_ACCESS: Access = Access::LOCAL_WRITE
    .with(Access::REMOTE_WRITE)
    .with(Access::REMOTE_READ)
    .with(Access::REMOTE_ATOMIC)
    .with(Access::MW_BIND)
    .with(Access::OPTIONAL);

/// The MRs of a device, by key index: 0 is never used, as key 0 is the
/// local DMA lkey.
pub(crate) fn new_pool() -> impl PinInit<Pool<MrCore>, Error> {
    Pool::new(FIRST_MR_INDEX, LAST_MR_INDEX)
}

/// A registered memory region, as ib_core holds it; none for the DMA MR of
/// kernel consumers, whose key is the device's local DMA lkey.
pub(crate) struct Mr {
    core: Option<Arc<MrCore>>,
}

/// What the data path uses of an MR. Work requests in flight hold it, so
/// its pages stay pinned until they are done even if it is deregistered.
pub(crate) struct MrCore {
    umem: Umem,
    /// The address work requests and peers name the first byte by.
    iova: u64,
    /// The access rights and PD, which a reregistration may change.
    access: AtomicU32,
    key: u32,
    pd: AtomicU32,
    /// Whether the pages were pinned writable.
    writable: bool,
    /// The memory windows bound to it, or `DEREGISTERED`.
    windows: AtomicU32,
}

/// Why a key and range were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrError {
    /// No MR has this key in this PD.
    Key,
    /// The MR does not grant the access.
    Access,
    /// The range is not inside the MR, or an atomic is not aligned.
    Range,
}

impl Mr {
    /// Pins the user memory of `region` for `dev` and gives it keys, among
    /// the MRs `mrs`.
    pub(crate) fn register<T: Driver>(
        dev: &Device<T>,
        mrs: &Pool<MrCore>,
        pd: PdNum,
        region: &UserRegion,
    ) -> Result<(Self, MrKeys)> {
        if !SUPPORTED_ACCESS.contains(region.access) {
            return Err(eopnotsupp());
        }
        if region.length == 0 {
            return Err(EINVAL);
        }
        let umem = Umem::pin(dev, region.start, region.length, region.access)?;
        let (_, core) = mrs.add(|index| {
            let core = MrCore {
                umem,
                iova: region.iova,
                access: AtomicU32::new(region.access.bits()),
                key: make_key(index, random_u32()),
                pd: AtomicU32::new(pd.get()),
                writable: region.access.is_writable(),
                windows: AtomicU32::new(0),
            };
            Ok(Arc::new(core, GFP_KERNEL)?)
        })?;
        let key = core.key;
        let keys = MrKeys {
            lkey: key,
            rkey: key,
        };
        Ok((Self { core: Some(core) }, keys))
    }

    /// The DMA MR of a kernel consumer: local rights only, as the kernel's
    /// own memory must never be open to peers.
    pub(crate) fn dma(access: Access) -> Result<(Self, MrKeys)> {
        if !Access::LOCAL_WRITE.contains(access) {
            return Err(eopnotsupp());
        }
        let keys = MrKeys {
            lkey: LOCAL_DMA_LKEY,
            rkey: LOCAL_DMA_LKEY,
        };
        Ok((Self { core: None }, keys))
    }

    /// Moves the MR to PD `pd` or gives it `access`, in place. Write rights
    /// for pages that were pinned read-only need new pages: `EOPNOTSUPP`.
    pub(crate) fn rereg(&self, pd: Option<PdNum>, access: Option<Access>) -> Result {
        let core = self.core.as_ref().ok_or_else(eopnotsupp)?;
        if let Some(access) = access {
            if !SUPPORTED_ACCESS.contains(access) {
                return Err(eopnotsupp());
            }
            if access.is_writable() && !core.writable {
                return Err(eopnotsupp());
            }
            core.access.store(access.bits(), Ordering::Release);
        }
        if let Some(pd) = pd {
            // Its windows belong to the old PD.
            if pd != core.pd() && core.windows.load(Ordering::Acquire) != 0 {
                return Err(EBUSY);
            }
            core.pd.store(pd.get(), Ordering::Release);
        }
        Ok(())
    }

    /// Withdraws the keys; the pages are unpinned once the last work
    /// request using them is done. `EBUSY` while memory windows are bound
    /// to it (IBA 10.6.7.2.6).
    pub(crate) fn deregister(&self, mrs: &Pool<MrCore>) -> Result {
        let Some(core) = &self.core else {
            return Ok(());
        };
        core.windows
            .compare_exchange(0, DEREGISTERED, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| EBUSY)?;
        mrs.remove(key_index(core.key));
        Ok(())
    }
}

/// Finds the MR `key` names among `mrs`, in PD `pd`.
pub(crate) fn find(mrs: &Pool<MrCore>, key: u32, pd: PdNum) -> Result<Arc<MrCore>, MrError> {
    mrs.get(key_index(key))
        .filter(|mr| mr.key == key && mr.pd() == pd)
        .ok_or(MrError::Key)
}

/// Finds the MR `key` names in PD `pd` and checks that it grants `access`
/// to `len` bytes at `va`; returns it with the offset of `va` in it.
pub(crate) fn lookup(
    mrs: &Pool<MrCore>,
    key: u32,
    pd: PdNum,
    access: Access,
    va: u64,
    len: u64,
) -> Result<(Arc<MrCore>, usize), MrError> {
    let mr = find(mrs, key, pd)?;
    if !mr.access().contains(access) {
        return Err(MrError::Access);
    }
    let offset = mr.offset_of(va, len).ok_or(MrError::Range)?;
    Ok((mr, offset))
}

impl MrCore {
    /// The rights it grants now.
    pub(crate) fn access(&self) -> Access {
        Access::from_bits(self.access.load(Ordering::Acquire))
    }

    /// The PD it belongs to now.
    pub(crate) fn pd(&self) -> PdNum {
        PdNum::new(self.pd.load(Ordering::Acquire))
    }

    /// The offset of the `len` bytes at `va`, if they are all in the MR.
    pub(crate) fn offset_of(&self, va: u64, len: u64) -> Option<usize> {
        let offset = va.checked_sub(self.iova)?;
        (offset.checked_add(len)? <= self.umem.len() as u64).then_some(offset as usize)
    }

    /// Counts a window bound to it; `false` once it is deregistered.
    pub(crate) fn hold_window(&self) -> bool {
        self.windows
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n & DEREGISTERED == 0).then_some(n + 1)
            })
            .is_ok()
    }

    /// A window bound to it is gone.
    pub(crate) fn release_window(&self) {
        self.windows.fetch_sub(1, Ordering::AcqRel);
    }

    /// Copies `src` to `offset`, which `lookup` checked.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result<(), MrError> {
        self.umem.write(offset, src).map_err(|_| MrError::Range)
    }

    /// Copies from `offset`, which `lookup` checked, into `dst`.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), MrError> {
        self.umem.read(offset, dst).map_err(|_| MrError::Range)
    }

    /// Runs an atomic on the 8 bytes at `offset`; returns the old value.
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64, MrError> {
        self.umem.atomic(offset, op).map_err(|_| MrError::Range)
    }
}
