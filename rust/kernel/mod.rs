// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the C APIs rroce uses that the `kernel` crate lacks.
//!
//! Laid out as they would be under `rust/kernel/` upstream. Every `unsafe`
//! block of rroce lives below this module, each with its `// SAFETY:`
//! argument; the driver in `drivers/infiniband/sw/rroce/` uses only the safe
//! interfaces exported here.

pub(crate) mod net;
pub(crate) mod rdma;

/// 32 random bits from the kernel's CRNG, for what peers must not guess.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32` may be called from any context.
    unsafe { crate::bindings::get_random_u32() }
}

/// Error codes the `kernel` crate does not name yet.
pub(crate) mod errno {
    use crate::bindings;
    use kernel::error::Error;

    /// `EADDRINUSE`: a port is taken.
    pub(crate) fn eaddrinuse() -> Error {
        Error::from_errno(-(bindings::EADDRINUSE as i32))
    }

    /// `EOPNOTSUPP`: the operation is not supported (as userspace sees it;
    /// the kernel crate's `ENOTSUPP` is kernel-internal).
    pub(crate) fn eopnotsupp() -> Error {
        Error::from_errno(-(bindings::EOPNOTSUPP as i32))
    }
}
