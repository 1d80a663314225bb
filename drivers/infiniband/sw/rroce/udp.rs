// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 UDP sockets: port 4791 on IPv4 and IPv6, opened with the first
//! device and closed with the last, so that rroce holds the port only while
//! it has a device (the C rxe holds it for as long as it is loaded).

use crate::counters::Counter;
use crate::device::RroceDevice;
use crate::kernel_ext::{
    errno::eaddrinuse,
    net::{
        udp_tunnel::{EncapReceiver, Family, UdpTunnel},
        SkBuff,
    },
    rdma::{Device, Registry},
};
use crate::proto::packet::Packet;
use crate::xmit;
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

/// The RoCEv2 destination port (IBTA Annex A17).
pub(crate) const ROCE_V2_PORT: u16 = 4791;

/// The largest payload of any packet: the largest path MTU; each QP then
/// checks its own.
const MAX_PAYLOAD: usize = 4096;

/// Receives RoCEv2 datagrams.
pub(crate) struct Receiver;

impl EncapReceiver for Receiver {
    fn receive(skb: SkBuff) {
        // Softirq context: queue it for the device's receive work.
        Device::<RroceDevice>::deliver(skb);
    }
}

/// Handles a packet for `dev`: checks it and gives it to its QP. Anything
/// malformed, unsealed or for no QP is dropped.
pub(crate) fn receive(dev: &Device<RroceDevice>, skb: SkBuff) {
    let data = dev.data();
    data.count(Counter::RcvdPkts);
    let Some((ip, udp, payload)) = xmit::split_received(&skb) else {
        data.count(Counter::DropBadHeader);
        return;
    };
    if !xmit::icrc_ok(ip, udp, payload) {
        data.count(Counter::DropBadIcrc);
        return;
    }
    let Ok(pkt) = Packet::parse(payload, MAX_PAYLOAD) else {
        data.count(Counter::DropBadHeader);
        return;
    };
    match data.qps().get(pkt.headers.bth.dest_qpn) {
        Some(qp) => qp.receive(dev, &pkt, ip),
        None => data.count(Counter::DropUnknownQp),
    }
}

/// The open sockets.
struct Sockets {
    _v4: UdpTunnel<Receiver>,
    _v6: UdpTunnel<Receiver>,
}

/// The sockets and how many devices use them.
struct State {
    users: usize,
    sockets: Option<Sockets>,
}

/// The transport all rroce devices share.
#[pin_data]
pub(crate) struct Transport {
    #[pin]
    state: Mutex<State>,
}

impl Transport {
    /// No sockets yet.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            state <- new_mutex!(State { users: 0, sockets: None }),
        })
    }
}

/// One device's use of the transport; the last one to go closes the sockets.
pub(crate) struct TransportUse {
    devices: Arc<Registry<RroceDevice>>,
}

impl TransportUse {
    /// Opens the sockets unless another device already did.
    pub(crate) fn new(devices: &Arc<Registry<RroceDevice>>) -> Result<Self> {
        let mut state = devices.shared().state.lock();
        if state.sockets.is_none() {
            let open = |family| {
                UdpTunnel::open(family, ROCE_V2_PORT).inspect_err(|e| {
                    if *e == eaddrinuse() {
                        pr_err!(
                            "UDP port {} is taken (by rdma_rxe?): unload it first\n",
                            ROCE_V2_PORT
                        );
                    }
                })
            };
            state.sockets = Some(Sockets {
                _v4: open(Family::V4)?,
                _v6: open(Family::V6)?,
            });
        }
        state.users += 1;
        Ok(Self {
            devices: devices.clone(),
        })
    }
}

impl Drop for TransportUse {
    fn drop(&mut self) {
        let mut state = self.devices.shared().state.lock();
        state.users -= 1;
        if state.users == 0 {
            state.sockets = None;
        }
    }
}
