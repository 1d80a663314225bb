// SPDX-License-Identifier: GPL-2.0

//! Whole RoCEv2 packets: the UDP payload, from the BTH to the ICRC.
//!
//! ```text
//! +-----+-------------+----------------+-------+------+
//! | BTH | ext headers | payload        | pad   | ICRC |
//! +-----+-------------+----------------+-------+------+
//!  12 B   per opcode    0 to path MTU    0-3 B   4 B
//! ```
//!
//! [`Packet::parse`] checks everything that can be checked without QP state;
//! the ICRC is checked by [`super::icrc::verify`], which also needs the IP
//! and UDP headers. [`Headers::write`] is the other direction: the
//! requester and responder write headers, then the payload and pad.

use super::headers::{
    Aeth, AtomicAckEth, AtomicEth, Bth, Deth, Feth, Header, HeaderError, Ieth, ImmDt, Reth,
};
use super::icrc;
use super::opcode::{Ext, Opcode};
use super::wire;

/// Why a packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// The packet ends before its headers, pad and ICRC do.
    Truncated,
    /// A header holds a value rroce does not accept.
    Header(HeaderError),
    /// Payload and pad together are not a multiple of 4 bytes, or the pad is
    /// longer than what follows the headers.
    Pad,
    /// The opcode carries no payload, yet bytes follow its headers.
    UnexpectedPayload,
    /// The payload is longer than the path MTU.
    PayloadTooLong,
}

impl From<HeaderError> for ParseError {
    fn from(e: HeaderError) -> Self {
        match e {
            HeaderError::Truncated => ParseError::Truncated,
            e => ParseError::Header(e),
        }
    }
}

/// Why headers could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// The extension headers given are not the ones the opcode calls for.
    ExtMismatch,
    /// A header did not fit the buffer or a field did not fit its bits.
    Header(HeaderError),
}

impl From<HeaderError> for BuildError {
    fn from(e: HeaderError) -> Self {
        BuildError::Header(e)
    }
}

/// The extension headers of one packet.
///
/// Each is present exactly when the opcode's table entry lists it: parsing
/// guarantees it, and writing refuses anything else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExtHeaders {
    /// Datagram ETH, on UD.
    pub(crate) deth: Option<Deth>,
    /// FLUSH ETH, on FLUSH.
    pub(crate) feth: Option<Feth>,
    /// RDMA ETH, on the first WRITE packet, read requests, FLUSH and ATOMIC
    /// WRITE.
    pub(crate) reth: Option<Reth>,
    /// Atomic ETH, on compare-swap and fetch-add.
    pub(crate) atomic: Option<AtomicEth>,
    /// ACK ETH, on ACKs and the first and last read responses.
    pub(crate) aeth: Option<Aeth>,
    /// Atomic ACK ETH, on atomic ACKs.
    pub(crate) atomic_ack: Option<AtomicAckEth>,
    /// Immediate data, on the last packet of a message with immediate.
    pub(crate) imm: Option<ImmDt>,
    /// Invalidate ETH, on the last packet of a SEND with invalidate.
    pub(crate) ieth: Option<Ieth>,
}

impl ExtHeaders {
    /// Returns the set of headers present.
    fn set(&self) -> Ext {
        let mut set = Ext::NONE;
        let mut add = |present: bool, ext: Ext| {
            if present {
                set = set.with(ext);
            }
        };
        add(self.deth.is_some(), Ext::DETH);
        add(self.feth.is_some(), Ext::FETH);
        add(self.reth.is_some(), Ext::RETH);
        add(self.atomic.is_some(), Ext::ATOMIC_ETH);
        add(self.aeth.is_some(), Ext::AETH);
        add(self.atomic_ack.is_some(), Ext::ATOMIC_ACK_ETH);
        add(self.imm.is_some(), Ext::IMM_DT);
        add(self.ieth.is_some(), Ext::IETH);
        set
    }
}

/// The BTH and the extension headers of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Headers {
    /// The base transport header.
    pub(crate) bth: Bth,
    /// The extension headers the opcode calls for.
    pub(crate) ext: ExtHeaders,
}

