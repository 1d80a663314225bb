// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the life of the registration and
//! named by keys that are unique among live MRs and hard to guess; and the
//! fast-registration MRs of kernel consumers, whose memory, key and rights
//! a work request sets (`IB_WR_REG_MR`) and another takes back
//! (`IB_WR_LOCAL_INV`, or a peer's SEND with Invalidate).
//!
//! A key is an MR index in its top 20 bits, so the data path finds the MR in
//! one step, and 12 random bits below it, so that a peer cannot name an MR
//! it was not told about by counting, nor a new MR by an old key. MRs have
//! the lower half of the indices, memory windows (`mw.rs`) the upper half.

use crate::ids::Key;
use crate::kernel_ext::{
    errno::eopnotsupp,
    fill::Fill,
    random_u32,
    rdma::{
        Access, AtomicOp, Device, Driver, KernelPages, Lkey, MrAdvice, MrKeys, MrRange, Rkey, Umem,
        UserRegion, LOCAL_DMA_LKEY,
    },
};
use crate::limits::{FIRST_MR_INDEX, LAST_MR_INDEX, MAX_FAST_REG_PAGES};
use crate::pool::{PdNum, Pool};
use crate::proto::wqe::FastReg;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// In `MrCore::windows`: the MR is deregistered, no window may be bound.
const DEREGISTERED: u32 = 1 << 31;

/// The access rights rroce implements.
const SUPPORTED_ACCESS: Access = Access::LOCAL_WRITE
    .with(Access::REMOTE_WRITE)
    .with(Access::REMOTE_READ)
    .with(Access::REMOTE_ATOMIC)
    .with(Access::MW_BIND)
    .with(Access::FLUSH_GLOBAL)
    .with(Access::ON_DEMAND)
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
/// a user MR's pages stay pinned until they are done even if it is
/// deregistered; a fast-registration MR's pages are the consumer's, and
/// nothing touches them once it is invalidated.
pub(crate) struct MrCore {
    pd: AtomicU64,
    /// The memory windows bound to it, or `DEREGISTERED`.
    windows: AtomicU32,
    region: Region,
}

/// An MR's memory and the key and rights it is reached with.
enum Region {
    /// User memory, pinned for the life of the MR or faulted in on demand;
    /// its key never changes.
    User {
        umem: Umem,
        /// The address work requests and peers name the first byte by.
        iova: u64,
        key: Key,
        /// The rights, which a reregistration may change.
        access: AtomicU32,
        /// Whether the pages were pinned (or are faulted in) writable.
        writable: bool,
    },
    /// A kernel consumer's fast-registration MR.
    Fast(Pin<KBox<SpinLock<FastRegion>>>),
}

/// A fast-registration MR's state. Every copy to or from its pages is made
/// under the lock, so that once an invalidation has taken it, no copy is
/// running or will run.
struct FastRegion {
    /// The key now: the index never changes, the consumer's bits may.
    key: Key,
    /// What `ib_map_mr_sg` mapped last.
    pages: KernelPages,
    /// Registered (valid): peers and work requests may use it.
    valid: bool,
    /// While valid: the address of the first byte, and the rights.
    iova: u64,
    access: Access,
}

impl FastRegion {
    /// The offset of the `len` bytes at `va`, if they are all in the
    /// registered memory.
    fn offset_of(&self, va: u64, len: u64) -> Option<usize> {
        let offset = va.checked_sub(self.iova)?;
        (offset.checked_add(len)? <= self.pages.len() as u64).then_some(offset as usize)
    }
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
    /// On-demand pages could not be had now: the kernel kept taking them
    /// away while they were faulted in. Asking again later may succeed.
    Busy,
}

