// SPDX-License-Identifier: GPL-2.0

//! Sending RoCEv2 packets: build the transport headers and payload in an
//! skb, route it with the kernel's own route lookup, seal it with the ICRC,
//! and hand it to IP, or straight back to our receive path when the
//! destination is an address of this host.

use crate::kernel_ext::{
    crc32_le,
    net::{Route, SkBuff},
    rdma::{Av, Device, Driver},
};
use crate::limits::PORT;
use crate::proto::{
    icrc,
    ip::{IpHeader, UDP_LEN},
    packet::{packet_len, pad_len, Headers},
};
use kernel::prelude::*;

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
    let route = skb.route(&netdev, &av.sgid, &av.dgid)?;
    let ip = IpHeader {
        saddr: av.sgid,
        daddr: av.dgid,
        tclass: av.traffic_class,
        hop_limit: av.hop_limit.max(1),
    };
    skb.push_ip_udp(ip.len(), ip.is_v4(), |hdr| {
        ip.write_with_udp(sport, len, hdr).map_err(|_| EINVAL)?;
        Ok(())
    })?;
    seal(&mut skb, ip.len())?;
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

/// Writes the ICRC over the packet, whose data starts at an IP header of
/// `ip_len` bytes.
fn seal(skb: &mut SkBuff, ip_len: usize) -> Result {
    let data = skb.data_mut();
    let body_end = data.len().checked_sub(icrc::LEN).ok_or(EINVAL)?;
    let crc = {
        let ip = data.get(..ip_len).ok_or(EINVAL)?;
        let udp = data.get(ip_len..ip_len + UDP_LEN).ok_or(EINVAL)?;
        let covered = data.get(ip_len + UDP_LEN..body_end).ok_or(EINVAL)?;
        icrc::compute(crc32_le, ip, udp, covered).map_err(|_| EINVAL)?
    };
    data[body_end..].copy_from_slice(&crc);
    Ok(())
}

/// The parts of a received packet: IP header, UDP header, UDP payload.
pub(crate) fn split_received(skb: &SkBuff) -> Option<(&[u8], &[u8], &[u8])> {
    let data = skb.data();
    let udp = data.get(..UDP_LEN)?;
    let payload = data.get(UDP_LEN..)?;
    Some((skb.ip_header(), udp, payload))
}

/// Checks a received packet's ICRC.
pub(crate) fn icrc_ok(ip: &[u8], udp: &[u8], payload: &[u8]) -> bool {
    icrc::verify(crc32_le, ip, udp, payload).is_ok()
}
