// SPDX-License-Identifier: GPL-2.0

//! Sending RoCEv2 packets: build the transport headers and payload in an
//! skb, route it with the kernel's own route lookup, seal it with the ICRC,
//! and hand it to IP, or straight back to our receive path when the
//! destination is an address of this host.

use crate::kernel_ext::{
    crc32_le,
    net::{Path, Route, SkBuff},
    rdma::{Av, Device, Driver},
};
use crate::limits::PORT;
use crate::proto::{
    icrc,
    packet::{packet_len, pad_len, Headers},
};
use kernel::prelude::*;

/// IPv4 header without options, and UDP header, lengths.
const IPV4_HEADER_LEN: usize = 20;
const IPV6_HEADER_LEN: usize = 40;
const UDP_HEADER_LEN: usize = 8;

/// Whether a GID is an IPv4-mapped IPv6 address.
pub(crate) fn is_v4_mapped(gid: &[u8; 16]) -> bool {
    gid[..10].iter().all(|&b| b == 0) && gid[10] == 0xff && gid[11] == 0xff
}

/// The UDP source port of a QP's packets: fixed per QP so that a flow stays
/// on one path, and spread over QPs for ECMP, as the C rxe does.
pub(crate) fn source_port(qpn: u32) -> u16 {
    0xc000 | (qpn.wrapping_mul(0x9e37_79b1) >> 18) as u16
}

/// Sends one packet to `av` with `headers` and a payload of `payload_len`
/// bytes, which `fill` writes.
pub(crate) fn send<T: Driver, E: From<Error>>(
    dev: &Device<T>,
    av: &Av,
    sport: u16,
    mut headers: Headers,
    payload_len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
) -> Result<(), E> {
    let opcode = headers.bth.opcode;
    let len = packet_len(opcode, payload_len).ok_or(EINVAL)?;
    headers.bth.pad = pad_len(payload_len);
    let mut skb = SkBuff::alloc(len)?;
    let buf = skb.data_mut();
    let hlen = headers.write(buf).map_err(|_| EINVAL)?;
    fill(buf.get_mut(hlen..hlen + payload_len).ok_or(EINVAL)?)?;

    let netdev = dev.netdev(PORT).ok_or(ENODEV)?;
    let path = Path {
        saddr: av.sgid,
        daddr: av.dgid,
        sport,
        tclass: av.traffic_class,
        hop_limit: av.hop_limit.max(1),
    };
    let route = skb.route(&netdev, &path)?;
    seal(&mut skb, is_v4_mapped(&av.dgid))?;
    match route {
        Route::Out => {
            // A full queue drops the packet; the sender's timer recovers.
            let _ = skb.ip_output();
        }
        Route::Local => {
            skb.pull_to_transport();
            dev.deliver_local(skb);
        }
    }
    Ok(())
}

/// Writes the ICRC over the packet, whose data starts at the IP header.
fn seal(skb: &mut SkBuff, v4: bool) -> Result {
    let ip_len = if v4 { IPV4_HEADER_LEN } else { IPV6_HEADER_LEN };
    let data = skb.data_mut();
    let body_end = data.len().checked_sub(icrc::LEN).ok_or(EINVAL)?;
    let crc = {
        let ip = data.get(..ip_len).ok_or(EINVAL)?;
        let udp = data.get(ip_len..ip_len + UDP_HEADER_LEN).ok_or(EINVAL)?;
        let covered = data.get(ip_len + UDP_HEADER_LEN..body_end).ok_or(EINVAL)?;
        icrc::compute(crc32_le, ip, udp, covered).map_err(|_| EINVAL)?
    };
    data[body_end..].copy_from_slice(&crc);
    Ok(())
}

/// The parts of a received packet: IP header, UDP header, UDP payload.
pub(crate) fn split_received(skb: &SkBuff) -> Option<(&[u8], &[u8], &[u8])> {
    let data = skb.data();
    let udp = data.get(..UDP_HEADER_LEN)?;
    let payload = data.get(UDP_HEADER_LEN..)?;
    Some((skb.ip_header(), udp, payload))
}

/// Checks a received packet's ICRC.
pub(crate) fn icrc_ok(ip: &[u8], udp: &[u8], payload: &[u8]) -> bool {
    icrc::verify(crc32_le, ip, udp, payload).is_ok()
}
