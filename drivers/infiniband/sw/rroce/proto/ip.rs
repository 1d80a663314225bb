// SPDX-License-Identifier: GPL-2.0

//! The IPv4, IPv6 and UDP headers in front of a RoCEv2 packet.
//!
//! The sender writes them before it computes the ICRC, which covers them
//! but for the fields routers may change (`icrc`), so they must be final:
//! only the IPv4 checksum is left for the IP layer, and the ICRC masks it.
//! The IPv4 identification is 0: the packets are never fragmented (DF),
//! and the kernel's IP layer does the same for DF packets of no socket.

use super::wire::{HeaderError, Writer};

/// The UDP port of RoCEv2 (IANA).
pub(crate) const ROCE_V2_PORT: u16 = 4791;
/// An IPv4 header without options.
pub(crate) const IPV4_LEN: usize = 20;
/// An IPv6 header without extension headers.
pub(crate) const IPV6_LEN: usize = 40;
/// A UDP header.
pub(crate) const UDP_LEN: usize = 8;

const IPPROTO_UDP: u8 = 17;
/// IPv4 "don't fragment".
const IP_DF: u16 = 0x4000;

/// The IP header of a packet: IPv4 when both addresses are IPv4-mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IpHeader {
    /// Source and destination, IPv6 or IPv4-mapped.
    pub(crate) saddr: [u8; 16],
    pub(crate) daddr: [u8; 16],
    /// IPv4 TOS or IPv6 traffic class.
    pub(crate) tclass: u8,
    /// IPv4 TTL or IPv6 hop limit.
    pub(crate) hop_limit: u8,
}

/// The first 12 bytes of an IPv4-mapped address.
const V4_MAPPED: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/// Whether an address is IPv4-mapped (`::ffff:a.b.c.d`).
pub(crate) fn is_v4_mapped(addr: &[u8; 16]) -> bool {
    addr[..12] == V4_MAPPED
}

/// Whether `gid` is an IP multicast address: `ff00::/8`, or an IPv4 one
/// (`224.0.0.0/4`) mapped.
pub(crate) fn is_multicast(gid: &[u8; 16]) -> bool {
    gid[0] == 0xff || (is_v4_mapped(gid) && gid[12] & 0xf0 == 0xe0)
}

/// Traffic class `tclass` with its ECN bits ECN-capable (ECT(0)), so that a
/// congested switch marks the packet rather than dropping it.
pub(crate) fn ecn_capable(tclass: u8) -> u8 {
    (tclass & !3) | 2
}

/// Whether a switch marked the packet with IP header `ip` Congestion
/// Experienced: both ECN bits of its traffic class set.
pub(crate) fn congestion_experienced(ip: &[u8]) -> bool {
    let ecn = match ip.first().map(|b| b >> 4) {
        Some(4) => ip.get(1).map(|tos| tos & 3),
        Some(6) => ip.get(1).map(|b| (b >> 4) & 3),
        _ => None,
    };
    ecn == Some(3)
}

/// The address a received packet was sent to, from its IP header, as a
/// GID (IPv4 mapped); `None` if `ip` is no whole IPv4 or IPv6 header.
pub(crate) fn destination_gid(ip: &[u8]) -> Option<[u8; 16]> {
    gid_at(ip, 16, 24)
}

/// Whether the packet with IP header `ip` went from `src` to `dst` (GIDs,
/// IPv4 mapped): compared where they lie, for each packet of a connection.
pub(crate) fn is_from_to(ip: &[u8], src: &[u8; 16], dst: &[u8; 16]) -> bool {
    match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= IPV4_LEN => {
            is_v4_mapped(src)
                && is_v4_mapped(dst)
                && ip[12..16] == src[12..]
                && ip[16..20] == dst[12..]
        }
        Some(6) if ip.len() >= IPV6_LEN => ip[8..24] == src[..] && ip[24..40] == dst[..],
        _ => false,
    }
}

