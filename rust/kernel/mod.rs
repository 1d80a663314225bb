// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the C APIs rroce uses that the `kernel` crate lacks.
//!
//! Laid out as they would be under `rust/kernel/` upstream. Every `unsafe`
//! block of rroce lives below this module, each with its `// SAFETY:`
//! argument; the driver in `drivers/infiniband/sw/rroce/` uses only the safe
//! interfaces exported here.

pub(crate) mod crc32;
pub(crate) mod few;
pub(crate) mod fill;
pub(crate) mod ida;
pub(crate) mod irq;
pub(crate) mod llist;
pub(crate) mod net;
pub(crate) mod rdma;

/// 32 random bits from the kernel's CRNG, for what peers must not guess.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32` may be called from any context.
    unsafe { crate::bindings::get_random_u32() }
}

/// `crc32_le()`: the IEEE CRC-32, reflected, without inversion on entry or
/// exit, so that calls chain.
pub(crate) fn crc32_le(crc: u32, bytes: &[u8]) -> u32 {
    // SAFETY: Reads `bytes.len()` bytes of a valid slice.
    unsafe { crate::bindings::crc32_le(crc, bytes.as_ptr(), bytes.len()) }
}

/// The kernel's tick counter (`jiffies`), for timeouts.
pub(crate) fn jiffies() -> u64 {
    ticks() as u64
}

/// `jiffies` as the kernel keeps it, an `unsigned long`: read in place,
/// as C reads it, not through a call for every packet.
pub(crate) fn ticks() -> usize {
    // SAFETY: The kernel's tick counter, an aligned word that the timer
    // updates and anyone may read at any time; a volatile read, as C's
    // `volatile` declaration makes its reads.
    unsafe { core::ptr::read_volatile(core::ptr::addr_of!(crate::bindings::jiffies)) as usize }
}

/// The time since boot in nanoseconds (`ktime_get`), for rates.
pub(crate) fn now_ns() -> u64 {
    kernel::time::Ktime::ktime_get().to_ns() as u64
}

/// The module's `congestion_control` parameter: whether new devices do
/// congestion control.
pub(crate) fn congestion_control() -> bool {
    // SAFETY: A `bool` module parameter that sysfs may change at any time;
    // a racing read sees either value.
    unsafe {
        core::ptr::read_volatile(core::ptr::addr_of!(
            crate::bindings::rroce_congestion_control
        ))
    }
}

/// `usecs` in jiffies, rounded up. Computed here, where `HZ` is a
/// constant, rather than in C at each arm of a timer.
pub(crate) const fn usecs_to_jiffies(usecs: u32) -> u64 {
    (usecs as u64 * crate::bindings::RROCE_HZ as u64).div_ceil(1_000_000)
}

/// `j` jiffies in microseconds, at most `u32::MAX`.
pub(crate) const fn jiffies_to_usecs(j: u64) -> u32 {
    let usecs = j.saturating_mul(1_000_000) / crate::bindings::RROCE_HZ as u64;
    if usecs > u32::MAX as u64 {
        u32::MAX
    } else {
        usecs as u32
    }
}

/// Orders every store before it before every store after it, for all
/// observers, devices included (`wmb()`).
pub(crate) fn write_barrier() {
    // SAFETY: A barrier; no memory is named.
    unsafe { crate::bindings::rroce_wmb() }
}

/// Sleeps for at least `msecs` milliseconds; process context only, as for
/// any sleeping lock.
pub(crate) fn msleep(msecs: u32) {
    // SAFETY: No memory-safety requirement; a call in atomic context is
    // reported by `might_sleep`, as for `kernel::sync::Mutex::lock`.
    unsafe { crate::bindings::msleep(msecs) }
}

/// Calls `f` on each piece of bytes `at..at + len` of a buffer of `total`
/// bytes made of `pieces` laid end to end, of lengths `len_of`: the piece,
/// the offset in it, and the part's range relative to `at`. `None` if the
/// range runs past `total`.
pub(crate) fn walk_pieces<P, E>(
    pieces: &[P],
    total: usize,
    len_of: impl Fn(&P) -> usize,
    at: usize,
    len: usize,
    mut f: impl FnMut(&P, usize, core::ops::Range<usize>) -> core::result::Result<(), E>,
) -> Option<core::result::Result<(), E>> {
    match at.checked_add(len) {
        Some(end) if end <= total => {}
        _ => return None,
    }
    let (mut skip, mut done) = (at, 0);
    for piece in pieces {
        if done == len {
            break;
        }
        let plen = len_of(piece);
        if skip >= plen {
            skip -= plen;
            continue;
        }
        let n = (plen - skip).min(len - done);
        if let Err(e) = f(piece, skip, done..done + n) {
            return Some(Err(e));
        }
        skip = 0;
        done += n;
    }
    Some(Ok(()))
}

/// Error codes the `kernel` crate does not name yet.
pub(crate) mod errno {
    use crate::bindings;
    use kernel::error::Error;

    /// `EADDRINUSE`: a port is taken.
    pub(crate) fn eaddrinuse() -> Error {
        Error::from_errno(-(bindings::EADDRINUSE as i32))
    }

    /// `EAFNOSUPPORT`: the address family is not available (IPv6 disabled).
    pub(crate) fn eafnosupport() -> Error {
        Error::from_errno(-(bindings::EAFNOSUPPORT as i32))
    }

    /// `EOPNOTSUPP`: the operation is not supported (as userspace sees it;
    /// the kernel crate's `ENOTSUPP` is kernel-internal).
    pub(crate) fn eopnotsupp() -> Error {
        Error::from_errno(-(bindings::EOPNOTSUPP as i32))
    }
}
