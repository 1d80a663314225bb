// SPDX-License-Identifier: GPL-2.0

//! The memory of kernel consumers' work requests.
//!
//! Kernel consumers name their memory by the device's local DMA lkey, with
//! addresses that are kernel virtual addresses (ib_core's virtual DMA for
//! software devices), valid until the work request completes: the verbs
//! contract, which [`KernelSegs`] relies on.
//!
//! C header: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h)

use crate::bindings;
use crate::kernel_ext::{few::Few, fill::Fill};
use kernel::{alloc::Flags, prelude::*};

/// The lkey of kernel memory: the device's `local_dma_lkey`.
pub(crate) const LOCAL_DMA_LKEY: u32 = 0;

/// Kernel memory a kernel work request names.
///
/// # Invariants
///
/// Each piece is valid kernel memory for its length until the work request
/// completes, which outlives this value's use by the driver.
pub(crate) struct KernelSegs {
    pieces: Few<Piece, INLINE_PIECES>,
    len: usize,
}

/// Address and length of each piece.
type Piece = (usize, usize);

/// Pieces kept in place: nearly all kernel work requests (NVMe-oF, NFS)
/// have one or two.
const INLINE_PIECES: usize = 2;

// SAFETY: The memory belongs to the kernel consumer, which expects any
// thread of the device to access it until completion.
unsafe impl Send for KernelSegs {}
// SAFETY: As above; copies through `&self` only race on the consumer's data.
unsafe impl Sync for KernelSegs {}

impl KernelSegs {
    /// Takes the scatter/gather list of a kernel work request.
    ///
    /// # Safety
    ///
    /// `sges` points to `num` valid entries whose memory stays valid until
    /// the work request completes.
    pub(super) unsafe fn from_raw(
        sges: *const bindings::ib_sge,
        num: i32,
        flags: Flags,
    ) -> Result<Self> {
        let num = usize::try_from(num).map_err(|_| EINVAL)?;
        let mut pieces = Few::with_capacity(num, flags)?;
        let mut len = 0usize;
        for i in 0..num {
            // SAFETY: In bounds, by the caller's guarantee.
            let sge = unsafe { &*sges.add(i) };
            if sge.length == 0 {
                continue;
            }
            if sge.lkey != LOCAL_DMA_LKEY {
                // Kernel users name their local memory by the local DMA
                // lkey; fast-registered MRs are for their peers.
                return Err(EINVAL);
            }
            len = len.checked_add(sge.length as usize).ok_or(EINVAL)?;
            pieces.push((sge.addr as usize, sge.length as usize), flags)?;
        }
        // INVARIANT: Guaranteed by the caller.
        Ok(Self { pieces, len })
    }

    /// The number of bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f` with each piece of `at..at + len`: its address and its
    /// range relative to `at`.
    fn walk(
        &self,
        at: usize,
        len: usize,
        mut f: impl FnMut(usize, core::ops::Range<usize>),
    ) -> Result {
        crate::kernel_ext::walk_pieces(
            &self.pieces[..],
            self.len,
            |p| p.1,
            at,
            len,
            |&(addr, _), skip, r| {
                f(addr + skip, r);
                Ok(())
            },
        )
        .ok_or(EFAULT)?
    }

    /// Appends bytes `at..at + len` of the memory to `dst`; `EFAULT` past
    /// the end of either.
    pub(crate) fn gather(&self, at: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        if len > dst.remaining() {
            return Err(EFAULT);
        }
        let mut res = Ok(());
        self.walk(at, len, |addr, r| {
            // SAFETY: By the type invariant the piece is valid kernel memory,
            // and `walk` keeps inside it; the consumer's memory is not `dst`.
            res = res.and(unsafe { dst.put_raw(addr as *const u8, r.len()) });
        })?;
        res
    }

    /// Copies `src` to bytes `at..at + src.len()` of the memory.
    pub(crate) fn scatter(&self, at: usize, src: &[u8]) -> Result {
        self.walk(at, src.len(), |addr, r| {
            let s = &src[r];
            // SAFETY: As in `gather`, writing; the consumer gave the memory
            // for the device to write.
            unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), addr as *mut u8, s.len()) }
        })
    }
}
