// SPDX-License-Identifier: GPL-2.0

//! Memory regions: access rights, and user memory pinned with `ib_umem` or
//! mapped on demand (`odp`).
//!
//! C header: [`include/rdma/ib_umem.h`](srctree/include/rdma/ib_umem.h)

use super::{
    implicit_odp::ImplicitOdp,
    odp::OdpUmem,
    pages::{AtomicOp, PagePtr, PageRun, Pages},
    Device,
};
use crate::bindings;
use crate::kernel_ext::fill::Fill;
use core::ptr::NonNull;
use kernel::{error::from_err_ptr, ffi, page::PAGE_SIZE, prelude::*};

/// Access rights of a memory region (`enum ib_access_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Access(u32);

impl Access {
    /// The local side may write (receives, RDMA read responses).
    pub(crate) const LOCAL_WRITE: Self = Self(bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE);
    /// Peers may RDMA WRITE into it.
    pub(crate) const REMOTE_WRITE: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE);
    /// Peers may RDMA READ from it.
    pub(crate) const REMOTE_READ: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_READ);
    /// Peers may run atomics on it.
    pub(crate) const REMOTE_ATOMIC: Self = Self(bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC);
    /// Memory windows may be bound to it.
    pub(crate) const MW_BIND: Self = Self(bindings::ib_access_flags_IB_ACCESS_MW_BIND);
    /// Peers may FLUSH it to global visibility.
    pub(crate) const FLUSH_GLOBAL: Self = Self(bindings::ib_access_flags_IB_ACCESS_FLUSH_GLOBAL);
    /// Peers may FLUSH it to persistence.
    pub(crate) const FLUSH_PERSISTENT: Self =
        Self(bindings::ib_access_flags_IB_ACCESS_FLUSH_PERSISTENT);
    /// A window's addresses count from its start, not the virtual address.
    pub(crate) const ZERO_BASED: Self = Self(bindings::ib_access_flags_IB_ZERO_BASED);
    /// The memory is not pinned: pages are faulted in as they are touched.
    pub(crate) const ON_DEMAND: Self = Self(bindings::ib_access_flags_IB_ACCESS_ON_DEMAND);
    /// Flags ib_core lets a driver ignore (`IB_ACCESS_OPTIONAL`, e.g.
    /// relaxed ordering).
    pub(crate) const OPTIONAL: Self = Self(bindings::ib_access_flags_IB_ACCESS_OPTIONAL);

    /// The rights in `bits`, as userspace passed them.
    pub(crate) fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The union of two sets of rights.
    pub(crate) const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// The bits, as ib_core passes them.
    pub(crate) fn bits(self) -> u32 {
        self.0
    }

    /// Whether a right lets anyone write the memory, so that its pages must
    /// be pinned writable (`ib_access_writable`).
    pub(crate) fn is_writable(self) -> bool {
        self.0
            & (bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE
                | bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE
                | bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC
                | bindings::ib_access_flags_IB_ACCESS_MW_BIND)
            != 0
    }

    /// Whether every right in `other` is also in `self`.
    pub(crate) fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A local key (`lkey`): what work requests' SGEs name a memory region by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lkey(u32);

/// A remote key (`rkey`): what a peer's requests, and invalidations, name a
/// memory region or window by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rkey(u32);

impl Lkey {
    /// The lkey `raw`, as a work request or ib_core gave it.
    pub(crate) const fn new(raw: u32) -> Self {
        Self(raw)
    }

    /// The number, for ib_core or a ring.
    pub(crate) const fn get(self) -> u32 {
        self.0
    }
}

impl Rkey {
    /// The rkey `raw`, as a packet, a work request or ib_core gave it.
    pub(crate) const fn new(raw: u32) -> Self {
        Self(raw)
    }

    /// The number, for ib_core, a ring or the wire.
    pub(crate) const fn get(self) -> u32 {
        self.0
    }
}

/// What `ibv_advise_mr` says of ranges of MRs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MrAdvice {
    /// They will be read soon: fault them in.
    Prefetch,
    /// They will be written soon: fault them in writable.
    PrefetchWrite,
    /// Map what of them is in memory, without faulting.
    PrefetchNoFault,
}

impl MrAdvice {
    /// The advice `ibv_advise_mr` passed, if it is one.
    pub(super) fn from_raw(advice: bindings::ib_uverbs_advise_mr_advice) -> Option<Self> {
        match advice {
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH => {
                Some(Self::Prefetch)
            }
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE => {
                Some(Self::PrefetchWrite)
            }
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT => {
                Some(Self::PrefetchNoFault)
            }
            _ => None,
        }
    }
}