impl MrError {
    /// Why an access to the memory of a key and range that were accepted
    /// failed: on-demand pages `EBUSY`, else out of range.
    fn of_access(e: Error) -> Self {
        if e == EBUSY {
            Self::Busy
        } else {
            Self::Range
        }
    }
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
        let umem = Umem::get(dev, region)?;
        let (_, core) = mrs.add(|index| {
            let core = MrCore {
                pd: AtomicU64::new(pd.get()),
                windows: AtomicU32::new(0),
                region: Region::User {
                    umem,
                    iova: region.iova,
                    key: Key::new(index, random_u32()),
                    access: AtomicU32::new(region.access.bits()),
                    writable: region.access.is_writable(),
                },
            };
            Ok(Arc::new(core, GFP_KERNEL)?)
        })?;
        Ok(Self::with_keys(core))
    }

    /// A fast-registration MR among `mrs` in PD `pd`, of at most
    /// `max_pages` pages: invalid, with no memory, until a work request
    /// registers what `ib_map_mr_sg` mapped.
    pub(crate) fn alloc_fast(
        mrs: &Pool<MrCore>,
        pd: PdNum,
        max_pages: u32,
    ) -> Result<(Self, MrKeys)> {
        if max_pages == 0 || max_pages > MAX_FAST_REG_PAGES {
            return Err(EINVAL);
        }
        let pages = KernelPages::with_capacity(max_pages as usize)?;
        let (_, core) = mrs.add(|index| {
            let fast = FastRegion {
                key: Key::new(index, random_u32()),
                pages,
                valid: false,
                iova: 0,
                access: Access::from_bits(0),
            };
            let core = MrCore {
                pd: AtomicU64::new(pd.get()),
                windows: AtomicU32::new(0),
                region: Region::Fast(KBox::pin_init(new_spinlock!(fast), GFP_KERNEL)?),
            };
            Ok(Arc::new(core, GFP_KERNEL)?)
        })?;
        Ok(Self::with_keys(core))
    }

    /// The MR for `core`, with its keys.
    fn with_keys(core: Arc<MrCore>) -> (Self, MrKeys) {
        let key = core.key();
        let keys = MrKeys {
            lkey: key.lkey(),
            rkey: key.rkey(),
        };
        (Self { core: Some(core) }, keys)
    }

    /// Lends `map` the page list of a fast-registration MR to fill; what
    /// it maps is what the next registration gives the MR.
    pub(crate) fn map(&self, map: impl FnOnce(&mut KernelPages) -> Result<u32>) -> Result<u32> {
        match self.core.as_deref().map(|c| &c.region) {
            Some(Region::Fast(fast)) => map(&mut fast.lock().pages),
            _ => Err(EINVAL),
        }
    }

    /// The DMA MR of a kernel consumer: local rights only, as the kernel's
    /// own memory must never be open to peers.
    pub(crate) fn dma(access: Access) -> Result<(Self, MrKeys)> {
        if !Access::LOCAL_WRITE.contains(access) {
            return Err(eopnotsupp());
        }
        let keys = MrKeys {
            lkey: Lkey::new(LOCAL_DMA_LKEY),
            rkey: Rkey::new(LOCAL_DMA_LKEY),
        };
        Ok((Self { core: None }, keys))
    }

    /// Moves the MR to PD `pd` or gives it `access`, in place. Write rights
    /// for pages that were pinned read-only need new pages, and on-demand
    /// paging a new umem: `EOPNOTSUPP`.
    pub(crate) fn rereg(&self, pd: Option<PdNum>, access: Option<Access>) -> Result {
        let core = self.core.as_ref().ok_or_else(eopnotsupp)?;
        let Region::User {
            umem,
            access: rights,
            writable,
            ..
        } = &core.region
        else {
            return Err(EINVAL);
        };
        // Both checked before either is changed: a refused rereg changes
        // nothing.
        if let Some(access) = access {
            if !SUPPORTED_ACCESS.contains(access)
                || (access.is_writable() && !writable)
                || access.contains(Access::ON_DEMAND) != umem.is_on_demand()
            {
                return Err(eopnotsupp());
            }
        }
        // Its windows belong to the old PD.
        if pd.is_some_and(|pd| pd != core.pd()) && core.windows.load(Ordering::Acquire) != 0 {
            return Err(EBUSY);
        }
        if let Some(access) = access {
            rights.store(access.bits(), Ordering::Release);
        }
        if let Some(pd) = pd {
            core.pd.store(pd.get(), Ordering::Release);
        }
        Ok(())
    }

    /// Withdraws the keys; a user MR's pages are unpinned once the last
    /// work request using them is done, a fast-registration MR's are not
    /// touched again. `EBUSY` while memory windows are bound to it (IBA
    /// 10.6.7.2.6).
    pub(crate) fn deregister(&self, mrs: &Pool<MrCore>) -> Result {
        let Some(core) = &self.core else {
            return Ok(());
        };
        core.windows
            .compare_exchange(0, DEREGISTERED, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| EBUSY)?;
        mrs.remove(core.key().index());
        if let Region::Fast(fast) = &core.region {
            fast.lock().valid = false;
        }
        Ok(())
    }
}