/// The address at offset `v4` of an IPv4 header, or `v6` of an IPv6 one.
fn gid_at(ip: &[u8], v4: usize, v6: usize) -> Option<[u8; 16]> {
    let mut gid = [0u8; 16];
    match ip.first()? >> 4 {
        4 if ip.len() >= IPV4_LEN => {
            gid[10] = 0xff;
            gid[11] = 0xff;
            gid[12..].copy_from_slice(&ip[v4..v4 + 4]);
        }
        6 if ip.len() >= IPV6_LEN => gid.copy_from_slice(&ip[v6..v6 + 16]),
        _ => return None,
    }
    Some(gid)
}

impl IpHeader {
    /// Whether it is an IPv4 header.
    pub(crate) fn is_v4(&self) -> bool {
        is_v4_mapped(&self.daddr)
    }

    /// Its length on the wire.
    pub(crate) fn len(&self) -> usize {
        if self.is_v4() {
            IPV4_LEN
        } else {
            IPV6_LEN
        }
    }

    /// Writes the IP and UDP headers of a datagram from UDP port `sport`
    /// with `payload_len` bytes of UDP payload at the start of `out`;
    /// returns their length. The addresses must both be IPv4-mapped or
    /// neither. The IPv4 checksum is left 0 for the IP layer.
    pub(crate) fn write_with_udp(
        &self,
        sport: u16,
        payload_len: usize,
        out: &mut [u8],
    ) -> Result<usize, HeaderError> {
        if is_v4_mapped(&self.saddr) != self.is_v4() {
            return Err(HeaderError::Range);
        }
        let udp_len = UDP_LEN + payload_len;
        let len = self.len() + UDP_LEN;
        let mut w = Writer::new(out, len)?;
        if self.is_v4() {
            let total = u16::try_from(IPV4_LEN + udp_len).map_err(|_| HeaderError::Range)?;
            w.u8(0x45)?;
            w.u8(self.tclass)?;
            w.u16(total)?;
            w.u16(0)?; // identification: 0 with DF set, as the kernel's own (RFC 6864)
            w.u16(IP_DF)?;
            w.u8(self.hop_limit)?;
            w.u8(IPPROTO_UDP)?;
            w.u16(0)?; // checksum: the IP layer's
            w.bytes(&self.saddr[12..])?;
            w.bytes(&self.daddr[12..])?;
        } else {
            let payload = u16::try_from(udp_len).map_err(|_| HeaderError::Range)?;
            // Version 6, traffic class, flow label 0.
            w.u32(6 << 28 | u32::from(self.tclass) << 20)?;
            w.u16(payload)?;
            w.u8(IPPROTO_UDP)?;
            w.u8(self.hop_limit)?;
            w.bytes(&self.saddr)?;
            w.bytes(&self.daddr)?;
        }
        w.u16(sport)?;
        w.u16(ROCE_V2_PORT)?;
        w.u16(u16::try_from(udp_len).map_err(|_| HeaderError::Range)?)?;
        w.u16(0)?; // no UDP checksum: the ICRC covers the packet
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut m = [0u8; 16];
        m[10] = 0xff;
        m[11] = 0xff;
        m[12..].copy_from_slice(&a);
        m
    }

    #[test]
    fn writes_ipv4_and_udp() {
        let h = IpHeader {
            saddr: v4([10, 0, 0, 1]),
            daddr: v4([10, 0, 0, 2]),
            tclass: 0x10,
            hop_limit: 64,
        };
        let mut out = [0xaa; 40];
        assert_eq!(h.write_with_udp(0xc000, 100, &mut out), Ok(28));
        let want: [u8; 28] = [
            0x45, 0x10, 0, 128, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, //
            0xc0, 0, 0x12, 0xb7, 0, 108, 0, 0,
        ];
        assert_eq!(out[..28], want);
        assert_eq!(out[28], 0xaa);
    }

    #[test]
    fn writes_ipv6_and_udp() {
        let mut s = [0u8; 16];
        s[0] = 0xfe;
        s[15] = 1;
        let mut d = s;
        d[15] = 2;
        let h = IpHeader {
            saddr: s,
            daddr: d,
            tclass: 0xa5,
            hop_limit: 1,
        };
        let mut out = [0u8; 48];
        assert_eq!(h.write_with_udp(0xc123, 4, &mut out), Ok(48));
        assert_eq!(out[..8], [0x6a, 0x50, 0, 0, 0, 12, 17, 1]);
        assert_eq!(out[8..24], s);
        assert_eq!(out[24..40], d);
        assert_eq!(out[40..48], [0xc1, 0x23, 0x12, 0xb7, 0, 12, 0, 0]);
    }