/// Parses a `H` from the front of `rest` if `want` has it, and steps past it.
fn take<H: Header>(rest: &mut &[u8], want: Ext, which: Ext) -> Result<Option<H>, HeaderError> {
    if !want.contains(which) {
        return Ok(None);
    }
    let (head, tail) = wire::split(rest, H::LEN).ok_or(HeaderError::Truncated)?;
    let h = H::parse(head)?;
    *rest = tail;
    Ok(Some(h))
}

/// Writes `h`, if any, to the front of `buf` and returns what follows it.
fn put<'b, H: Header>(buf: &'b mut [u8], h: Option<&H>) -> Result<&'b mut [u8], HeaderError> {
    let Some(h) = h else {
        return Ok(buf);
    };
    let (head, tail) = wire::split_mut(buf, H::LEN).ok_or(HeaderError::Truncated)?;
    h.write(head)?;
    Ok(tail)
}

impl Headers {
    /// Returns the length of the BTH and extension headers on the wire.
    pub(crate) const fn wire_len(&self) -> usize {
        self.bth.opcode.header_len()
    }

    /// The AETH's syndrome byte, on an ACK or NAK.
    pub(crate) fn syndrome(&self) -> Option<u8> {
        self.ext.aeth.and_then(|a| a.syndrome.to_u8().ok())
    }

    /// Parses the BTH and the extension headers its opcode calls for, and
    /// returns them with the bytes that follow.
    fn parse(bytes: &[u8]) -> Result<(Self, &[u8]), HeaderError> {
        let bth = Bth::parse(bytes)?;
        let want = bth.opcode.ext();
        let mut rest = bytes.get(Bth::LEN..).ok_or(HeaderError::Truncated)?;
        // Wire order: the order of `Ext`.
        let ext = ExtHeaders {
            deth: take(&mut rest, want, Ext::DETH)?,
            feth: take(&mut rest, want, Ext::FETH)?,
            reth: take(&mut rest, want, Ext::RETH)?,
            atomic: take(&mut rest, want, Ext::ATOMIC_ETH)?,
            aeth: take(&mut rest, want, Ext::AETH)?,
            atomic_ack: take(&mut rest, want, Ext::ATOMIC_ACK_ETH)?,
            imm: take(&mut rest, want, Ext::IMM_DT)?,
            ieth: take(&mut rest, want, Ext::IETH)?,
        };
        Ok((Self { bth, ext }, rest))
    }

    /// Writes the headers to the front of `buf` and returns their length.
    ///
    /// The caller sets `bth.pad` to [`pad_len`] of the payload it will put
    /// after them. On error `buf` may hold some of the headers.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<usize, BuildError> {
        if self.ext.set() != self.bth.opcode.ext() {
            return Err(BuildError::ExtMismatch);
        }
        let len = self.wire_len();
        let (head, _) = wire::split_mut(buf, len).ok_or(HeaderError::Truncated)?;
        let (bth, rest) = wire::split_mut(head, Bth::LEN).ok_or(HeaderError::Truncated)?;
        self.bth.write(bth)?;
        // Wire order, as in `parse`.
        let ext = &self.ext;
        let rest = put(rest, ext.deth.as_ref())?;
        let rest = put(rest, ext.feth.as_ref())?;
        let rest = put(rest, ext.reth.as_ref())?;
        let rest = put(rest, ext.atomic.as_ref())?;
        let rest = put(rest, ext.aeth.as_ref())?;
        let rest = put(rest, ext.atomic_ack.as_ref())?;
        let rest = put(rest, ext.imm.as_ref())?;
        put(rest, ext.ieth.as_ref())?;
        Ok(len)
    }
}

/// A validated packet: its headers and a view of its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packet<'a> {
    /// The BTH and extension headers.
    pub(crate) headers: Headers,
    /// The payload, without pad and ICRC.
    pub(crate) payload: &'a [u8],
}