/// A range of an MR, named by its lkey (`struct ib_sge`).
#[repr(transparent)]
pub(crate) struct MrRange(bindings::ib_sge);

impl MrRange {
    /// The address of the first byte.
    pub(crate) fn addr(&self) -> u64 {
        self.0.addr
    }

    /// The length in bytes.
    pub(crate) fn length(&self) -> u32 {
        self.0.length
    }

    /// The MR's lkey.
    pub(crate) fn lkey(&self) -> Lkey {
        Lkey::new(self.0.lkey)
    }

    /// The ranges of a C array.
    ///
    /// # Safety
    ///
    /// `sges` points to `n` valid entries, alive and unchanged for `'a`.
    pub(super) unsafe fn from_raw<'a>(sges: *const bindings::ib_sge, n: usize) -> &'a [Self] {
        // SAFETY: Guaranteed by the caller; `MrRange` is a transparent
        // `ib_sge`.
        unsafe { core::slice::from_raw_parts(sges.cast(), n) }
    }
}

/// The user memory of an MR (`struct ib_umem`): pinned for the life of
/// the object, or, registered with [`Access::ON_DEMAND`], faulted in as it
/// is touched and given back whenever the kernel takes it away
/// ([`OdpUmem`]).
pub(crate) struct Umem(UmemKind);

enum UmemKind {
    Pinned(PinnedUmem),
    OnDemand(OdpUmem),
    Implicit(ImplicitOdp),
}

/// User memory pinned for the life of the object.
///
/// # Invariants
///
/// `umem` comes from a successful `ib_umem_get` of `pages.len` bytes and is
/// released once, on drop; `pages` are its pinned pages.
struct PinnedUmem {
    umem: NonNull<bindings::ib_umem>,
    pages: Pages,
}

// SAFETY: A umem may be released from any thread, and its pinned pages
// accessed from any thread.
unsafe impl Send for PinnedUmem {}
// SAFETY: Copies through `&self` go to user memory, which has no Rust
// aliasing rules; concurrent copies only race on the user's bytes.
unsafe impl Sync for PinnedUmem {}

/// The user memory a `reg_user_mr` asks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UserRegion {
    /// The start of the memory in the calling process.
    pub(crate) start: u64,
    /// Its length in bytes.
    pub(crate) length: u64,
    /// The access rights asked for.
    pub(crate) access: Access,
    /// The address work requests and peers will use for `start`.
    pub(crate) iova: u64,
}

impl Umem {
    /// The memory of `region` in the calling process, for the uses its
    /// access allows: pinned (writable pages for any write right), or with
    /// [`Access::ON_DEMAND`] left where they are. The whole address space
    /// (start 0, length `u64::MAX`) can only be had on demand: implicit
    /// on-demand paging, where offsets are addresses, so its iova must be
    /// 0 too (`EINVAL`).
    pub(crate) fn get<T>(dev: &Device<T>, region: &UserRegion) -> Result<Self> {
        let UserRegion {
            start,
            length,
            access,
            iova,
        } = *region;
        let writable = access.is_writable();
        Ok(Self(if !access.contains(Access::ON_DEMAND) {
            UmemKind::Pinned(PinnedUmem::pin(dev, start, length, access)?)
        } else if start == 0 && length == u64::MAX {
            if iova != 0 {
                return Err(EINVAL);
            }
            UmemKind::Implicit(ImplicitOdp::get(dev, access.0, writable)?)
        } else {
            UmemKind::OnDemand(OdpUmem::get(dev, start, length, access.0, writable)?)
        }))
    }

    /// Whether its pages are faulted in on demand.
    pub(crate) fn is_on_demand(&self) -> bool {
        !matches!(self.0, UmemKind::Pinned(_))
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        match &self.0 {
            UmemKind::Pinned(p) => p.pages.len,
            UmemKind::OnDemand(o) => o.len(),
            UmemKind::Implicit(_) => usize::MAX,
        }
    }

