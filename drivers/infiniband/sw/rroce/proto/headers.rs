// SPDX-License-Identifier: GPL-2.0

//! The BTH and the extension transport headers that follow it.
//!
//! Each header is a plain value with a [`Header`] implementation that parses
//! it from the front of a byte slice and writes it to the front of a buffer,
//! both big-endian as on the wire. Reserved bits are ignored on parse and
//! written as zero, as IBA asks of both sides.

use super::opcode::{Ext, Opcode, BTH_LEN};
use super::psn::Psn;
pub(crate) use super::wire::HeaderError;
use super::wire::{Reader, Writer};

/// A fixed-size transport header.
pub(crate) trait Header: Sized {
    /// The header's length on the wire, in bytes.
    const LEN: usize;

    /// Parses the header from the first [`Self::LEN`] bytes of `bytes`.
    fn parse(bytes: &[u8]) -> Result<Self, HeaderError>;

    /// Writes the header to the first [`Self::LEN`] bytes of `buf`.
    ///
    /// On error `buf` is left as it was.
    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError>;
}

/// The bits of the 24-bit fields (QPNs, MSN); the byte above them is flags,
/// a syndrome or reserved.
const LOW24: u32 = 0x00ff_ffff;

/// The AETH syndrome credit count that means "no end-to-end flow control".
///
/// rdma_rxe advertises nothing else, and never looks at the credits it gets.
pub(crate) const UNLIMITED_CREDITS: u8 = 0x1f;

/// The default partition key, full membership: the only one RoCE uses.
pub(crate) const DEFAULT_PKEY: u16 = 0xffff;

/// Checks that `value` fits a 24-bit field.
fn u24(value: u32) -> Result<u32, HeaderError> {
    if value & !LOW24 == 0 {
        Ok(value)
    } else {
        Err(HeaderError::Range)
    }
}

/// The base transport header, which starts every packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bth {
    /// What the packet is; decides everything after the BTH.
    pub(crate) opcode: Opcode,
    /// Solicited event: asks the receiver to raise a completion event.
    pub(crate) solicited: bool,
    /// Migration state; rroce has no path migration and sends `false`, as
    /// rdma_rxe does.
    pub(crate) mig_req: bool,
    /// Bytes of pad after the payload (0 to 3), to align it to 4 bytes.
    pub(crate) pad: u8,
    /// Partition key.
    pub(crate) pkey: u16,
    /// Forward congestion notification (IB fabrics; RoCEv2 uses IP ECN).
    pub(crate) fecn: bool,
    /// Backward congestion notification.
    pub(crate) becn: bool,
    /// Destination QP number, 24 bits.
    pub(crate) dest_qpn: u32,
    /// Asks the responder to acknowledge this packet now.
    pub(crate) ack_req: bool,
    /// Packet sequence number.
    pub(crate) psn: Psn,
}

impl Bth {
    /// The only transport header version IBA defines.
    const TVER: u8 = 0;
    const SE: u8 = 0x80;
    const MIG: u8 = 0x40;
    const PAD_SHIFT: u32 = 4;
    const PAD_MAX: u8 = 3;
    const TVER_MASK: u8 = 0x0f;
    const FECN: u32 = 1 << 31;
    const BECN: u32 = 1 << 30;
    const ACK_REQ: u32 = 1 << 31;

    fn flag32(set: bool, bit: u32) -> u32 {
        if set {
            bit
        } else {
            0
        }
    }
}

impl Header for Bth {
    const LEN: usize = BTH_LEN;

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let mut r = Reader::new(bytes);
        let opcode = r.u8()?;
        let flags = r.u8()?;
        let pkey = r.u16()?;
        let qpn = r.u32()?;
        let psn = r.u32()?;