impl<'a> Packet<'a> {
    /// Parses a RoCEv2 UDP payload and checks what needs no QP state.
    ///
    /// `bytes` runs from the BTH through the ICRC. The checks are those of
    /// rdma_rxe's receive path, plus some it leaves out: the opcode is
    /// supported, the header version is 0, the packet holds its headers, pad
    /// and ICRC, the pad aligns the payload to 4 bytes as every sender pads
    /// it, only data opcodes carry a payload, and the payload fits
    /// `path_mtu`. The ICRC itself is not checked here.
    pub(crate) fn parse(bytes: &'a [u8], path_mtu: usize) -> Result<Self, ParseError> {
        let (body, _icrc) = bytes
            .split_last_chunk::<{ icrc::LEN }>()
            .ok_or(ParseError::Truncated)?;
        let (headers, rest) = Headers::parse(body)?;
        let opcode = headers.bth.opcode;

        if !opcode.has_payload() && !rest.is_empty() {
            return Err(ParseError::UnexpectedPayload);
        }
        if rest.len() % 4 != 0 {
            return Err(ParseError::Pad);
        }
        let payload_len = rest
            .len()
            .checked_sub(usize::from(headers.bth.pad))
            .ok_or(ParseError::Pad)?;
        let (payload, _pad) = wire::split(rest, payload_len).ok_or(ParseError::Pad)?;
        if payload.len() > path_mtu {
            return Err(ParseError::PayloadTooLong);
        }
        Ok(Self { headers, payload })
    }
}

/// Returns the pad that brings a payload of `payload_len` bytes to a
/// multiple of 4.
pub(crate) const fn pad_len(payload_len: usize) -> u8 {
    // The mask keeps the value below 4, so the cast loses nothing.
    (payload_len.wrapping_neg() & 3) as u8
}

