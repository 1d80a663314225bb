// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 UDP sockets: port 4791 on IPv4 and IPv6 in each network
//! namespace that has a device, opened with the first device there and closed
//! with the last, or when the namespace ends; and in the initial namespace
//! while there is a device anywhere (see [`TransportUse`]). The C rxe of 6.12
//! holds the port of the initial namespace for as long as it is loaded, and
//! works in no other namespace.

use crate::counters::Counter;
use crate::kernel_ext::{
    crc32::Crc32,
    errno::eaddrinuse,
    net::{
        namespace::Net,
        udp_tunnel::{EncapReceiver, Family, UdpTunnel},
        Datagram, NetDevice, SkBuff,
    },
    rdma::{Device, Driver, Registry},
};
use crate::proto::{
    cnp,
    icrc::{self, IcrcError},
    ip::UDP_LEN,
    packet::Packet,
};
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

/// A received datagram that checked out.
pub(crate) enum Received<'a> {
    /// A request or response, and the IP header it came with.
    Packet(Packet<'a>, &'a [u8]),
    /// A CNP for this QP number, and the IP header it came with.
    Cnp(u32, &'a [u8]),
}

/// Checks a received datagram, which starts at its UDP header: its ICRC
/// (by `crc`), then its headers. Returns what it is, or the drop counter
/// that says why it is dropped.
pub(crate) fn parse<'a>(crc: &Crc32, skb: &'a mut SkBuff) -> Result<Received<'a>, Counter> {
    let (datagram, ip_len) = skb.datagram().ok_or(Counter::DropBadHeader)?;
    let (ip, payload) = icrc_checked(crc, datagram, ip_len)?;
    if let Some(qpn) = cnp::parse(payload) {
        return Ok(Received::Cnp(qpn, ip));
    }
    let pkt = Packet::parse(payload, MAX_PAYLOAD).map_err(|_| Counter::DropBadHeader)?;
    Ok(Received::Packet(pkt, ip))
}

/// The IP header and the UDP payload of `datagram`, an IP header of
/// `ip_len` bytes and a UDP datagram, if its ICRC checks out: in place,
/// with one CRC call over all of it, where the bytes are its own and its IP
/// header has no options; else over a copy of its headers, then the rest.
fn icrc_checked<'a>(
    crc: &Crc32,
    datagram: Datagram<'a>,
    ip_len: usize,
) -> Result<(&'a [u8], &'a [u8]), Counter> {
    let update = |c, b: &[u8]| crc.update(c, b);
    if datagram.len() < ip_len + UDP_LEN {
        return Err(Counter::DropBadHeader);
    }
    let (checked, bytes): (bool, &'a [u8]) = match datagram {
        Datagram::Own(d) => match icrc::verify_in_place(update, d, ip_len) {
            Ok(()) => (true, d),
            Err(IcrcError::IpHeader) => (false, d),
            Err(_) => return Err(Counter::DropBadIcrc),
        },
        Datagram::Shared(d) => (false, d),
    };
    // Within the length checked above.
    let (ip, udp) = bytes.split_at(ip_len);
    let (udp, payload) = udp.split_at(UDP_LEN);
    if !checked {
        icrc::verify(update, ip, udp, payload).map_err(|_| Counter::DropBadIcrc)?;
    }
    Ok((ip, payload))
}

/// The sockets of one network namespace, and how many devices use them.
struct NetSockets<T: Driver> {
    /// The namespace's [`Net::cookie`].
    net: u64,
    users: usize,
    _v4: UdpTunnel<Receiver<T>>,
    _v6: UdpTunnel<Receiver<T>>,
}

/// The sockets of each namespace in use, in slots that a namespace leaving
/// frees.
struct Nets<T: Driver>(KVec<Option<NetSockets<T>>>);

impl<T: Driver> Nets<T> {
    fn slot(&mut self, net: u64) -> Option<&mut Option<NetSockets<T>>> {
        self.0
            .iter_mut()
            .find(|slot| slot.as_ref().is_some_and(|s| s.net == net))
    }

    /// One more user of the sockets of `net`, opened unless they are.
    fn get(&mut self, net: &Net) -> Result {
        if let Some(Some(s)) = self.slot(net.cookie()) {
            s.users += 1;
            return Ok(());
        }
        let sockets = NetSockets {
            net: net.cookie(),
            users: 1,
            _v4: open(net, Family::V4)?,
            _v6: open(net, Family::V6)?,
        };
        match self.0.iter_mut().find(|slot| slot.is_none()) {
            Some(free) => *free = Some(sockets),
            None => self.0.push(Some(sockets), GFP_KERNEL)?,
        }
        Ok(())
    }

    /// One user fewer of the sockets of `net`, closed with the last; none
    /// left if the namespace has ended.
    fn put(&mut self, net: u64) {
        if let Some(slot) = self.slot(net) {
            if let Some(s) = slot.as_mut() {
                s.users -= 1;
                if s.users == 0 {
                    *slot = None;
                }
            }
        }
    }
}

/// Opens the RoCEv2 port of `family` in `net`.
fn open<T: Driver>(net: &Net, family: Family) -> Result<UdpTunnel<Receiver<T>>> {
    UdpTunnel::open(net, family, ROCE_V2_PORT).inspect_err(|e| {
        if *e == eaddrinuse() {
            pr_err!(
                "UDP port {} is taken (by rdma_rxe?): unload it first\n",
                ROCE_V2_PORT
            );
        }
    })
}

/// The transport all devices of driver `T` share.
#[pin_data]
pub(crate) struct Transport<T: Driver> {
    #[pin]
    nets: Mutex<Nets<T>>,
}

impl<T: Driver> Transport<T> {
    /// No sockets yet.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nets <- new_mutex!(Nets(KVec::new())),
        })
    }

    /// Closes the sockets of namespace `net`, which ends, though devices
    /// there may still be on their way out, holding [`TransportUse`]s.
    pub(crate) fn net_exit(&self, net: &Net) {
        if let Some(slot) = self.nets.lock().slot(net.cookie()) {
            *slot = None;
        }
    }
}

/// One device's use of the sockets of its netdev's namespace, and of the
/// initial namespace's.
///
/// rdma_rxe takes every device of its driver id, which rroce shares, for
/// one of its own when the device's netdev changes state, and writes to it:
/// it must not be loaded while rroce has a device in any namespace. It
/// binds port 4791 of the initial namespace as it loads, so holding that
/// port keeps it out, and tells that it is in.
pub(crate) struct TransportUse<T: Driver<Shared = Transport<T>>> {
    devices: Arc<Registry<T>>,
    net: u64,
}

impl<T: Driver<Shared = Transport<T>>> TransportUse<T> {
    /// Opens the sockets of the initial namespace and of `netdev`'s, unless
    /// another device has them open.
    pub(crate) fn new(devices: &Arc<Registry<T>>, netdev: &NetDevice) -> Result<Self> {
        // The namespace cannot end while `netdev` is in it: an exit that
        // follows finds the sockets and closes them.
        netdev.with_net(|net| {
            let mut nets = devices.shared().nets.lock();
            nets.get(Net::initial())?;
            if let Err(e) = nets.get(net) {
                nets.put(Net::initial().cookie());
                return Err(e);
            }
            Ok(Self {
                devices: devices.clone(),
                net: net.cookie(),
            })
        })
    }
}

impl<T: Driver<Shared = Transport<T>>> Drop for TransportUse<T> {
    fn drop(&mut self) {
        let mut nets = self.devices.shared().nets.lock();
        nets.put(self.net);
        nets.put(Net::initial().cookie());
    }
}
