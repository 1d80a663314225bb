// SPDX-License-Identifier: GPL-2.0

//! Sending RoCEv2 packets: build the transport headers and payload in an
//! skb, route it with the kernel's own route lookup, seal it with the ICRC,
//! and hand it to IP, or straight back to our receive path when the
//! destination is an address of this host (shown to packet capture on the
//! netdev if the `capture_loopback` module parameter asks for it).

use crate::kernel_ext::{
    crc32::Crc32,
    fill::Fill,
    net::{route::RouteCache, Route, SkBuff},
    rdma::{Av, Device, Driver, Qpn},
};
use crate::limits::PORT;
use crate::proto::{
    cnp, icrc,
    ip::{self, IpHeader},
    opcode::MAX_HEADER_LEN,
    packet::{packet_len, pad_len, Headers},
};
use kernel::{new_spinlock, prelude::*, sync::SpinLock};

/// How a QP's packets leave: from one UDP source port, by the route they
/// took last.
#[pin_data]
pub(crate) struct Flow {
    sport: u16,
    #[pin]
    route: SpinLock<RouteCache>,
}

impl Flow {
    /// The flow of QP `qpn`: its source port is fixed, so that its packets
    /// stay on one path, and spread over QPs for ECMP, as the C rxe does.
    pub(crate) fn new(qpn: Qpn) -> impl PinInit<Self> {
        pin_init!(Self {
            sport: 0xc000 | (qpn.get().wrapping_mul(0x9e37_79b1) >> 18) as u16,
            route <- new_spinlock!(RouteCache::new()),
        })
    }
}

/// What the device puts on each packet it sends.
#[derive(Clone, Copy)]
pub(crate) struct Stamp<'a> {
    /// Seals the ICRC.
    pub(crate) crc: &'a Crc32,
    /// Whether packets leave ECN-capable (ECT(0)), for congestion control.
    pub(crate) ecn_capable: bool,
}

/// Sends one packet of `flow` to `av` with `headers` and a payload of
/// `payload_len` bytes, which `fill` appends, stamped by `stamp`. Returns
/// the length of the IP datagram sent.
pub(crate) fn send<T: Driver, E: From<Error>>(
    dev: &Device<T>,
    stamp: Stamp<'_>,
    av: &Av,
    flow: &Flow,
    mut headers: Headers,
    payload_len: usize,
    fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
) -> Result<usize, E> {
    let opcode = headers.bth.opcode;
    let len = packet_len(opcode, payload_len).ok_or(EINVAL)?;
    let pad = pad_len(payload_len);
    headers.bth.pad = pad;
    let route = route(dev, av, flow)?;
    let skb = build(dev, &route, len, |buf| -> Result<(), E> {
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let hlen = headers.write(&mut hdr).map_err(|_| EINVAL)?;
        buf.put(hdr.get(..hlen).ok_or(EINVAL)?)?;
        let before = buf.remaining();
        fill(buf)?;
        if before - buf.remaining() != payload_len {
            return Err(EINVAL.into());
        }
        // The pad, and room for the ICRC, which `seal` writes.
        buf.put(&[0; 3 + icrc::LEN][..usize::from(pad) + icrc::LEN])?;
        Ok(())
    })?;
    Ok(send_routed(dev, stamp, av, flow, route, skb, len)?)
}

/// Sends a CNP to QP `dest_qpn` at `av`, from `flow`; returns the length
/// of the IP datagram sent.
pub(crate) fn send_cnp<T: Driver>(
    dev: &Device<T>,
    stamp: Stamp<'_>,
    av: &Av,
    flow: &Flow,
    dest_qpn: Qpn,
) -> Result<usize> {
    let len = cnp::LEN + icrc::LEN;
    let route = route(dev, av, flow)?;
    let skb = build(dev, &route, len, |buf| -> Result {
        buf.put(&cnp::write(dest_qpn.get()))?;
        buf.put(&[0; icrc::LEN])
    })?;
    send_routed(dev, stamp, av, flow, route, skb, len)
}

/// Where a packet of `flow` to `av` goes.
fn route<T: Driver>(dev: &Device<T>, av: &Av, flow: &Flow) -> Result<Route> {
    let netdev = || dev.netdev(PORT).ok_or(ENODEV);
    let mut cache = flow.route.lock();
    Ok(cache.output(netdev, &av.sgid, &av.dgid)?.route())
}

/// Room in the buffer of each packet the device sends itself: for a whole
/// packet at the usual path MTU (1024 bytes, as an Ethernet MTU of 1500
/// allows), so that the buffer of any such packet, kept once handled, fits
/// the next.
const LOCAL_ROOM: usize = MAX_HEADER_LEN + 1024 + icrc::LEN;

/// A packet of `len` bytes for `route`, which `fill` writes.
fn build<T: Driver, E: From<Error>>(
    dev: &Device<T>,
    route: &Route,
    len: usize,
    fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
) -> Result<SkBuff, E> {
    match route {
        Route::Out(_) => SkBuff::build(len, fill),
        Route::Local => dev.build_local(len, LOCAL_ROOM, fill),
    }
}

/// Sends `skb`, a UDP payload of `len` bytes with room for its ICRC at the
/// end, from `flow` to `av` by `route`, and stamps it; returns the length
/// of the IP datagram.
fn send_routed<T: Driver>(
    dev: &Device<T>,
    stamp: Stamp<'_>,
    av: &Av,
    flow: &Flow,
    route: Route,
    mut skb: SkBuff,
    len: usize,
) -> Result<usize> {
    let ip = IpHeader {
        saddr: av.sgid,
        daddr: av.dgid,
        tclass: if stamp.ecn_capable {
            ip::ecn_capable(av.traffic_class)
        } else {
            av.traffic_class
        },
        hop_limit: av.hop_limit.max(1),
    };
    skb.push_ip_udp(ip.len(), ip.is_v4(), |hdr| {
        ip.write_with_udp(flow.sport, len, hdr)
            .map_err(|_| EINVAL)?;
        Ok(())
    })?;
    seal(stamp.crc, &mut skb, ip.len())?;
    let sent = skb.len();
    match route {
        Route::Out(dst) => {
            skb.set_route(dst);
            // A full queue drops the packet; the sender's timer recovers.
            let _ = skb.ip_output();
        }
        Route::Local => {
            skb.show_to_taps(|| dev.netdev(PORT));
            skb.pull_to_transport();
            dev.deliver_local(skb);
        }
    }
    Ok(sent)
}

/// Writes the ICRC over the packet, whose data starts at an IP header of
/// `ip_len` bytes: in place, with one CRC call over all of it.
fn seal(crc: &Crc32, skb: &mut SkBuff, ip_len: usize) -> Result {
    let datagram = skb.data_mut().ok_or(EINVAL)?;
    icrc::seal_in_place(|c, b| crc.update(c, b), datagram, ip_len).map_err(|_| EINVAL)
}