        let opcode = Opcode::from_u8(opcode).ok_or(HeaderError::UnknownOpcode(opcode))?;
        let tver = flags & Self::TVER_MASK;
        if tver != Self::TVER {
            return Err(HeaderError::Version(tver));
        }
        Ok(Self {
            opcode,
            solicited: flags & Self::SE != 0,
            mig_req: flags & Self::MIG != 0,
            pad: (flags >> Self::PAD_SHIFT) & Self::PAD_MAX,
            pkey,
            fecn: qpn & Self::FECN != 0,
            becn: qpn & Self::BECN != 0,
            dest_qpn: qpn & LOW24,
            ack_req: psn & Self::ACK_REQ != 0,
            psn: Psn::new(psn),
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        if self.pad > Self::PAD_MAX {
            return Err(HeaderError::Range);
        }
        let qpn = u24(self.dest_qpn)?
            | Self::flag32(self.fecn, Self::FECN)
            | Self::flag32(self.becn, Self::BECN);
        let psn = self.psn.get() | Self::flag32(self.ack_req, Self::ACK_REQ);
        let mut flags = (self.pad << Self::PAD_SHIFT) | Self::TVER;
        if self.solicited {
            flags |= Self::SE;
        }
        if self.mig_req {
            flags |= Self::MIG;
        }

        let mut w = Writer::new(buf, Self::LEN)?;
        w.u8(self.opcode as u8)?;
        w.u8(flags)?;
        w.u16(self.pkey)?;
        w.u32(qpn)?;
        w.u32(psn)
    }
}

/// The RDMA extended transport header: where a READ or WRITE goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reth {
    /// Remote virtual address.
    pub(crate) va: u64,
    /// Remote key of the memory region.
    pub(crate) rkey: u32,
    /// Length of the whole transfer, not of this packet.
    pub(crate) dma_len: u32,
}

impl Header for Reth {
    const LEN: usize = Ext::RETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let mut r = Reader::new(bytes);
        Ok(Self {
            va: r.u64()?,
            rkey: r.u32()?,
            dma_len: r.u32()?,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        let mut w = Writer::new(buf, Self::LEN)?;
        w.u64(self.va)?;
        w.u32(self.rkey)?;
        w.u32(self.dma_len)
    }
}

/// The FLUSH extended transport header: what a FLUSH makes visible, and of
/// which memory.
///
/// One big-endian word: the placement type in bits 3:0, the selectivity
/// level in bits 5:4, the rest reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Feth {
    /// Placement type, a set of [`Feth::GLOBAL`] and [`Feth::PERSISTENT`].
    pub(crate) placement: u8,
    /// Selectivity level: [`Feth::RANGE`] or [`Feth::MR`] (2 and 3 are
    /// reserved).
    pub(crate) selectivity: u8,
}

impl Feth {
    /// Placement type: visible to every later access (global visibility).
    pub(crate) const GLOBAL: u8 = 1 << 0;
    /// Placement type: written through to persistent memory.
    pub(crate) const PERSISTENT: u8 = 1 << 1;
    /// Selectivity level: the RETH's range.
    pub(crate) const RANGE: u8 = 0;
    /// Selectivity level: the whole memory region the RETH's rkey names.
    pub(crate) const MR: u8 = 1;

    const PLACEMENT_BITS: u32 = 0x0f;
    const SELECTIVITY_SHIFT: u32 = 4;
    const SELECTIVITY_BITS: u32 = 0x03;

    /// The header for a placement type and selectivity level, if they fit
    /// their bits.
    pub(crate) fn new(placement: u8, selectivity: u8) -> Option<Self> {
        let fits = u32::from(placement) & !Self::PLACEMENT_BITS == 0
            && u32::from(selectivity) & !Self::SELECTIVITY_BITS == 0;
        fits.then_some(Self {
            placement,
            selectivity,
        })
    }
}

impl Header for Feth {
    const LEN: usize = Ext::FETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let word = Reader::new(bytes).u32()?;
        Ok(Self {
            placement: (word & Self::PLACEMENT_BITS) as u8,
            selectivity: (word >> Self::SELECTIVITY_SHIFT & Self::SELECTIVITY_BITS) as u8,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        let (placement, selectivity) = (u32::from(self.placement), u32::from(self.selectivity));
        if placement & !Self::PLACEMENT_BITS != 0 || selectivity & !Self::SELECTIVITY_BITS != 0 {
            return Err(HeaderError::Range);
        }
        Writer::new(buf, Self::LEN)?.u32(selectivity << Self::SELECTIVITY_SHIFT | placement)
    }
}

/// A NAK code: why the responder refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum NakCode {
    /// A PSN was skipped; the requester must resend from the ACK's PSN.
    PsnSequenceError = 0,
    /// The request is malformed or not allowed on this QP.
    InvalidRequest = 1,
    /// The rkey, address or access rights do not allow the request.
    RemoteAccessError = 2,
    /// The responder failed to carry out a valid request.
    RemoteOperationalError = 3,
    /// An RD request was invalid (defined by IBA, never sent by rroce).
    InvalidRdRequest = 4,
}

