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
/// Every opcode has at most one header of the first kind (DETH, RETH,
/// AtomicETH or AETH) and one of the second (FETH, AtomicAckETH, ImmDt or
/// IETH), and so has this: 56 bytes, where one field for each header took
/// 120, which every packet moved a few times on its way. Setting a header
/// replaces another of its kind. Which are present is what the opcode's
/// table entry lists: parsing guarantees it, and writing refuses anything
/// else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExtHeaders {
    first: First,
    second: Second,
}

/// The headers of the first kind: what a request or an answer is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum First {
    #[default]
    None,
    Deth(Deth),
    Reth(Reth),
    Atomic(AtomicEth),
    Aeth(Aeth),
}

/// The headers of the second kind: what rides with one of the first, or
/// alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Second {
    #[default]
    None,
    Feth(Feth),
    AtomicAck(AtomicAckEth),
    Imm(ImmDt),
    Ieth(Ieth),
}

/// For each header, a getter and a setter, the header held in `$field`
/// as `$kind::$variant`.
macro_rules! ext_headers {
    ($($doc:literal $get:ident $set:ident: $field:ident = $kind:ident::$variant:ident($ty:ty);)*) => {
        $(
            #[doc = concat!("The ", $doc, ", if the packet has one.")]
            pub(crate) fn $get(&self) -> Option<$ty> {
                match self.$field {
                    $kind::$variant(h) => Some(h),
                    _ => None,
                }
            }

            #[doc = concat!("Sets the ", $doc, ", in place of any header of its kind.")]
            pub(crate) fn $set(&mut self, h: $ty) {
                self.$field = $kind::$variant(h);
            }
        )*
    };
}

impl ExtHeaders {
    ext_headers! {
        "datagram ETH (UD)" deth set_deth: first = First::Deth(Deth);
        "RDMA ETH (a WRITE's first packet, a read request, FLUSH, ATOMIC WRITE)"
            reth set_reth: first = First::Reth(Reth);
        "atomic ETH (compare-swap, fetch-add)" atomic set_atomic: first = First::Atomic(AtomicEth);
        "ACK ETH (ACKs, a read's first and last responses)" aeth set_aeth: first = First::Aeth(Aeth);
        "FLUSH ETH" feth set_feth: second = Second::Feth(Feth);
        "atomic ACK ETH" atomic_ack set_atomic_ack: second = Second::AtomicAck(AtomicAckEth);
        "immediate data (a message's last packet)" imm set_imm: second = Second::Imm(ImmDt);
        "invalidate ETH (a SEND with invalidate's last packet)"
            ieth set_ieth: second = Second::Ieth(Ieth);
    }

