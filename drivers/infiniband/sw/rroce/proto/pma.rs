// SPDX-License-Identifier: GPL-2.0

//! The port's Performance Management Agent (IBA 16.1): what a PMA `Get`
//! of the port's counters is answered with.
//!
//! ib_core asks through `process_mad` for each file of sysfs's
//! `ports/1/counters/`, which monitoring tools read; the same answer goes
//! to a PMA request that arrives on the port's GSI QP. Anything else, other
//! classes and methods, is the MAD layer's: it hands them to their agents,
//! or answers "unsupported" itself.

use super::wire::{HeaderError, Reader, Writer};

/// A MAD's size: the common header, then the class's data.
pub(crate) const MAD_LEN: usize = 256;

/// What the port has counted, since the device was added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PortCounts {
    /// Bytes of the IP datagrams sent and received.
    pub(crate) xmit_bytes: u64,
    pub(crate) rcv_bytes: u64,
    pub(crate) xmit_packets: u64,
    pub(crate) rcv_packets: u64,
    /// Of those, to and from multicast groups.
    pub(crate) xmit_multicast: u64,
    pub(crate) rcv_multicast: u64,
    /// Received packets dropped as malformed or with a bad ICRC.
    pub(crate) rcv_errors: u64,
    /// Packets that could not be built or routed.
    pub(crate) xmit_discards: u64,
}

/// The Performance Management class and the version of it answered.
const PERF_MGMT: u8 = 0x04;
const VERSION: u8 = 1;
const METHOD_GET: u8 = 0x01;
const METHOD_GET_RESP: u8 = 0x81;

/// The attributes answered (IBA 16.1.3).
const CLASS_PORT_INFO: u16 = 0x0001;
const PORT_COUNTERS: u16 = 0x0012;
const PORT_COUNTERS_EXT: u16 = 0x001d;

/// ClassPortInfo's capability: PortCountersExtended with all its counters.
const CAP_EXT_WIDTH: u16 = 1 << 9;
/// ClassPortInfo's response time value: 4.096 µs × 2^18, about one second.
const RESP_TIME_VALUE: u32 = 18;
/// MAD status: a field of the request, its PortSelect, is invalid.
const STATUS_INVALID_FIELD: u16 = 0x001c;
/// PortSelect: every port.
const ALL_PORTS: u8 = 0xff;

/// The common MAD header (IBA 13.4.3).
struct MadHeader {
    base_version: u8,
    mgmt_class: u8,
    class_version: u8,
    method: u8,
    status: u16,
    class_specific: u16,
    tid: u64,
    attr_id: u16,
    attr_mod: u32,
}

/// The header's length, and the PMA data's offset after 40 reserved bytes.
const HEADER_LEN: usize = 24;
const PMA_DATA: usize = HEADER_LEN + 40;

impl MadHeader {
    fn read(mad: &[u8]) -> Result<Self, HeaderError> {
        let mut r = Reader::new(mad);
        let header = Self {
            base_version: r.u8()?,
            mgmt_class: r.u8()?,
            class_version: r.u8()?,
            method: r.u8()?,
            status: r.u16()?,
            class_specific: r.u16()?,
            tid: r.u64()?,
            attr_id: r.u16()?,
            attr_mod: {
                r.u16()?;
                r.u32()?
            },
        };
        Ok(header)
    }

    fn write(&self, mad: &mut [u8]) -> Result<(), HeaderError> {
        let mut w = Writer::new(mad, HEADER_LEN)?;
        w.u8(self.base_version)?;
        w.u8(self.mgmt_class)?;
        w.u8(self.class_version)?;
        w.u8(self.method)?;
        w.u16(self.status)?;
        w.u16(self.class_specific)?;
        w.u64(self.tid)?;
        w.u16(self.attr_id)?;
        w.u16(0)?;
        w.u32(self.attr_mod)
    }
}