    #[test]
    fn multicast_gids() {
        let mut v6 = [0u8; 16];
        v6[0] = 0xff;
        v6[1] = 0x0e;
        assert!(is_multicast(&v6));
        assert!(is_multicast(&v4([239, 1, 2, 3])));
        assert!(is_multicast(&v4([224, 0, 0, 1])));
        assert!(!is_multicast(&v4([192, 0, 2, 1])));
        assert!(!is_multicast(&v4([240, 0, 0, 1])));
        // 224.x not mapped is an IPv6 address, not multicast.
        let mut bare = [0u8; 16];
        bare[12] = 224;
        assert!(!is_multicast(&bare));
    }

    #[test]
    fn destination_gid_and_sender() {
        let h = IpHeader {
            saddr: v4([10, 0, 0, 1]),
            daddr: v4([239, 1, 2, 3]),
            tclass: 0,
            hop_limit: 1,
        };
        let mut out = [0u8; 48];
        let n = h.write_with_udp(1, 0, &mut out).unwrap();
        assert_eq!(destination_gid(&out[..n]), Some(v4([239, 1, 2, 3])));
        assert!(is_from_to(&out[..n], &h.saddr, &h.daddr));
        assert!(!is_from_to(&out[..n], &h.daddr, &h.saddr));
        assert!(!is_from_to(&out[..n], &v4([10, 0, 0, 2]), &h.daddr));
        // The same last four bytes, not mapped: another address.
        let mut unmapped = h.saddr;
        unmapped[10] = 0;
        assert!(!is_from_to(&out[..n], &unmapped, &h.daddr));
        let mut d = [0u8; 16];
        d[0] = 0xff;
        d[15] = 7;
        let h6 = IpHeader {
            saddr: [1; 16],
            daddr: d,
            tclass: 0,
            hop_limit: 1,
        };
        let n = h6.write_with_udp(1, 0, &mut out).unwrap();
        assert_eq!(destination_gid(&out[..n]), Some(d));
        assert!(is_from_to(&out[..n], &[1; 16], &d));
        assert!(!is_from_to(&out[..n], &[1; 16], &[1; 16]));
        assert!(!is_from_to(&out[..n], &d, &[1; 16]));
        assert_eq!(destination_gid(&out[..39]), None);
        assert!(!is_from_to(&out[..39], &[1; 16], &d));
        assert!(!is_from_to(&[], &[1; 16], &d));
        assert_eq!(destination_gid(&[0x45; 19]), None);
        assert_eq!(destination_gid(&[0x55; 40]), None);
        assert_eq!(destination_gid(&[]), None);
    }

    #[test]
    fn refuses_mixed_families_and_short_buffers() {
        let mut h = IpHeader {
            saddr: [0; 16],
            daddr: v4([1, 2, 3, 4]),
            tclass: 0,
            hop_limit: 1,
        };
        let mut out = [0u8; 48];
        assert_eq!(h.write_with_udp(1, 0, &mut out), Err(HeaderError::Range));
        h.saddr = v4([4, 3, 2, 1]);
        assert_eq!(
            h.write_with_udp(1, 0, &mut out[..27]),
            Err(HeaderError::Truncated)
        );
        assert_eq!(
            h.write_with_udp(1, 70_000, &mut out),
            Err(HeaderError::Range)
        );
    }

    #[test]
    fn congestion_experienced_v4_and_v6() {
        let mut v4 = [0u8; 20];
        v4[0] = 0x45;
        v4[1] = 0xc2; // DSCP 48, ECT(0)
        assert!(!congestion_experienced(&v4));
        v4[1] = 0xc3;
        assert!(congestion_experienced(&v4));
        let mut v6 = [0u8; 40];
        v6[0] = 0x60 | 0x0c; // traffic class 0xc3: its top nibble here
        v6[1] = 0x30; // and its low nibble here, ECN 11
        assert!(congestion_experienced(&v6));
        v6[1] = 0x20; // ECT(0)
        assert!(!congestion_experienced(&v6));
        assert!(!congestion_experienced(&[]));
    }
}