/// Registers what a fast-registration MR mapped, for a QP in PD `pd`, as
/// `reg` asks (IBA 10.6.3.2, and as the C rxe checks): the MR must be in
/// the QP's PD and invalid, and only the consumer's bits of its key may
/// change.
pub(crate) fn fast_register(mrs: &Pool<MrCore>, pd: PdNum, reg: &FastReg) -> Result<(), MrError> {
    let key = Key::from(Rkey::new(reg.key));
    let mr = mrs.get(key.index()).ok_or(MrError::Key)?;
    let Region::Fast(fast) = &mr.region else {
        return Err(MrError::Key);
    };
    let access = Access::from_bits(reg.access);
    if mr.pd() != pd || !SUPPORTED_ACCESS.contains(access) {
        return Err(MrError::Access);
    }
    let mut f = fast.lock();
    if f.valid || !f.key.same_but_consumer_bits(key) {
        return Err(MrError::Key);
    }
    f.key = key;
    f.iova = reg.iova;
    f.access = access;
    f.valid = true;
    Ok(())
}

/// Invalidates the fast-registration MR `key` names, for a QP in PD `pd`
/// (`IB_WR_LOCAL_INV`, or a peer's SEND with Invalidate): from now on its
/// key names nothing and its pages are not touched. Fails for any other
/// MR, a stale key, or an MR with windows bound.
pub(crate) fn invalidate(mrs: &Pool<MrCore>, pd: PdNum, rkey: Rkey) -> Result<(), MrError> {
    let key = Key::from(rkey);
    let mr = mrs.get(key.index()).ok_or(MrError::Key)?;
    let Region::Fast(fast) = &mr.region else {
        return Err(MrError::Key);
    };
    if mr.pd() != pd || mr.windows.load(Ordering::Acquire) != 0 {
        return Err(MrError::Access);
    }
    let mut f = fast.lock();
    if f.key != key {
        return Err(MrError::Key);
    }
    f.valid = false;
    Ok(())
}

/// Acts on `advice` for `ranges` of on-demand MRs in PD `pd`
/// (`ibv_advise_mr`): brings their pages in. `ENOENT` for an unknown lkey,
/// `EINVAL` for an MR that is not on demand, `EFAULT` for a range outside
/// its MR or memory the process does not have.
pub(crate) fn advise(
    mrs: &Pool<MrCore>,
    pd: PdNum,
    advice: MrAdvice,
    ranges: &[MrRange],
) -> Result {
    for range in ranges {
        let mr = find(mrs, range.lkey().into(), pd).map_err(|_| ENOENT)?;
        let Region::User { umem, .. } = &mr.region else {
            return Err(EINVAL);
        };
        if !umem.is_on_demand() {
            return Err(EINVAL);
        }
        let offset = mr
            .offset_of(range.addr(), range.length().into())
            .ok_or(EFAULT)?;
        let write = advice == MrAdvice::PrefetchWrite;
        let fault = advice != MrAdvice::PrefetchNoFault;
        umem.prefetch(offset, range.length() as usize, write, fault)?;
    }
    Ok(())
}

/// Finds the MR `key` names among `mrs`, in PD `pd`.
pub(crate) fn find(mrs: &Pool<MrCore>, key: Key, pd: PdNum) -> Result<Arc<MrCore>, MrError> {
    mrs.get(key.index())
        .filter(|mr| mr.key() == key && mr.pd() == pd)
        .ok_or(MrError::Key)
}