/// Returns the UDP payload length of a packet: headers, payload, pad and
/// ICRC, or `None` if that does not fit a `usize`.
pub(crate) const fn packet_len(opcode: Opcode, payload_len: usize) -> Option<usize> {
    let fixed = opcode.header_len() + pad_len(payload_len) as usize + icrc::LEN;
    payload_len.checked_add(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::headers::{NakCode, Syndrome};
    use crate::proto::psn::Psn;

    const MTU: usize = 1024;

    /// Headers for `opcode` with every field it needs set to something
    /// recognisable.
    fn headers(opcode: Opcode, payload_len: usize) -> Headers {
        let want = opcode.ext();
        let pick = |ext: Ext| want.contains(ext);
        Headers {
            bth: Bth {
                opcode,
                solicited: false,
                mig_req: true,
                pad: pad_len(payload_len),
                pkey: 0xffff,
                fecn: false,
                becn: false,
                dest_qpn: 0x11,
                ack_req: opcode.ends_message(),
                psn: Psn::new(0xff_fffe),
            },
            ext: ExtHeaders {
                deth: pick(Ext::DETH).then_some(Deth {
                    qkey: 0x8001_0000,
                    src_qpn: 1,
                }),
                feth: pick(Ext::FETH).then_some(Feth {
                    placement: Feth::GLOBAL,
                    selectivity: Feth::MR,
                }),
                reth: pick(Ext::RETH).then_some(Reth {
                    va: 0x7f00_0000_1000,
                    rkey: 0x1234,
                    dma_len: 4096,
                }),
                atomic: pick(Ext::ATOMIC_ETH).then_some(AtomicEth {
                    va: 0x2000,
                    rkey: 0x55,
                    swap_add: 1,
                    compare: 2,
                }),
                aeth: pick(Ext::AETH).then_some(Aeth {
                    syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                    msn: 9,
                }),
                atomic_ack: pick(Ext::ATOMIC_ACK_ETH).then_some(AtomicAckEth { orig: 3 }),
                imm: pick(Ext::IMM_DT).then_some(ImmDt { imm: 0xcafe }),
                ieth: pick(Ext::IETH).then_some(Ieth { rkey: 0x4321 }),
            },
        }
    }

    /// Builds a whole packet into `buf`, with a zero ICRC, and returns its
    /// length.
    fn build(h: &Headers, payload: &[u8], buf: &mut [u8]) -> usize {
        let n = h.write(buf).unwrap();
        buf[n..n + payload.len()].copy_from_slice(payload);
        let len = packet_len(h.bth.opcode, payload.len()).unwrap();
        buf[n + payload.len()..len].fill(0);
        len
    }

    #[test]
    fn every_opcode_round_trips() {
        let data = [0x5au8; 37];
        for opcode in Opcode::ALL {
            for len in [0, 1, 2, 3, 4, 37] {
                let payload = if opcode.has_payload() {
                    &data[..len]
                } else {
                    &[][..]
                };
                let h = headers(opcode, payload.len());
                let mut buf = [0u8; 128];
                let n = build(&h, payload, &mut buf);
                let pkt = Packet::parse(&buf[..n], MTU).unwrap();
                assert_eq!(pkt.headers, h, "{opcode:?}");
                assert_eq!(pkt.payload, payload, "{opcode:?}");
                assert_eq!(n % 4, 0);
            }
        }
    }

    // A UD SEND with immediate, laid out by hand from rxe_hdr.h.
    #[test]
    fn ud_send_only_imm_bytes() {
        let h = Headers {
            bth: Bth {
                opcode: Opcode::UdSendOnlyImm,
                solicited: true,
                mig_req: false,
                pad: 3,
                pkey: 0xffff,
                fecn: false,
                becn: false,
                dest_qpn: 0x00_0203,
                ack_req: false,
                psn: Psn::new(0x00_0405),
            },
            ext: ExtHeaders {
                deth: Some(Deth {
                    qkey: 0x1111_1111,
                    src_qpn: 0x00_0011,
                }),
                imm: Some(ImmDt { imm: 0x0102_0304 }),
                ..ExtHeaders::default()
            },
        };
        let mut buf = [0u8; 64];
        let n = build(&h, b"x", &mut buf);
        let expect = [
            0x65, 0xb0, 0xff, 0xff, 0, 0, 0x02, 0x03, 0, 0, 0x04, 0x05, // BTH
            0x11, 0x11, 0x11, 0x11, 0, 0, 0, 0x11, // DETH
            1, 2, 3, 4, // ImmDt
            b'x', 0, 0, 0, // payload, pad
            0, 0, 0, 0, // ICRC
        ];
        assert_eq!(&buf[..n], &expect);
        assert_eq!(Packet::parse(&expect, MTU).unwrap().headers, h);
    }

    // A FLUSH as rxe builds it: the FETH comes before the RETH.
    #[test]
    fn flush_bytes() {
        let h = Headers {
            bth: Bth {
                opcode: Opcode::RcFlush,
                solicited: false,
                mig_req: false,
                pad: 0,
                pkey: 0xffff,
                fecn: false,
                becn: false,
                dest_qpn: 0x11,
                ack_req: true,
                psn: Psn::new(7),
            },
            ext: ExtHeaders {
                feth: Some(Feth {
                    placement: Feth::GLOBAL,
                    selectivity: Feth::RANGE,
                }),
                reth: Some(Reth {
                    va: 0x1000,
                    rkey: 0x22,
                    dma_len: 0x300,
                }),
                ..ExtHeaders::default()
            },
        };
        let mut buf = [0u8; 64];
        let n = build(&h, &[], &mut buf);
        let expect = [
            0x1c, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 7, // BTH
            0, 0, 0, 0x01, // FETH
            0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x22, 0, 0, 0x03, 0, // RETH
            0, 0, 0, 0, // ICRC
        ];
        assert_eq!(&buf[..n], &expect);
        assert_eq!(Packet::parse(&expect, MTU).unwrap().headers, h);
    }

    #[test]
    fn truncated_packets_are_refused() {
        let h = headers(Opcode::RcWriteOnlyImm, 8);
        let mut buf = [0u8; 64];
        let n = build(&h, &[1; 8], &mut buf);
        let min = h.wire_len() + icrc::LEN;
        for len in 0..min {
            assert_eq!(
                Packet::parse(&buf[..len], MTU),
                Err(ParseError::Truncated),
                "{len}"
            );
        }
        // Shorter payloads are fine as long as they stay aligned; the ICRC
        // is what catches a cut packet of the right shape.
        for len in min..n {
            let pkt = Packet::parse(&buf[..len], MTU);
            if (len - min) % 4 == 0 {
                assert_eq!(pkt.unwrap().payload.len(), len - min);
            } else {
                assert_eq!(pkt, Err(ParseError::Pad), "{len}");
            }
        }
    }

    #[test]
    fn pad_must_align_and_fit() {
        let h = headers(Opcode::RcSendOnly, 5);
        let mut buf = [0u8; 64];
        let n = build(&h, &[7; 5], &mut buf);
        assert_eq!(Packet::parse(&buf[..n], MTU).unwrap().payload, &[7; 5]);
        // One byte more or less after the headers breaks alignment.
        assert_eq!(Packet::parse(&buf[..n + 1], MTU), Err(ParseError::Pad));
        assert_eq!(Packet::parse(&buf[..n - 1], MTU), Err(ParseError::Pad));
        // A pad with no payload to follow.
        let empty = headers(Opcode::RcSendOnly, 0);
        let n = build(&empty, &[], &mut buf);
        buf[1] |= 0x30;
        assert_eq!(Packet::parse(&buf[..n], MTU), Err(ParseError::Pad));
    }

    #[test]
    fn payload_only_where_the_opcode_allows_it() {
        for opcode in [Opcode::RcAck, Opcode::RcReadRequest, Opcode::RcFetchAdd] {
            let h = headers(opcode, 0);
            let mut buf = [0u8; 64];
            let n = build(&h, &[], &mut buf);
            assert!(Packet::parse(&buf[..n], MTU).is_ok());
            let longer = n + 4;
            assert_eq!(
                Packet::parse(&buf[..longer], MTU),
                Err(ParseError::UnexpectedPayload)
            );
        }
    }

    #[test]
    fn payload_is_limited_by_the_path_mtu() {
        let payload = [0u8; 256];
        let h = headers(Opcode::RcReadResponseMiddle, payload.len());
        let mut buf = [0u8; 300];
        let n = build(&h, &payload, &mut buf);
        assert!(Packet::parse(&buf[..n], 256).is_ok());
        assert_eq!(
            Packet::parse(&buf[..n], 255),
            Err(ParseError::PayloadTooLong)
        );
    }

    #[test]
    fn header_errors_pass_through() {
        let h = headers(Opcode::RcAck, 0);
        let mut buf = [0u8; 64];
        let n = build(&h, &[], &mut buf);
        buf[12] = 0x40;
        assert_eq!(
            Packet::parse(&buf[..n], MTU),
            Err(ParseError::Header(HeaderError::Syndrome(0x40)))
        );
        buf[0] = 0x15;
        assert_eq!(
            Packet::parse(&buf[..n], MTU),
            Err(ParseError::Header(HeaderError::UnknownOpcode(0x15)))
        );
    }

    #[test]
    fn write_refuses_headers_the_opcode_does_not_list() {
        let mut buf = [0u8; 64];
        let mut h = headers(Opcode::RcWriteFirst, 0);
        h.ext.reth = None;
        assert_eq!(h.write(&mut buf), Err(BuildError::ExtMismatch));
        let mut h = headers(Opcode::RcSendOnly, 0);
        h.ext.imm = Some(ImmDt { imm: 1 });
        assert_eq!(h.write(&mut buf), Err(BuildError::ExtMismatch));
    }

    #[test]
    fn write_needs_room_for_every_header() {
        let h = headers(Opcode::RcCompareSwap, 0);
        let mut buf = [0u8; 40];
        assert_eq!(h.write(&mut buf), Ok(40));
        assert_eq!(
            h.write(&mut buf[..39]),
            Err(BuildError::Header(HeaderError::Truncated))
        );
    }

    #[test]
    fn lengths() {
        assert_eq!(pad_len(0), 0);
        assert_eq!(pad_len(1), 3);
        assert_eq!(pad_len(2), 2);
        assert_eq!(pad_len(3), 1);
        assert_eq!(pad_len(4096), 0);
        assert_eq!(pad_len(usize::MAX), 1);
        assert_eq!(packet_len(Opcode::RcAck, 0), Some(20));
        assert_eq!(packet_len(Opcode::RcSendOnly, 1), Some(20));
        assert_eq!(packet_len(Opcode::UdSendOnly, 4096), Some(4120));
        assert_eq!(packet_len(Opcode::RcSendOnly, usize::MAX), None);
    }
}