/// The meaning of an AETH syndrome byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syndrome {
    /// Positive acknowledgement, with a 5-bit credit count code.
    Ack {
        /// Credit count code; [`UNLIMITED_CREDITS`] means no flow control.
        credits: u8,
    },
    /// Receiver not ready: retry after the time a 5-bit code selects.
    RnrNak {
        /// IBA's RNR timer code (0 is 655.36 ms, 1 is 0.01 ms, ...).
        timer: u8,
    },
    /// Negative acknowledgement.
    Nak(NakCode),
}

impl Syndrome {
    // Bit 7 is reserved and must be 0, so it is part of the type mask: a
    // syndrome with it set is as invalid as the reserved type 0b10.
    const TYPE_MASK: u8 = 0xe0;
    const VALUE_MASK: u8 = 0x1f;
    const ACK: u8 = 0x00;
    const RNR_NAK: u8 = 0x20;
    const NAK: u8 = 0x60;

    /// Decodes a syndrome byte, refusing reserved types and NAK codes.
    pub(crate) const fn from_u8(syn: u8) -> Result<Self, HeaderError> {
        let value = syn & Self::VALUE_MASK;
        match syn & Self::TYPE_MASK {
            Self::ACK => Ok(Self::Ack { credits: value }),
            Self::RNR_NAK => Ok(Self::RnrNak { timer: value }),
            Self::NAK => match value {
                0 => Ok(Self::Nak(NakCode::PsnSequenceError)),
                1 => Ok(Self::Nak(NakCode::InvalidRequest)),
                2 => Ok(Self::Nak(NakCode::RemoteAccessError)),
                3 => Ok(Self::Nak(NakCode::RemoteOperationalError)),
                4 => Ok(Self::Nak(NakCode::InvalidRdRequest)),
                _ => Err(HeaderError::Syndrome(syn)),
            },
            _ => Err(HeaderError::Syndrome(syn)),
        }
    }

    /// Encodes the syndrome byte; credit and timer codes must fit 5 bits.
    pub(crate) const fn to_u8(self) -> Result<u8, HeaderError> {
        let (kind, value) = match self {
            Self::Ack { credits } => (Self::ACK, credits),
            Self::RnrNak { timer } => (Self::RNR_NAK, timer),
            Self::Nak(code) => (Self::NAK, code as u8),
        };
        if value & !Self::VALUE_MASK != 0 {
            return Err(HeaderError::Range);
        }
        Ok(kind | value)
    }
}

/// The ACK extended transport header, on ACKs and read responses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Aeth {
    /// ACK, RNR NAK or NAK, with its argument.
    pub(crate) syndrome: Syndrome,
    /// Message sequence number: messages completed by the responder, 24 bits.
    pub(crate) msn: u32,
}

impl Header for Aeth {
    const LEN: usize = Ext::AETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let word = Reader::new(bytes).u32()?;
        Ok(Self {
            syndrome: Syndrome::from_u8((word >> 24) as u8)?,
            msn: word & LOW24,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        let syndrome = self.syndrome.to_u8()?;
        let msn = u24(self.msn)?;
        let mut w = Writer::new(buf, Self::LEN)?;
        w.u32(u32::from(syndrome) << 24 | msn)
    }
}

/// The atomic extended transport header of compare-swap and fetch-add.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AtomicEth {
    /// Remote virtual address, 8-byte aligned.
    pub(crate) va: u64,
    /// Remote key of the memory region.
    pub(crate) rkey: u32,
    /// Value to swap in, or to add.
    pub(crate) swap_add: u64,
    /// Value to compare with (compare-swap only).
    pub(crate) compare: u64,
}