/// Finds the MR `key` names in PD `pd` and checks that it grants `access`
/// to `len` bytes at `va`; returns it with the offset of `va` in it.
pub(crate) fn lookup(
    mrs: &Pool<MrCore>,
    key: Key,
    pd: PdNum,
    access: Access,
    va: u64,
    len: u64,
) -> Result<(Arc<MrCore>, usize), MrError> {
    let mr = find(mrs, key, pd)?;
    let offset = match &mr.region {
        Region::User { .. } => {
            if !mr.access().contains(access) {
                return Err(MrError::Access);
            }
            mr.offset_of(va, len).ok_or(MrError::Range)?
        }
        // Key, validity, rights and range at one moment.
        Region::Fast(fast) => {
            let f = fast.lock();
            if !f.valid || f.key != key {
                return Err(MrError::Key);
            }
            if !f.access.contains(access) {
                return Err(MrError::Access);
            }
            f.offset_of(va, len).ok_or(MrError::Range)?
        }
    };
    Ok((mr, offset))
}

/// An MR's memory at one moment, for a copy or an atomic.
enum Memory<'a> {
    User(&'a Umem),
    Fast(&'a KernelPages),
}

impl Memory<'_> {
    fn write(&self, offset: usize, src: &[u8]) -> Result {
        match self {
            Self::User(u) => u.write(offset, src),
            Self::Fast(k) => k.write(offset, src),
        }
    }

    fn read(&self, offset: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        match self {
            Self::User(u) => u.read(offset, len, dst),
            Self::Fast(k) => k.read(offset, len, dst),
        }
    }

    fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        match self {
            Self::User(u) => u.atomic(offset, op),
            Self::Fast(k) => k.atomic(offset, op),
        }
    }
}

/// An MR a peer's request named by key, held for the request's later
/// packets (a WRITE's, a READ response's): each checks again that the key
/// still names the MR in the PD, for the access, as the first packet did.
/// A deregistration, an invalidation (and registration anew), or a
/// reregistration that took the right or moved the PD stops the request
/// there: its pages are not touched again for it.
pub(crate) struct RemoteMr {
    mr: Arc<MrCore>,
    key: Key,
    pd: PdNum,
    access: Access,
}

impl RemoteMr {
    /// `mr`, which `key` named in PD `pd` for `access` a moment ago.
    pub(crate) fn new(mr: Arc<MrCore>, key: Key, pd: PdNum, access: Access) -> Self {
        Self {
            mr,
            key,
            pd,
            access,
        }
    }

    /// Whether user memory is still named by the key, for the access.
    fn user_still_named(&self, access: &AtomicU32) -> Result<(), MrError> {
        let granted = Access::from_bits(access.load(Ordering::Acquire));
        if self.mr.windows.load(Ordering::Acquire) & DEREGISTERED != 0 || self.mr.pd() != self.pd {
            Err(MrError::Key)
        } else if !granted.contains(self.access) {
            Err(MrError::Access)
        } else {
            Ok(())
        }
    }

    /// A fast-registration MR's pages, if the key still names it for the
    /// access.
    fn fast_still_named<'a>(&self, f: &'a FastRegion) -> Result<&'a KernelPages, MrError> {
        if !f.valid || f.key != self.key || self.mr.pd() != self.pd {
            Err(MrError::Key)
        } else if !f.access.contains(self.access) {
            Err(MrError::Access)
        } else {
            Ok(&f.pages)
        }
    }

    /// Copies `src` to `offset`, which the lookup checked.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result<(), MrError> {
        self.mr.on_pages(Some(self), |m| m.write(offset, src))
    }

    /// Appends `len` bytes from `offset`, which the lookup checked, to `dst`.
    pub(crate) fn read(
        &self,
        offset: usize,
        len: usize,
        dst: &mut Fill<'_>,
    ) -> Result<(), MrError> {
        self.mr.on_pages(Some(self), |m| m.read(offset, len, dst))
    }

    /// Runs an atomic on the 8 bytes at `offset`, which the lookup checked;
    /// returns the old value.
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64, MrError> {
        self.mr.on_pages(Some(self), |m| m.atomic(offset, op))
    }

    /// Faults on-demand pages in; see [`MrCore::fault_in`].
    pub(crate) fn fault_in(&self, offset: usize, len: usize, write: bool) -> Result<(), MrError> {
        self.mr.fault_in(offset, len, write)
    }

    /// Whether it is `mr`.
    pub(crate) fn is(&self, mr: &Arc<MrCore>) -> bool {
        Arc::ptr_eq(&self.mr, mr)
    }

    /// The access it was named for.
    pub(crate) fn access(&self) -> Access {
        self.access
    }
}

