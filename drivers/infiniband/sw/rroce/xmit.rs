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
    cnp,
    headers::HeaderError,
    icrc,
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
    let ip = ip_header(stamp, av);
    if payload_len >= ONE_PASS && stamp.crc.copies_in_one_pass() {
        return send_in_one_pass(dev, stamp, flow, &ip, &headers, route, len, fill);
    }
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
    let outer = |hdr: &mut [u8]| ip.write_with_udp(flow.sport, len, hdr).map(|_| ());
    Ok(send_routed(dev, stamp, &ip, outer, route, skb, false)?)
}

/// [`send`] for a payload whose ICRC is taken as it is copied in: the
/// headers, IP's to the transport's, laid out at the end of a block where
/// the CRC takes them first, then the payload, each byte read once. `len`
/// is the packet's, from the BTH to the ICRC.
#[allow(clippy::too_many_arguments)]
fn send_in_one_pass<T: Driver, E: From<Error>>(
    dev: &Device<T>,
    stamp: Stamp<'_>,
    flow: &Flow,
    ip: &IpHeader,
    headers: &Headers,
    route: Route,
    len: usize,
    fill: impl FnOnce(&mut Fill<'_>) -> Result<(), E>,
) -> Result<usize, E> {
    let outer_len = ip.len() + ip::UDP_LEN;
    let hlen = headers.wire_len();
    let pad = usize::from(headers.bth.pad);
    let rest = len.checked_sub(hlen + icrc::LEN).ok_or(EINVAL)?;
    let at = icrc::HEAD_BLOCK
        .checked_sub(outer_len + hlen)
        .ok_or(EINVAL)?;
    let mut block = [0u8; icrc::HEAD_BLOCK];
    ip.write_with_udp(flow.sport, len, &mut block[at..])
        .map_err(|_| EINVAL)?;
    headers
        .write(&mut block[at + outer_len..])
        .map_err(|_| EINVAL)?;
    let mut masked = None;
    let skb = build(dev, &route, len, |buf| -> Result<(), E> {
        buf.put(&block[at + outer_len..])?;
        let m = icrc::mask_head(&mut block, at, ip.len()).map_err(|_| EINVAL)?;
        let head = masked.insert(m).crc_bytes(&block);
        let state = buf.part(rest, |part| -> Result<_, E> {
            part.sum(stamp.crc, head);
            fill(part)?;
            if pad > 0 {
                part.put(&[0; 3][..pad])?;
            }
            Ok(part.take_sum())
        })?;
        buf.put(&icrc::finish(state.ok_or(EINVAL)?))?;
        Ok(())
    })?;
    if let Some(masked) = masked {
        icrc::unmask_head(&mut block, masked);
    }
    let outer = block.get(at..at + outer_len).ok_or(EINVAL)?;
    let outer = |hdr: &mut [u8]| -> Result<(), HeaderError> {
        hdr.get_mut(..outer.len())
            .ok_or(HeaderError::Range)?
            .copy_from_slice(outer);
        Ok(())
    };
    Ok(send_routed(dev, stamp, ip, outer, route, skb, true)?)
}

// Every packet's headers fit a head block, IPv6's with the longest.
const _: () = assert!(ip::IPV6_LEN + ip::UDP_LEN + MAX_HEADER_LEN <= icrc::HEAD_BLOCK);

/// The shortest payload whose ICRC is taken as it is copied in
/// (`Crc32::copy`): a whole packet's at the usual path MTU. The pass saves
/// some 0.3 instructions a byte, and laying the headers out for it costs
/// about 200 a packet: with 64-byte payloads, a SEND took 1.6 % more.
const ONE_PASS: usize = 1024;

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
    let ip = ip_header(stamp, av);
    let outer = |hdr: &mut [u8]| ip.write_with_udp(flow.sport, len, hdr).map(|_| ());
    send_routed(dev, stamp, &ip, outer, route, skb, false)
}

/// The IP header of a packet to `av`.
fn ip_header(stamp: Stamp<'_>, av: &Av) -> IpHeader {
    IpHeader {
        saddr: av.sgid,
        daddr: av.dgid,
        tclass: if stamp.ecn_capable {
            ip::ecn_capable(av.traffic_class)
        } else {
            av.traffic_class
        },
        hop_limit: av.hop_limit.max(1),
    }
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

/// Sends `skb`, a UDP payload with its ICRC at the end if `sealed`, else
/// room for it, under `ip`, whose header and the UDP header `outer` writes,
/// by `route`, and stamps it; returns the length of the IP datagram.
fn send_routed<T: Driver>(
    dev: &Device<T>,
    stamp: Stamp<'_>,
    ip: &IpHeader,
    outer: impl FnOnce(&mut [u8]) -> Result<(), HeaderError>,
    route: Route,
    mut skb: SkBuff,
    sealed: bool,
) -> Result<usize> {
    skb.push_ip_udp(ip.len(), ip.is_v4(), |hdr| outer(hdr).map_err(|_| EINVAL))?;
    if !sealed {
        seal(stamp.crc, &mut skb, ip.len())?;
    }
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
