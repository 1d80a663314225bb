// SPDX-License-Identifier: GPL-2.0

//! The IEEE CRC-32 (reflected, no inversion on entry or exit, so calls
//! chain). 6.12's `crc32_le()` is a table walk on every CPU. On x86-64,
//! `rust/helpers/helpers.c` times the forms it has when the first device
//! loads and keeps the fastest: that table, or our own carry-less multiply
//! (`rust/helpers/crc32_copy_x86_64.S`, SSE's or AVX2's form), which takes
//! whole 16-byte blocks at any alignment, where the crypto API's
//! `crc32-pclmul` walks the table for up to 15 bytes before them and for
//! whatever is not a 16-byte block after, and wants 79 to start with. On
//! real CPUs a fold wins; under QEMU's TCG, which emulates PCLMULQDQ
//! slowly, the table does. Elsewhere the crypto API's `crc32`, as the C rxe
//! computes its ICRC, which picks the CPU's best; without it, `crc32_le()`.

use crate::bindings;
use core::{mem::offset_of, ptr::NonNull};
use kernel::{c_str, error::from_err_ptr, pr_warn};

/// The fastest CRC-32 the kernel has.
///
/// # Invariants
///
/// `tfm`, if any, is a transform of the crypto API's `crc32`, whose
/// descriptor context (the running CRC, a `u32`) fits in [`Desc::ctx`]; it
/// is ours and freed once, on drop.
pub(crate) struct Crc32 {
    tfm: Option<NonNull<bindings::crypto_shash>>,
    /// Whether the helpers' CRC, chosen at load, is for this CPU:
    /// [`Crc32::update`] by `rroce_crc32()`.
    ours: bool,
    /// Whether [`Crc32::copy`] hashes the bytes as it copies them.
    one_pass: bool,
}

// SAFETY: A transform may be used from any thread and context at once:
// each update has its own descriptor, on the caller's stack.
unsafe impl Send for Crc32 {}
// SAFETY: As for `Send`: updates only read the transform.
unsafe impl Sync for Crc32 {}

/// `struct shash_desc` followed by its context, as `SHASH_DESC_ON_STACK`
/// lays them out.
#[repr(C)]
struct Desc {
    desc: bindings::shash_desc,
    ctx: [u32; CTX_WORDS],
}

/// Room for the context: `crc32` needs one word.
const CTX_WORDS: usize = 4;

/// Fewer bytes go straight to `crc32_le()`: a carry-less multiply needs
/// more to start with (x86's takes 79 and up, else walks the table
/// itself), and the crypto API's calls cost more than they would save.
const SHORT: usize = 80;

// The context starts where `shash_desc_ctx()` looks for it.
const _: () = assert!(offset_of!(Desc, ctx) == offset_of!(bindings::shash_desc, __ctx));

impl Crc32 {
    /// The helpers' fastest form where they have one (x86-64), else the
    /// crypto API's `crc32` if the kernel has it, else `crc32_le()`.
    pub(crate) fn new() -> Self {
        // Each must chain as `crc32_le()` does, which the ICRC relies on:
        // long enough not to be taken for `SHORT`, and to fold 64 bytes on.
        let check: [u8; 2 * SHORT] = core::array::from_fn(|i| i as u8);
        let want = super::crc32_le(!0, &check);
        // SAFETY: No preconditions.
        if unsafe { bindings::rroce_crc32_select() } {
            let helpers = Self {
                tfm: None,
                ours: true,
                // SAFETY: No preconditions.
                one_pass: unsafe { bindings::rroce_crc32_copy_folds() },
            };
            let (head, rest) = check.split_at(64);
            let mut copied = [0u8; 2 * SHORT - 64];
            let (dst, src) = (copied.as_mut_ptr(), rest.as_ptr());
            // SAFETY: `copied` has room for `rest`, a distinct array.
            let crc = unsafe { helpers.copy(!0, head, dst, src, rest.len()) };
            // Every length from one block to past where four lanes start.
            let long: [u8; 320] = core::array::from_fn(|i| (i * 7) as u8);
            let folds = (16..=long.len())
                .step_by(13)
                .all(|n| helpers.update(!0, &long[..n]) == super::crc32_le(!0, &long[..n]));
            if crc == want && copied == *rest && folds {
                return helpers;
            }
            pr_warn!("the helpers' CRC-32 disagrees with crc32_le(); not taken\n");
        }
        // INVARIANT: `crypto_crc32` gives a transform that is ours, with a
        // context that fits.
        let crypto = Self {
            tfm: crypto_crc32(),
            ours: false,
            one_pass: false,
        };
        if crypto.update(!0, &check) == want {
            return crypto;
        }
        // Dropping `crypto` frees its transform.
        Self {
            tfm: None,
            ours: false,
            one_pass: false,
        }
    }

