// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 UDP sockets: port 4791 on IPv4 and IPv6, opened with the first
//! device and closed with the last, so that rroce holds the port only while
//! it has a device (the C rxe holds it for as long as it is loaded).

use crate::counters::Counter;
use crate::kernel_ext::{
    crc32::Crc32,
    errno::eaddrinuse,
    net::{
        udp_tunnel::{EncapReceiver, Family, UdpTunnel},
        SkBuff,
    },
    rdma::{Device, Driver, Registry},
};
use crate::proto::packet::Packet;
use crate::xmit;
use core::marker::PhantomData;
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

/// Receives RoCEv2 datagrams for the devices of driver `T`.
pub(crate) struct Receiver<T>(PhantomData<T>);

impl<T: Driver> EncapReceiver for Receiver<T> {
    fn receive(skb: SkBuff) {
        // Softirq context: queue it for the device's receive work.
        Device::<T>::deliver(skb);
    }
}

/// Checks a received datagram, which starts at its UDP header: its ICRC
/// (by `crc`), then its headers. Returns the packet and the IP header it
/// came with, or the drop counter that says why it is dropped.
pub(crate) fn parse<'a>(crc: &Crc32, skb: &'a SkBuff) -> Result<(Packet<'a>, &'a [u8]), Counter> {
    let (ip, udp, payload) = xmit::split_received(skb).ok_or(Counter::DropBadHeader)?;
    if !xmit::icrc_ok(crc, ip, udp, payload) {
        return Err(Counter::DropBadIcrc);
    }
    let pkt = Packet::parse(payload, MAX_PAYLOAD).map_err(|_| Counter::DropBadHeader)?;
    Ok((pkt, ip))
}

/// The open sockets.
struct Sockets<T: Driver> {
    _v4: UdpTunnel<Receiver<T>>,
    _v6: UdpTunnel<Receiver<T>>,
}

/// The sockets and how many devices use them.
struct State<T: Driver> {
    users: usize,
    sockets: Option<Sockets<T>>,
}

/// The transport all devices of driver `T` share.
#[pin_data]
pub(crate) struct Transport<T: Driver> {
    #[pin]
    state: Mutex<State<T>>,
}

impl<T: Driver> Transport<T> {
    /// No sockets yet.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            state <- new_mutex!(State { users: 0, sockets: None }),
        })
    }
}

/// One device's use of the transport; the last one to go closes the sockets.
pub(crate) struct TransportUse<T: Driver<Shared = Transport<T>>> {
    devices: Arc<Registry<T>>,
}

impl<T: Driver<Shared = Transport<T>>> TransportUse<T> {
    /// Opens the sockets unless another device already did.
    pub(crate) fn new(devices: &Arc<Registry<T>>) -> Result<Self> {
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

impl<T: Driver<Shared = Transport<T>>> Drop for TransportUse<T> {
    fn drop(&mut self) {
        let mut state = self.devices.shared().state.lock();
        state.users -= 1;
        if state.users == 0 {
            state.sockets = None;
        }
    }
}