    /// Returns the set of headers present.
    fn set(&self) -> Ext {
        let first = match self.first {
            First::None => Ext::NONE,
            First::Deth(_) => Ext::DETH,
            First::Reth(_) => Ext::RETH,
            First::Atomic(_) => Ext::ATOMIC_ETH,
            First::Aeth(_) => Ext::AETH,
        };
        let second = match self.second {
            Second::None => Ext::NONE,
            Second::Feth(_) => Ext::FETH,
            Second::AtomicAck(_) => Ext::ATOMIC_ACK_ETH,
            Second::Imm(_) => Ext::IMM_DT,
            Second::Ieth(_) => Ext::IETH,
        };
        first.with(second)
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

/// Parses a `H` from the front of `rest` if `want` has it, puts it in `ext`
/// by `set`, and steps past it.
fn take<H: Header>(
    rest: &mut &[u8],
    want: Ext,
    which: Ext,
    ext: &mut ExtHeaders,
    set: impl FnOnce(&mut ExtHeaders, H),
) -> Result<(), HeaderError> {
    if !want.contains(which) {
        return Ok(());
    }
    let (head, tail) = wire::split(rest, H::LEN).ok_or(HeaderError::Truncated)?;
    set(ext, H::parse(head)?);
    *rest = tail;
    Ok(())
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
        self.ext.aeth().and_then(|a| a.syndrome.to_u8().ok())
    }

    /// Parses the BTH and the extension headers its opcode calls for, and
    /// returns them with the bytes that follow.
    fn parse(bytes: &[u8]) -> Result<(Self, &[u8]), HeaderError> {
        let bth = Bth::parse(bytes)?;
        let want = bth.opcode.ext();
        let mut rest = bytes.get(Bth::LEN..).ok_or(HeaderError::Truncated)?;
        // Wire order: the order of `Ext`. An opcode has at most one header
        // of each kind (`ExtHeaders`), so none replaces another.
        let mut ext = ExtHeaders::default();
        let (r, e) = (&mut rest, &mut ext);
        type E = ExtHeaders;
        take(r, want, Ext::DETH, e, E::set_deth)?;
        take(r, want, Ext::FETH, e, E::set_feth)?;
        take(r, want, Ext::RETH, e, E::set_reth)?;
        take(r, want, Ext::ATOMIC_ETH, e, E::set_atomic)?;
        take(r, want, Ext::AETH, e, E::set_aeth)?;
        take(r, want, Ext::ATOMIC_ACK_ETH, e, E::set_atomic_ack)?;
        take(r, want, Ext::IMM_DT, e, E::set_imm)?;
        take(r, want, Ext::IETH, e, E::set_ieth)?;
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
        let rest = put(rest, ext.deth().as_ref())?;
        let rest = put(rest, ext.feth().as_ref())?;
        let rest = put(rest, ext.reth().as_ref())?;
        let rest = put(rest, ext.atomic().as_ref())?;
        let rest = put(rest, ext.aeth().as_ref())?;
        let rest = put(rest, ext.atomic_ack().as_ref())?;
        let rest = put(rest, ext.imm().as_ref())?;
        put(rest, ext.ieth().as_ref())?;
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
            ext: {
                let mut ext = ExtHeaders::default();
                if pick(Ext::DETH) {
                    ext.set_deth(Deth {
                        qkey: 0x8001_0000,
                        src_qpn: 1,
                    });
                }
                if pick(Ext::FETH) {
                    ext.set_feth(Feth {
                        placement: Feth::GLOBAL,
                        selectivity: Feth::MR,
                    });
                }
                if pick(Ext::RETH) {
                    ext.set_reth(Reth {
                        va: 0x7f00_0000_1000,
                        rkey: 0x1234,
                        dma_len: 4096,
                    });
                }
                if pick(Ext::ATOMIC_ETH) {
                    ext.set_atomic(AtomicEth {
                        va: 0x2000,
                        rkey: 0x55,
                        swap_add: 1,
                        compare: 2,
                    });
                }
                if pick(Ext::AETH) {
                    ext.set_aeth(Aeth {
                        syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                        msn: 9,
                    });
                }
                if pick(Ext::ATOMIC_ACK_ETH) {
                    ext.set_atomic_ack(AtomicAckEth { orig: 3 });
                }
                if pick(Ext::IMM_DT) {
                    ext.set_imm(ImmDt { imm: 0xcafe });
                }
                if pick(Ext::IETH) {
                    ext.set_ieth(Ieth { rkey: 0x4321 });
                }
                // Each header the opcode wants, none replaced by another.
                assert_eq!(ext.set(), want, "{opcode:?}");
                ext
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
            ext: {
                let mut ext = ExtHeaders::default();
                ext.set_deth(Deth {
                    qkey: 0x1111_1111,
                    src_qpn: 0x00_0011,
                });
                ext.set_imm(ImmDt { imm: 0x0102_0304 });
                ext
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
            ext: {
                let mut ext = ExtHeaders::default();
                ext.set_feth(Feth {
                    placement: Feth::GLOBAL,
                    selectivity: Feth::RANGE,
                });
                ext.set_reth(Reth {
                    va: 0x1000,
                    rkey: 0x22,
                    dma_len: 0x300,
                });
                ext
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
        h.ext = ExtHeaders::default();
        assert_eq!(h.write(&mut buf), Err(BuildError::ExtMismatch));
        let mut h = headers(Opcode::RcSendOnly, 0);
        h.ext.set_imm(ImmDt { imm: 1 });
        assert_eq!(h.write(&mut buf), Err(BuildError::ExtMismatch));
        // A header of the same kind replaces the one the opcode wants.
        let mut h = headers(Opcode::RcWriteFirst, 0);
        h.ext.set_aeth(Aeth {
            syndrome: Syndrome::Ack { credits: 0 },
            msn: 0,
        });
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