impl Header for AtomicEth {
    const LEN: usize = Ext::ATOMIC_ETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let mut r = Reader::new(bytes);
        Ok(Self {
            va: r.u64()?,
            rkey: r.u32()?,
            swap_add: r.u64()?,
            compare: r.u64()?,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        let mut w = Writer::new(buf, Self::LEN)?;
        w.u64(self.va)?;
        w.u32(self.rkey)?;
        w.u64(self.swap_add)?;
        w.u64(self.compare)
    }
}

/// The atomic ACK extended transport header: the value before the atomic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AtomicAckEth {
    /// The remote memory's original value.
    pub(crate) orig: u64,
}

impl Header for AtomicAckEth {
    const LEN: usize = Ext::ATOMIC_ACK_ETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        Ok(Self {
            orig: Reader::new(bytes).u64()?,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        Writer::new(buf, Self::LEN)?.u64(self.orig)
    }
}

/// Immediate data, delivered to the receiver's completion.
///
/// The value is the big-endian wire word read as a number. The verbs ABI
/// keeps immediate data as `__be32` end to end, so the driver converts with
/// `u32::from_be` from a send WQE and `to_be` into a work completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ImmDt {
    /// The immediate data.
    pub(crate) imm: u32,
}

impl Header for ImmDt {
    const LEN: usize = Ext::IMM_DT.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        Ok(Self {
            imm: Reader::new(bytes).u32()?,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        Writer::new(buf, Self::LEN)?.u32(self.imm)
    }
}

/// The invalidate extended transport header of SEND with invalidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ieth {
    /// The rkey the responder invalidates on completion.
    pub(crate) rkey: u32,
}

impl Header for Ieth {
    const LEN: usize = Ext::IETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        Ok(Self {
            rkey: Reader::new(bytes).u32()?,
        })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        Writer::new(buf, Self::LEN)?.u32(self.rkey)
    }
}

/// The datagram extended transport header of UD packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deth {
    /// Queue key the destination QP must hold.
    pub(crate) qkey: u32,
    /// Source QP number, 24 bits.
    pub(crate) src_qpn: u32,
}

impl Header for Deth {
    const LEN: usize = Ext::DETH.wire_len();

    fn parse(bytes: &[u8]) -> Result<Self, HeaderError> {
        let mut r = Reader::new(bytes);
        let qkey = r.u32()?;
        let src_qpn = r.u32()? & LOW24;
        Ok(Self { qkey, src_qpn })
    }