/// Answers `request`, a MAD for port `port`, into `reply` if it is a PMA
/// `Get` of ClassPortInfo, PortCounters or PortCountersExtended; returns
/// whether it did. `counts` is read only then.
pub(crate) fn answer(
    request: &[u8; MAD_LEN],
    port: u8,
    counts: impl FnOnce() -> PortCounts,
    reply: &mut [u8; MAD_LEN],
) -> bool {
    let Ok(header) = MadHeader::read(request) else {
        return false;
    };
    let ours = header.base_version == VERSION
        && header.mgmt_class == PERF_MGMT
        && header.class_version == VERSION
        && header.method == METHOD_GET
        && matches!(
            header.attr_id,
            CLASS_PORT_INFO | PORT_COUNTERS | PORT_COUNTERS_EXT
        );
    if !ours {
        return false;
    }
    reply.fill(0);
    let port_select = request[PMA_DATA + 1];
    let selected = port_select == port || port_select == ALL_PORTS;
    let status = if header.attr_id == CLASS_PORT_INFO || selected {
        0
    } else {
        STATUS_INVALID_FIELD
    };
    let reply_header = MadHeader {
        method: METHOD_GET_RESP,
        status,
        ..header
    };
    let (head, data) = reply.split_at_mut(PMA_DATA);
    let body = match (status, header.attr_id) {
        (0, CLASS_PORT_INFO) => class_port_info(data),
        (0, PORT_COUNTERS) => port_counters(data, port_select, &counts()),
        (0, _) => port_counters_ext(data, port_select, &counts()),
        // Only the PortSelect goes back, to say which was wrong.
        _ => Writer::new(data, 2).and_then(|mut w| w.u16(u16::from(port_select))),
    };
    // The buffers are long enough for every layout written here.
    body.is_ok() && reply_header.write(head).is_ok()
}

/// ClassPortInfo (IBA 13.4.8.1): the PMA's version and capabilities.
fn class_port_info(data: &mut [u8]) -> Result<(), HeaderError> {
    let mut w = Writer::new(data, 8)?;
    w.u8(VERSION)?;
    w.u8(VERSION)?;
    w.u16(CAP_EXT_WIDTH)?;
    w.u32(RESP_TIME_VALUE)
}

/// A counter of `N` bits, which stops at all ones (IBA 16.1.3.5).
fn saturated<const N: u32>(value: u64) -> u64 {
    value.min((1 << N) - 1)
}

/// PortCounters (IBA 16.1.3.5): the 32-bit and smaller counters. Data is
/// counted in units of four bytes.
fn port_counters(data: &mut [u8], port_select: u8, c: &PortCounts) -> Result<(), HeaderError> {
    let as_u16 = |v| saturated::<16>(v) as u16;
    let as_u32 = |v| saturated::<32>(v) as u32;
    let mut w = Writer::new(data, 44)?;
    w.u8(0)?;
    w.u8(port_select)?;
    // CounterSelect, SymbolErrorCounter, LinkErrorRecoveryCounter and
    // LinkDownedCounter.
    w.u16(0)?;
    w.u16(0)?;
    w.u16(0)?;
    w.u16(as_u16(c.rcv_errors))?;
    // PortRcvRemotePhysicalErrors, PortRcvSwitchRelayErrors.
    w.u32(0)?;
    w.u16(as_u16(c.xmit_discards))?;
    // The constraint, integrity, overrun and VL15 counters.
    w.u64(0)?;
    w.u32(as_u32(c.xmit_bytes / 4))?;
    w.u32(as_u32(c.rcv_bytes / 4))?;
    w.u32(as_u32(c.xmit_packets))?;
    w.u32(as_u32(c.rcv_packets))?;
    // PortXmitWait: a software port never waits for link credits.
    w.u32(0)
}

