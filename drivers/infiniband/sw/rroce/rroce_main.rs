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

#[allow(unsafe_code)]
#[path = "../../../../rust/trace/mod.rs"]
mod trace;

mod abi;
mod ah;
mod answer_ring;
mod answers;
mod completer;
mod counters;
mod cq;
mod device;
mod device_services;
mod ids;
mod kernel_posts;
mod limits;
mod local_mem;
mod mcast;
mod mr;
mod mw;
mod netdev;
mod pool;
// The protocol core: plain `no_std` Rust, also built on the host
// (tools/proto-host), where its tests use what the driver does not.
#[allow(dead_code)]
mod proto;
mod qp;
mod qp_core;
mod recv_queue;
mod requester;
mod responder;
mod send_queue;
mod srq;
mod udp;
mod user_ring;
mod work;
mod xmit;

use kernel_ext::{net::NotifierRegistration, rdma};

module! {
    type: Rroce,
    name: "rroce",
    author: "The rroce developers",
    description: "Software RoCEv2 RDMA device",
    license: "GPL",
    alias: ["rdma-link-rroce"],
}

struct Rroce {
    // Dropped in this order: no more netdev events, then no more devices.
    _netdev_events: NotifierRegistration<netdev::NetdevEvents>,
    _devices: rdma::Registration<device::RroceDevice>,
}

impl kernel::Module for Rroce {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let devices = rdma::Registration::new(module, udp::Transport::new())?;
        let netdev_events = NotifierRegistration::new()?;
        pr_info!("loaded\n");
        Ok(Rroce {
            _netdev_events: netdev_events,
            _devices: devices,
        })
    }
}

impl Drop for Rroce {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