    /// Whether [`Crc32::copy`] reads each byte once, where a copy and then
    /// [`Crc32::update`] would read it twice (x86's carry-less multiply).
    pub(crate) fn copies_in_one_pass(&self) -> bool {
        self.one_pass
    }

    /// `crc` carried on over `head` and then over the `n` bytes at `src`,
    /// which it copies to `dst`: in one pass over whole 64-byte blocks, if
    /// [`Crc32::copies_in_one_pass`] and `head` is such blocks; the rest
    /// (and all of it on other CPUs) by `crc32_le()` after the copy. The
    /// CRC covers the bytes as copied, even if `src` changed meanwhile.
    ///
    /// # Safety
    ///
    /// `src` is valid for reading `n` bytes and `dst` for writing them, and
    /// they do not overlap. Another CPU or a device may write `src`
    /// meanwhile (user or DMA memory).
    #[inline]
    pub(crate) unsafe fn copy(
        &self,
        crc: u32,
        head: &[u8],
        dst: *mut u8,
        src: *const u8,
        n: usize,
    ) -> u32 {
        // SAFETY: `head` is a valid slice; the caller guarantees the rest.
        unsafe { bindings::rroce_crc32_copy(crc, head.as_ptr(), head.len(), dst, src, n) }
    }

    /// `crc` carried on over `bytes`.
    pub(crate) fn update(&self, crc: u32, bytes: &[u8]) -> u32 {
        if self.ours {
            // SAFETY: `bytes` is a valid slice.
            return unsafe { bindings::rroce_crc32(crc, bytes.as_ptr(), bytes.len()) };
        }
        let (Some(tfm), Ok(len)) = (self.tfm, u32::try_from(bytes.len())) else {
            return super::crc32_le(crc, bytes);
        };
        if bytes.len() < SHORT {
            return super::crc32_le(crc, bytes);
        }
        let mut d = Desc {
            // SAFETY: All zeroes is a valid `shash_desc` (a null pointer
            // and an empty array); the pointer is set just below.
            desc: unsafe { core::mem::zeroed() },
            ctx: [crc; CTX_WORDS],
        };
        d.desc.tfm = tfm.as_ptr();
        // SAFETY: `d` is a descriptor of our transform with its context
        // behind it, large enough by the type invariant, holding the CRC
        // so far where `crc32`'s update expects it; `bytes` is a valid
        // slice of `len` bytes.
        if unsafe { bindings::crypto_shash_update(&mut d.desc, bytes.as_ptr(), len) } != 0 {
            return super::crc32_le(crc, bytes);
        }
        d.ctx[0]
    }
}

/// A transform of the crypto API's `crc32`, if it has one whose context fits
/// in [`Desc::ctx`]; the caller frees it.
fn crypto_crc32() -> Option<NonNull<bindings::crypto_shash>> {
    let name = c_str!("crc32").as_char_ptr();
    // SAFETY: A NUL-terminated name; failure is an `ERR_PTR`.
    let tfm = unsafe { bindings::crypto_alloc_shash(name, 0, 0) };
    let tfm = from_err_ptr(tfm).ok().and_then(NonNull::new)?;
    // SAFETY: A live transform.
    let ctx_len = unsafe { bindings::rroce_crypto_shash_descsize(tfm.as_ptr()) };
    if ctx_len as usize > core::mem::size_of::<[u32; CTX_WORDS]>() {
        // SAFETY: Ours, and not kept.
        unsafe { bindings::rroce_crypto_free_shash(tfm.as_ptr()) };
        return None;
    }
    Some(tfm)
}

impl Drop for Crc32 {
    fn drop(&mut self) {
        if let Some(tfm) = self.tfm {
            // SAFETY: By the type invariant, ours, and freed only here.
            unsafe { bindings::rroce_crypto_free_shash(tfm.as_ptr()) };
        }
    }
}
