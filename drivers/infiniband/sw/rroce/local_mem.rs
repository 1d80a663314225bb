// SPDX-License-Identifier: GPL-2.0

//! Local memory of a work request: its scatter/gather list resolved to
//! memory regions once, when the request is taken from its ring, so every
//! packet after that copies without a lookup and within checked bounds.

use crate::kernel_ext::few::Few;
use crate::kernel_ext::fill::Fill;
use crate::kernel_ext::rdma::{Access, KernelSegs, Lkey};
use crate::kernel_ext::walk_pieces;
use crate::mr::{self, MrCore, MrError};
use crate::pool::{PdNum, Pool};
use crate::proto::wqe::Sge;
use crate::work::{RecvData, SendData};
use kernel::{prelude::*, sync::Arc};

/// A piece of a memory region.
struct Seg {
    mr: Arc<MrCore>,
    offset: usize,
    len: usize,
}

/// A work request's local memory, in order.
pub(crate) struct SegList {
    segs: Few<Seg, 1>,
    total: usize,
}

impl SegList {
    /// Resolves `sges` to the MRs `mrs` in PD `pd`, with `access` to each;
    /// zero-length SGEs are skipped, as IB allows any key for them.
    pub(crate) fn resolve(
        mrs: &Pool<MrCore>,
        sges: &[Sge],
        pd: PdNum,
        access: Access,
    ) -> Result<Self, MrError> {
        let mut segs = Few::with_capacity(sges.len(), GFP_KERNEL).map_err(|_| MrError::Key)?;
        let mut total = 0usize;
        for sge in sges.iter().filter(|s| s.length != 0) {
            let len = sge.length as u64;
            let (mr, offset) =
                mr::lookup(mrs, Lkey::new(sge.lkey).into(), pd, access, sge.addr, len)?;
            total = total
                .checked_add(sge.length as usize)
                .ok_or(MrError::Range)?;
            let seg = Seg {
                mr,
                offset,
                len: sge.length as usize,
            };
            segs.push(seg, GFP_KERNEL).map_err(|_| MrError::Key)?;
        }
        Ok(Self { segs, total })
    }

    /// No memory at all.
    pub(crate) fn empty() -> Self {
        Self {
            segs: Few::new(),
            total: 0,
        }
    }

    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        self.total
    }

    /// Calls `f` on each piece of `at..at + len`, in order, with the
    /// segment's MR, the offset in the MR, and the piece's range relative to
    /// `at`.
    fn walk(
        &self,
        at: usize,
        len: usize,
        mut f: impl FnMut(&MrCore, usize, core::ops::Range<usize>) -> Result<(), MrError>,
    ) -> Result<(), MrError> {
        walk_pieces(
            &self.segs,
            self.total,
            |s| s.len,
            at,
            len,
            |seg, skip, r| f(&seg.mr, seg.offset + skip, r),
        )
        .ok_or(MrError::Range)?
    }

    /// Appends bytes `at..at + len` of the list to `dst`.
    pub(crate) fn gather(&self, at: usize, len: usize, dst: &mut Fill<'_>) -> Result<(), MrError> {
        self.walk(at, len, |mr, off, r| mr.read(off, r.len(), dst))
    }

    /// Copies `src` to bytes `at..at + src.len()` of the list.
    pub(crate) fn scatter(&self, at: usize, src: &[u8]) -> Result<(), MrError> {
        self.walk(at, src.len(), |mr, off, r| mr.write(off, &src[r]))
    }
}

/// Where a work request's bytes live: memory regions, a kernel consumer's
/// memory, or a copy taken when it was posted (inline data).
pub(crate) enum Memory {
    Mr(SegList),
    Kernel(KernelSegs),
    Inline(KVec<u8>),
}

impl Memory {
    /// A send's data: `access` is what it needs of its MRs, among `mrs`.
    pub(crate) fn for_send(
        mrs: &Pool<MrCore>,
        data: SendData,
        pd: PdNum,
        access: Access,
    ) -> Result<Self, MrError> {
        Ok(match data {
            SendData::Inline(bytes) => Self::Inline(bytes),
            SendData::Sges(sges) => Self::Mr(SegList::resolve(mrs, &sges, pd, access)?),
            SendData::Kernel(segs) => Self::Kernel(segs),
        })
    }

    /// A receive's memory, which it writes, among the MRs `mrs`.
    pub(crate) fn for_recv(mrs: &Pool<MrCore>, data: RecvData, pd: PdNum) -> Result<Self, MrError> {
        Ok(match data {
            RecvData::Sges(sges) => {
                Self::Mr(SegList::resolve(mrs, &sges, pd, Access::LOCAL_WRITE)?)
            }
            RecvData::Kernel(segs) => Self::Kernel(segs),
        })
    }

    /// No memory at all.
    pub(crate) fn empty() -> Self {
        Self::Mr(SegList::empty())
    }

    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Mr(s) => s.len(),
            Self::Kernel(s) => s.len(),
            Self::Inline(b) => b.len(),
        }
    }

    /// Appends bytes `at..at + len` to `dst`.
    pub(crate) fn gather(&self, at: usize, len: usize, dst: &mut Fill<'_>) -> Result<(), MrError> {
        match self {
            Self::Mr(s) => s.gather(at, len, dst),
            Self::Kernel(s) => s.gather(at, len, dst).map_err(|_| MrError::Range),
            Self::Inline(b) => {
                let src = b.get(at..at.checked_add(len).ok_or(MrError::Range)?);
                dst.put(src.ok_or(MrError::Range)?)
                    .map_err(|_| MrError::Range)
            }
        }
    }

    /// Copies `src` to bytes `at..at + src.len()`; inline data is only ever
    /// sent, never written.
    pub(crate) fn scatter(&self, at: usize, src: &[u8]) -> Result<(), MrError> {
        match self {
            Self::Mr(s) => s.scatter(at, src),
            Self::Kernel(s) => s.scatter(at, src).map_err(|_| MrError::Range),
            Self::Inline(_) => Err(MrError::Access),
        }
    }
}
