// SPDX-License-Identifier: GPL-2.0

//! Safe abstractions over the C APIs rroce uses that the `kernel` crate lacks.
//!
//! Laid out as they would be under `rust/kernel/` upstream. Every `unsafe`
//! block of rroce lives below this module, each with its `// SAFETY:`
//! argument; the driver in `drivers/infiniband/sw/rroce/` uses only the safe
//! interfaces exported here.

pub(crate) mod net;
pub(crate) mod rdma;