    /// Copies `src` into the region at `offset`; `EFAULT` past its end, or
    /// where an on-demand page cannot be had writable.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result {
        match &self.0 {
            UmemKind::Pinned(p) => p.pages.write(offset, src),
            UmemKind::OnDemand(o) => o.lock(offset, src.len(), true)?.write(0, src),
            UmemKind::Implicit(i) => i.write(offset, src),
        }
    }

    /// Appends `len` bytes of the region at `offset` to `dst`; `EFAULT`
    /// past the end of either, or where an on-demand page cannot be had.
    pub(crate) fn read(&self, offset: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        match &self.0 {
            UmemKind::Pinned(p) => p.pages.read(offset, len, dst),
            UmemKind::OnDemand(o) => o.lock(offset, len, false)?.read(0, len, dst),
            UmemKind::Implicit(i) => i.read(offset, len, dst),
        }
    }

    /// Runs `op` on the 8 bytes at `offset`, which must be 8-byte aligned
    /// in the address space (`EINVAL`) and inside (`EFAULT`); returns the
    /// original value (for a store, the value stored).
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        match &self.0 {
            UmemKind::Pinned(p) => p.pages.atomic(offset, op),
            UmemKind::OnDemand(o) => o.lock(offset, 8, true)?.atomic(0, op),
            UmemKind::Implicit(i) => i.atomic(offset, op),
        }
    }

    /// Brings `len` bytes at `offset` in, writable if `write`, as
    /// `ibv_advise_mr` asks; without `fault` only pages already in memory
    /// are mapped. Pinned memory is always in.
    pub(crate) fn prefetch(&self, offset: usize, len: usize, write: bool, fault: bool) -> Result {
        match &self.0 {
            UmemKind::Pinned(p) => p.pages.pieces(offset, len, |_, _, _, _| {}),
            UmemKind::OnDemand(o) => o.prefetch(offset, len, write, fault),
            UmemKind::Implicit(i) => i.prefetch(offset, len, write, fault),
        }
    }
}

impl PinnedUmem {
    /// Pins `len` bytes at user address `addr` of the calling process, for
    /// the uses `access` allows (writable pages for any write right).
    fn pin<T>(dev: &Device<T>, addr: u64, len: u64, access: Access) -> Result<Self> {
        let addr = usize::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: The device is alive; ib_umem_get checks the range against
        // the calling process's memory and returns a pointer or an error.
        let umem = from_err_ptr(unsafe {
            bindings::ib_umem_get(dev.as_raw(), addr as _, len, access.0 as _)
        })?;
        let umem = NonNull::new(umem).ok_or(ENOMEM)?;
        let mut pages = KVec::new();
        // SAFETY: `umem` is pinned, and its table is not changed while it
        // is; the iterator walks it in order, one page at a time.
        let res = unsafe {
            let sgt = &(*umem.as_ptr()).sgt_append.sgt;
            let mut iter = bindings::sg_page_iter::default();
            bindings::__sg_page_iter_start(&mut iter, sgt.sgl, sgt.orig_nents, 0);
            let mut res = Ok(());
            while res.is_ok() && bindings::__sg_page_iter_next(&mut iter) {
                res = match NonNull::new(bindings::rroce_sg_page_iter_page(&mut iter)) {
                    Some(page) => pages
                        .push(PagePtr::new(page), GFP_KERNEL)
                        .map_err(Error::from),
                    None => Err(EFAULT),
                };
            }
            res
        };
        // SAFETY: `umem` is valid.
        let first = unsafe { bindings::rroce_umem_offset(umem.as_ptr()) } as usize;
        // INVARIANT: `umem` is pinned, `pages` are its pages; checked below
        // to hold `first + len` bytes.
        let this = Self {
            umem,
            pages: Pages { pages, first, len },
        };
        res?;
        if this.pages.pages.len() < (first + len).div_ceil(PAGE_SIZE) {
            return Err(EFAULT);
        }
        Ok(this)
    }
}

impl Drop for PinnedUmem {
    fn drop(&mut self) {
        // SAFETY: By the type invariant this is the one release.
        unsafe { bindings::ib_umem_release(self.umem.as_ptr()) };
    }
}

/// The kernel memory a fast-registration MR maps (`ib_map_mr_sg`): pages of
/// a kernel consumer's DMA-mapped scatterlist, which ib_core's virtual DMA
/// gives as kernel virtual addresses.
///
/// # Invariants
///
/// `pages` never grows past the capacity it was made with, so mapping never
/// allocates. Its pages are valid while the MR is: under the verbs contract
/// a consumer frees registered memory only once the MR's invalidation has
/// completed, and the driver stops using them when it invalidates.
pub(crate) struct KernelPages {
    pages: Pages,
}

// SAFETY: The pages belong to the kernel consumer, which expects any thread
// of the device to access them while the MR is valid.
unsafe impl Send for KernelPages {}
// SAFETY: As above; copies through `&self` only race on the consumer's data.
unsafe impl Sync for KernelPages {}

/// The `ib_mr` that `ib_sg_to_pages` fills in, with the list its pages go
/// to: its `set_page` callback has no other way to find the list.
#[repr(C)]
struct PageCollector {
    mr: bindings::ib_mr,
    pages: *mut KVec<PagePtr>,
}