/// PortCountersExtended (IBA 16.1.4.11): the 64-bit traffic counters.
fn port_counters_ext(data: &mut [u8], port_select: u8, c: &PortCounts) -> Result<(), HeaderError> {
    let mut w = Writer::new(data, 72)?;
    w.u8(0)?;
    w.u8(port_select)?;
    w.u16(0)?;
    w.u32(0)?;
    w.u64(c.xmit_bytes / 4)?;
    w.u64(c.rcv_bytes / 4)?;
    w.u64(c.xmit_packets)?;
    w.u64(c.rcv_packets)?;
    w.u64(c.xmit_packets.saturating_sub(c.xmit_multicast))?;
    w.u64(c.rcv_packets.saturating_sub(c.rcv_multicast))?;
    w.u64(c.xmit_multicast)?;
    w.u64(c.rcv_multicast)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTS: PortCounts = PortCounts {
        xmit_bytes: 4000,
        rcv_bytes: 8000,
        xmit_packets: 30,
        rcv_packets: 40,
        xmit_multicast: 3,
        rcv_multicast: 4,
        rcv_errors: 5,
        xmit_discards: 6,
    };

    /// A PMA `Get` of `attr` for `port`, as ib_core's sysfs builds it.
    fn get(attr: u16, port: u8) -> [u8; MAD_LEN] {
        let mut mad = [0; MAD_LEN];
        mad[..4].copy_from_slice(&[1, PERF_MGMT, 1, METHOD_GET]);
        mad[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_be_bytes());
        mad[16..18].copy_from_slice(&attr.to_be_bytes());
        mad[PMA_DATA + 1] = port;
        mad
    }

    fn be16(mad: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([mad[at], mad[at + 1]])
    }

    fn be32(mad: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(mad[at..at + 4].try_into().unwrap())
    }

    fn be64(mad: &[u8], at: usize) -> u64 {
        u64::from_be_bytes(mad[at..at + 8].try_into().unwrap())
    }

    fn ask(request: &[u8; MAD_LEN], counts: PortCounts) -> Option<[u8; MAD_LEN]> {
        let mut reply = [0xa5; MAD_LEN];
        answer(request, 1, || counts, &mut reply).then_some(reply)
    }

    #[test]
    fn class_port_info_offers_the_extended_counters() {
        let reply = ask(&get(CLASS_PORT_INFO, 0), COUNTS).unwrap();
        assert_eq!(&reply[..4], &[1, PERF_MGMT, 1, METHOD_GET_RESP]);
        assert_eq!(be16(&reply, 4), 0);
        assert_eq!(be64(&reply, 8), 0x1122_3344_5566_7788);
        assert_eq!(be16(&reply, 16), CLASS_PORT_INFO);
        // sysfs reads the capability mask at data offset 40 + 2.
        assert_eq!(be16(&reply, PMA_DATA + 2), CAP_EXT_WIDTH);
    }

    // The offsets are those of ib_core's sysfs table (bits / 8).
    #[test]
    fn extended_counters_where_sysfs_reads_them() {
        let reply = ask(&get(PORT_COUNTERS_EXT, 1), COUNTS).unwrap();
        let d = PMA_DATA;
        assert_eq!(reply[d + 1], 1);
        assert_eq!(be64(&reply, d + 8), 1000);
        assert_eq!(be64(&reply, d + 16), 2000);
        assert_eq!(be64(&reply, d + 24), 30);
        assert_eq!(be64(&reply, d + 32), 40);
        assert_eq!(be64(&reply, d + 40), 27);
        assert_eq!(be64(&reply, d + 48), 36);
        assert_eq!(be64(&reply, d + 56), 3);
        assert_eq!(be64(&reply, d + 64), 4);
        assert!(reply[d + 72..].iter().all(|&b| b == 0));
    }

    #[test]
    fn counters_where_sysfs_reads_them_and_stop_at_all_ones() {
        let reply = ask(&get(PORT_COUNTERS, 0xff), COUNTS).unwrap();
        let d = PMA_DATA;
        assert_eq!(be16(&reply, d + 8), 5);
        assert_eq!(be16(&reply, d + 14), 6);
        assert_eq!(be32(&reply, d + 24), 1000);
        assert_eq!(be32(&reply, d + 28), 2000);
        assert_eq!(be32(&reply, d + 32), 30);
        assert_eq!(be32(&reply, d + 36), 40);
        assert_eq!(be32(&reply, d + 40), 0);

        let huge = PortCounts {
            xmit_bytes: 1 << 40,
            rcv_errors: 1 << 20,
            ..COUNTS
        };
        let reply = ask(&get(PORT_COUNTERS, 1), huge).unwrap();
        assert_eq!(be32(&reply, d + 24), u32::MAX);
        assert_eq!(be16(&reply, d + 8), u16::MAX);
    }

    #[test]
    fn another_port_is_an_invalid_field() {
        let mut read = false;
        let mut reply = [0; MAD_LEN];
        let request = get(PORT_COUNTERS_EXT, 2);
        assert!(answer(
            &request,
            1,
            || {
                read = true;
                COUNTS
            },
            &mut reply
        ));
        assert!(!read);
        assert_eq!(reply[3], METHOD_GET_RESP);
        assert_eq!(be16(&reply, 4), STATUS_INVALID_FIELD);
        assert_eq!(reply[PMA_DATA + 1], 2);
        assert!(reply[PMA_DATA + 2..].iter().all(|&b| b == 0));
    }

    #[test]
    fn other_mads_are_left_alone() {
        // A CM request (class 0x07), a PMA Set, another PMA attribute, a
        // response, and a MAD of another version.
        let mut cm = get(PORT_COUNTERS, 1);
        cm[1] = 0x07;
        let mut set = get(PORT_COUNTERS, 1);
        set[3] = 0x02;
        let samples = get(0x0010, 1);
        let mut resp = get(PORT_COUNTERS, 1);
        resp[3] = METHOD_GET_RESP;
        let mut v2 = get(PORT_COUNTERS, 1);
        v2[2] = 2;
        for request in [cm, set, samples, resp, v2] {
            let mut reply = [0xa5; MAD_LEN];
            assert!(!answer(&request, 1, || COUNTS, &mut reply));
            assert!(reply.iter().all(|&b| b == 0xa5));
        }
    }
}