impl MrCore {
    /// Its key now.
    pub(crate) fn key(&self) -> Key {
        match &self.region {
            Region::User { key, .. } => *key,
            Region::Fast(fast) => fast.lock().key,
        }
    }

    /// The rights it grants now.
    pub(crate) fn access(&self) -> Access {
        match &self.region {
            Region::User { access, .. } => Access::from_bits(access.load(Ordering::Acquire)),
            Region::Fast(fast) => {
                let f = fast.lock();
                if f.valid {
                    f.access
                } else {
                    Access::from_bits(0)
                }
            }
        }
    }

    /// The PD it belongs to now.
    pub(crate) fn pd(&self) -> PdNum {
        PdNum::new(self.pd.load(Ordering::Acquire))
    }

    /// The offset of the `len` bytes at `va`, if they are all in the MR.
    pub(crate) fn offset_of(&self, va: u64, len: u64) -> Option<usize> {
        match &self.region {
            Region::User { umem, iova, .. } => {
                let offset = va.checked_sub(*iova)?;
                (offset.checked_add(len)? <= umem.len() as u64).then_some(offset as usize)
            }
            Region::Fast(fast) => {
                let f = fast.lock();
                f.valid.then(|| f.offset_of(va, len)).flatten()
            }
        }
    }

    /// Counts a window bound to it; `false` once it is deregistered, and
    /// for fast-registration MRs, which kernel consumers do not bind to.
    pub(crate) fn hold_window(&self) -> bool {
        if matches!(self.region, Region::Fast(_)) {
            return false;
        }
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

    /// Faults the on-demand pages of `len` bytes at `offset`, which `lookup`
    /// checked, in (writable if `write`); other memory is always in.
    pub(crate) fn fault_in(&self, offset: usize, len: usize, write: bool) -> Result<(), MrError> {
        match &self.region {
            Region::User { umem, .. } if umem.is_on_demand() => umem
                .prefetch(offset, len, write, true)
                .map_err(MrError::of_access),
            _ => Ok(()),
        }
    }

    /// Copies `src` to `offset`, which `lookup` checked.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result<(), MrError> {
        self.on_pages(None, |m| m.write(offset, src))
    }

    /// Appends `len` bytes from `offset`, which `lookup` checked, to `dst`.
    pub(crate) fn read(
        &self,
        offset: usize,
        len: usize,
        dst: &mut Fill<'_>,
    ) -> Result<(), MrError> {
        self.on_pages(None, |m| m.read(offset, len, dst))
    }

    /// Runs `f` on its memory: user memory, or a fast-registration MR's
    /// pages under its lock while it is valid; first, if a request `named`
    /// it, checks that its key still names it. A failed access is out of
    /// range, or busy on-demand memory.
    fn on_pages<R>(
        &self,
        named: Option<&RemoteMr>,
        f: impl FnOnce(Memory<'_>) -> Result<R>,
    ) -> Result<R, MrError> {
        match &self.region {
            Region::User { umem, access, .. } => {
                if let Some(named) = named {
                    named.user_still_named(access)?;
                }
                f(Memory::User(umem))
            }
            Region::Fast(fast) => {
                let fast = fast.lock();
                let pages = match named {
                    Some(named) => named.fast_still_named(&fast)?,
                    None => Self::valid(&fast)?,
                };
                f(Memory::Fast(pages))
            }
        }
        .map_err(MrError::of_access)
    }

    /// A fast-registration MR's pages, while it is valid: an invalidation
    /// since the lookup ends the access.
    fn valid(f: &FastRegion) -> Result<&KernelPages, MrError> {
        if f.valid {
            Ok(&f.pages)
        } else {
            Err(MrError::Key)
        }
    }
}