impl KernelPages {
    /// An empty list with room for `capacity` pages.
    pub(crate) fn with_capacity(capacity: usize) -> Result<Self> {
        Ok(Self {
            pages: Pages {
                pages: KVec::with_capacity(capacity, GFP_KERNEL)?,
                first: 0,
                len: 0,
            },
        })
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.pages.len
    }

    /// Copies `src` into the memory at `offset`; `EFAULT` past its end.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> Result {
        self.pages.write(offset, src)
    }

    /// Appends `len` bytes of the memory at `offset` to `dst`; `EFAULT`
    /// past the end of either.
    pub(crate) fn read(&self, offset: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        self.pages.read(offset, len, dst)
    }

    /// Runs `op` on the 8 aligned bytes at `offset`; returns the original
    /// value (for a store, the value stored).
    pub(crate) fn atomic(&self, offset: usize, op: AtomicOp) -> Result<u64> {
        self.pages.atomic(offset, op)
    }

    /// Maps the largest prefix of a scatterlist that fits, as
    /// `ib_map_mr_sg` asks: fills in `mr`'s `iova` and `length` and returns
    /// how many entries were mapped, or a negative errno. Only pages of
    /// `PAGE_SIZE` are supported.
    ///
    /// # Safety
    ///
    /// `mr` is a valid MR whose `page_size` ib_core set; `sg` is a
    /// DMA-mapped scatterlist of `nents` entries of this (virtual DMA)
    /// device, and `sg_offset` null or valid.
    pub(super) unsafe fn map_sg(
        &mut self,
        mr: *mut bindings::ib_mr,
        sg: *mut bindings::scatterlist,
        nents: ffi::c_int,
        sg_offset: *mut ffi::c_uint,
    ) -> ffi::c_int {
        self.pages.clear();
        // SAFETY: `mr` is valid, by the caller's guarantee.
        if unsafe { (*mr).page_size } as usize != PAGE_SIZE {
            return EINVAL.to_errno();
        }
        let mut collector = PageCollector {
            mr: bindings::ib_mr {
                page_size: PAGE_SIZE as u32,
                ..Default::default()
            },
            pages: &mut self.pages.pages,
        };
        // SAFETY: `ib_sg_to_pages` reads the collector's `page_size`, writes
        // its `iova` and `length`, and passes it to `add_page`, which finds
        // the list behind it; the scatterlist is the caller's.
        let mapped = unsafe {
            bindings::ib_sg_to_pages(
                &mut collector.mr,
                sg,
                nents,
                sg_offset,
                Some(Self::add_page),
            )
        };
        let (iova, length) = (collector.mr.iova, collector.mr.length);
        let first = (iova % PAGE_SIZE as u64) as usize;
        let fits = usize::try_from(length)
            .ok()
            .and_then(|len| first.checked_add(len))
            .is_some_and(|end| end <= self.pages.pages.len() * PAGE_SIZE);
        if mapped < 0 || !fits {
            self.pages.clear();
            return if mapped < 0 {
                mapped
            } else {
                EFAULT.to_errno()
            };
        }
        // INVARIANT: The pages hold `first + length` bytes, checked above.
        self.pages.first = first;
        self.pages.len = length as usize;
        // SAFETY: `mr` is valid; ib_core reads these back after the call.
        unsafe {
            (*mr).iova = iova;
            (*mr).length = length;
        }
        mapped
    }

    /// `ib_sg_to_pages`'s `set_page`: adds the page at kernel virtual
    /// address `addr`, unless the list is full (`ENOMEM`, which ends the
    /// mapping there) or the address is not one of the direct map.
    ///
    /// # Safety
    ///
    /// `mr` is the `mr` of the `PageCollector` that `map_sg` passed.
    unsafe extern "C" fn add_page(mr: *mut bindings::ib_mr, addr: u64) -> ffi::c_int {
        // SAFETY: `mr` is the first field of a `repr(C)` `PageCollector`
        // whose list `map_sg` borrows mutably for the call.
        let pages = unsafe { &mut *(*mr.cast::<PageCollector>()).pages };
        if pages.len() == pages.capacity() {
            return ENOMEM.to_errno();
        }
        let addr = addr as usize as *const ffi::c_void;
        // SAFETY: Both only compute on the address.
        let page = unsafe {
            if !bindings::rroce_virt_addr_valid(addr) {
                return EFAULT.to_errno();
            }
            bindings::rroce_virt_to_page(addr)
        };
        let Some(page) = NonNull::new(page) else {
            return EFAULT.to_errno();
        };
        // Within the capacity: no allocation.
        match pages.push(PagePtr::new(page), GFP_ATOMIC) {
            Ok(()) => 0,
            Err(_) => ENOMEM.to_errno(),
        }
    }
}
