// SPDX-License-Identifier: GPL-2.0

//! rroce: a software RoCEv2 RDMA device.
//!
//! The driver is safe Rust: everything that touches C lives in the
//! abstraction layer under `rust/`, compiled into this crate.

#![deny(unsafe_code)]

use kernel::prelude::*;

#[allow(unsafe_code)]
#[path = "../../../../rust/bindings/mod.rs"]
mod bindings;

#[allow(unsafe_code)]
#[path = "../../../../rust/kernel/mod.rs"]
mod kernel_ext;

use kernel_ext::rdma;

module! {
    type: Rroce,
    name: "rroce",
    author: "The rroce developers",
    description: "Software RoCEv2 RDMA device",
    license: "GPL",
}

struct Rroce;

impl kernel::Module for Rroce {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let mtu = rdma::Mtu::for_netdev_mtu(1500).map_or(0, rdma::Mtu::bytes);
        pr_info!(
            "loaded (driver id {}, path MTU {} on a 1500-byte netdev)\n",
            rdma::DRIVER_ID_RXE,
            mtu
        );
        Ok(Rroce)
    }
}

impl Drop for Rroce {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