    fn write(&self, buf: &mut [u8]) -> Result<(), HeaderError> {
        let src_qpn = u24(self.src_qpn)?;
        let mut w = Writer::new(buf, Self::LEN)?;
        w.u32(self.qkey)?;
        w.u32(src_qpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<H: Header + Copy + PartialEq + core::fmt::Debug>(h: H, wire: &[u8]) {
        assert_eq!(wire.len(), H::LEN);
        let mut buf = [0xa5u8; 48];
        h.write(&mut buf).unwrap();
        assert_eq!(&buf[..H::LEN], wire);
        // Nothing past the header is touched.
        assert!(buf[H::LEN..].iter().all(|&b| b == 0xa5));
        assert_eq!(H::parse(wire), Ok(h));
        assert_eq!(H::parse(&wire[..H::LEN - 1]), Err(HeaderError::Truncated));
        let mut short = [0u8; 47];
        assert_eq!(
            h.write(&mut short[..H::LEN - 1]),
            Err(HeaderError::Truncated)
        );
        assert!(short.iter().all(|&b| b == 0));
    }

    fn bth() -> Bth {
        Bth {
            opcode: Opcode::RcWriteOnlyImm,
            solicited: true,
            mig_req: true,
            pad: 3,
            pkey: 0xffff,
            fecn: false,
            becn: true,
            dest_qpn: 0x12_3456,
            ack_req: true,
            psn: Psn::new(0xab_cdef),
        }
    }

    // The layout of rxe_hdr.h: opcode, SE|M|pad|tver, pkey,
    // F|B|resv6a|dest QPN, A|resv7|PSN.
    #[test]
    fn bth_layout() {
        let wire = [
            0x0b, 0xf0, 0xff, 0xff, 0x40, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
        ];
        round_trip(bth(), &wire);

        let plain = Bth {
            opcode: Opcode::UdSendOnly,
            solicited: false,
            mig_req: false,
            pad: 1,
            pkey: 0x8001,
            fecn: true,
            becn: false,
            dest_qpn: 1,
            ack_req: false,
            psn: Psn::new(0),
        };
        let wire = [0x64, 0x10, 0x80, 0x01, 0x80, 0, 0, 1, 0, 0, 0, 0];
        round_trip(plain, &wire);
    }

    #[test]
    fn bth_ignores_reserved_bits() {
        let wire = [
            0x0b, 0xf0, 0xff, 0xff, 0x7f, 0x12, 0x34, 0x56, 0xff, 0xab, 0xcd, 0xef,
        ];
        assert_eq!(Bth::parse(&wire), Ok(bth()));
    }

    #[test]
    fn bth_rejects_unknown_opcode_and_version() {
        let mut wire = [0u8; 12];
        bth().write(&mut wire).unwrap();
        wire[0] = 0x81;
        assert_eq!(Bth::parse(&wire), Err(HeaderError::UnknownOpcode(0x81)));
        wire[0] = Opcode::RcAck as u8;
        wire[1] |= 0x01;
        assert_eq!(Bth::parse(&wire), Err(HeaderError::Version(1)));
    }

    #[test]
    fn bth_write_refuses_out_of_range_fields() {
        let mut buf = [0u8; 12];
        let too_big_qpn = Bth {
            dest_qpn: 0x100_0000,
            ..bth()
        };
        assert_eq!(too_big_qpn.write(&mut buf), Err(HeaderError::Range));
        let too_much_pad = Bth { pad: 4, ..bth() };
        assert_eq!(too_much_pad.write(&mut buf), Err(HeaderError::Range));
        assert_eq!(buf, [0; 12]);
    }

    #[test]
    fn reth_layout() {
        let reth = Reth {
            va: 0x0102_0304_0506_0708,
            rkey: 0x1122_3344,
            dma_len: 0x8000_0000,
        };
        let wire = [
            1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0x80, 0, 0, 0,
        ];
        round_trip(reth, &wire);
    }

    // rxe_hdr.h's feth_init(): level in bits 5:4, type in bits 3:0.
    #[test]
    fn feth_layout() {
        let mr_global = Feth {
            placement: Feth::GLOBAL,
            selectivity: Feth::MR,
        };
        round_trip(mr_global, &[0, 0, 0, 0x11]);
        let range_both = Feth {
            placement: Feth::GLOBAL | Feth::PERSISTENT,
            selectivity: Feth::RANGE,
        };
        round_trip(range_both, &[0, 0, 0, 0x03]);
        // Reserved bits are ignored on parse and refused on write.
        assert_eq!(
            Feth::parse(&[0xff, 0xff, 0xff, 0xd2]),
            Ok(Feth {
                placement: 2,
                selectivity: 1
            })
        );
        assert_eq!(Feth::new(1, 1), Some(mr_global));
        assert_eq!(Feth::new(0x10, 0), None);
        assert_eq!(Feth::new(1, 4), None);
        let mut buf = [0u8; 4];
        let wide = Feth {
            placement: 0x10,
            selectivity: 0,
        };
        assert_eq!(wide.write(&mut buf), Err(HeaderError::Range));
        let deep = Feth {
            placement: 1,
            selectivity: 4,
        };
        assert_eq!(deep.write(&mut buf), Err(HeaderError::Range));
        assert_eq!(buf, [0; 4]);
    }

    #[test]
    fn aeth_layout() {
        let ack = Aeth {
            syndrome: Syndrome::Ack {
                credits: UNLIMITED_CREDITS,
            },
            msn: 0x00_0102,
        };
        round_trip(ack, &[0x1f, 0x00, 0x01, 0x02]);
        let nak = Aeth {
            syndrome: Syndrome::Nak(NakCode::RemoteAccessError),
            msn: 0xff_ffff,
        };
        round_trip(nak, &[0x62, 0xff, 0xff, 0xff]);
        let rnr = Aeth {
            syndrome: Syndrome::RnrNak { timer: 14 },
            msn: 7,
        };
        round_trip(rnr, &[0x2e, 0, 0, 7]);
    }

    // rxe_hdr.h's enum aeth_syndrome, value by value.
    #[test]
    fn syndromes_match_rxe() {
        let known = [
            (0x1f, Syndrome::Ack { credits: 0x1f }),
            (0x00, Syndrome::Ack { credits: 0 }),
            (0x20, Syndrome::RnrNak { timer: 0 }),
            (0x60, Syndrome::Nak(NakCode::PsnSequenceError)),
            (0x61, Syndrome::Nak(NakCode::InvalidRequest)),
            (0x62, Syndrome::Nak(NakCode::RemoteAccessError)),
            (0x63, Syndrome::Nak(NakCode::RemoteOperationalError)),
            (0x64, Syndrome::Nak(NakCode::InvalidRdRequest)),
        ];
        for (byte, syn) in known {
            assert_eq!(Syndrome::from_u8(byte), Ok(syn));
            assert_eq!(syn.to_u8(), Ok(byte));
        }
    }

    #[test]
    fn syndrome_round_trips_or_is_rejected() {
        let mut valid = 0;
        for byte in 0..=255u8 {
            match Syndrome::from_u8(byte) {
                Ok(syn) => {
                    assert_eq!(syn.to_u8(), Ok(byte));
                    valid += 1;
                }
                Err(e) => assert_eq!(e, HeaderError::Syndrome(byte)),
            }
        }
        // 32 ACK, 32 RNR NAK and 5 NAK codes.
        assert_eq!(valid, 69);
        assert_eq!(
            Syndrome::Ack { credits: 32 }.to_u8(),
            Err(HeaderError::Range)
        );
    }

    #[test]
    fn aeth_rejects_reserved_syndromes_and_big_msn() {
        for byte in [0x40, 0x5f, 0x65, 0x7f, 0x80, 0x9f] {
            assert_eq!(
                Aeth::parse(&[byte, 0, 0, 0]),
                Err(HeaderError::Syndrome(byte))
            );
        }
        let aeth = Aeth {
            syndrome: Syndrome::Ack { credits: 0 },
            msn: 0x100_0000,
        };
        assert_eq!(aeth.write(&mut [0; 4]), Err(HeaderError::Range));
    }

    #[test]
    fn atomic_eth_layout() {
        let atomic = AtomicEth {
            va: 0x1000,
            rkey: 0xdead_beef,
            swap_add: 0x0102_0304_0506_0708,
            compare: 0xf0f1_f2f3_f4f5_f6f7,
        };
        let wire = [
            0, 0, 0, 0, 0, 0, 0x10, 0, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 0xf0, 0xf1,
            0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
        ];
        round_trip(atomic, &wire);
    }

    #[test]
    fn small_header_layouts() {
        round_trip(
            AtomicAckEth {
                orig: 0x8877_6655_4433_2211,
            },
            &[0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11],
        );
        round_trip(ImmDt { imm: 0x0a0b_0c0d }, &[0x0a, 0x0b, 0x0c, 0x0d]);
        round_trip(Ieth { rkey: 0x1234 }, &[0, 0, 0x12, 0x34]);
    }

    #[test]
    fn deth_layout_and_reserved_byte() {
        let deth = Deth {
            qkey: 0x8001_0000,
            src_qpn: 1,
        };
        round_trip(deth, &[0x80, 0x01, 0, 0, 0, 0, 0, 1]);
        assert_eq!(Deth::parse(&[0x80, 0x01, 0, 0, 0xff, 0, 0, 1]), Ok(deth));
        let big = Deth {
            src_qpn: 0x100_0000,
            ..deth
        };
        assert_eq!(big.write(&mut [0; 8]), Err(HeaderError::Range));
    }
}
