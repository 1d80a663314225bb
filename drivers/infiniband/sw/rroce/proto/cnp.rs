// SPDX-License-Identifier: GPL-2.0

//! Congestion Notification Packets (IBTA Annex A17.9.3): what the receiver
//! of packets that a switch marked Congestion Experienced sends back to the
//! QP that sent them, so that its sender slows down (DCQCN's notification
//! point). A CNP is a BTH with opcode 0x81 and the BECN bit, PSN 0, and 16
//! reserved bytes, sealed by an ICRC as any packet; rroce's opcode table
//! has no place for it, since it carries no request or response.

use super::opcode::BTH_LEN;

/// The BTH opcode of a CNP.
pub(crate) const OPCODE: u8 = 0x81;
/// A CNP's bytes before its ICRC: the BTH and 16 reserved bytes.
pub(crate) const LEN: usize = BTH_LEN + 16;
/// The ICRC's length, which follows.
const ICRC_LEN: usize = 4;
/// A QP sends at most one CNP in this many nanoseconds, as NICs do.
pub(crate) const INTERVAL_NS: u64 = 50_000;

const BECN: u8 = 0x40;
const DEFAULT_PKEY: [u8; 2] = [0xff, 0xff];

/// The CNP to QP `dest_qpn`.
pub(crate) fn write(dest_qpn: u32) -> [u8; LEN] {
    let mut cnp = [0u8; LEN];
    let qpn = dest_qpn.to_be_bytes();
    cnp[0] = OPCODE;
    cnp[2..4].copy_from_slice(&DEFAULT_PKEY);
    cnp[4] = BECN;
    cnp[5..8].copy_from_slice(&qpn[1..]);
    cnp
}

/// The QP a received UDP payload (ICRC included) notifies, if it is a CNP.
pub(crate) fn parse(payload: &[u8]) -> Option<u32> {
    if payload.len() != LEN + ICRC_LEN || payload[0] != OPCODE {
        return None;
    }
    Some(u32::from_be_bytes([0, payload[5], payload[6], payload[7]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The CNP a ConnectX-4 Lx sent (icrc.rs checks its ICRC): its UDP
    // payload.
    const CONNECTX: [u8; 32] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0x82, 0xfd, 0x00, 0x2a,
    ];

    #[test]
    fn writes_what_hardware_sends() {
        assert_eq!(write(0x118)[..], CONNECTX[..LEN]);
    }

    #[test]
    fn parses_hardware_cnp() {
        assert_eq!(parse(&CONNECTX), Some(0x118));
    }

    #[test]
    fn rejects_other_packets() {
        let mut other = CONNECTX;
        other[0] = 0x11;
        assert_eq!(parse(&other), None);
        assert_eq!(parse(&CONNECTX[..31]), None);
    }
}
