// SPDX-License-Identifier: GPL-2.0

//! BTH opcodes and what each one implies.
//!
//! The opcode alone decides which extension headers follow the BTH, whether
//! a payload does, and where the packet sits in its message. Those facts live
//! in one table, [`Opcode::info`], so that the parser, the builder and the
//! requester, responder and completer cannot disagree about them.
//!
//! The set is what `rdma_rxe` speaks on RC, UC and UD, FLUSH and ATOMIC
//! WRITE (IBTA 1.5) included. RD, XRC and CNP are not supported, and
//! [`Opcode::from_u8`] rejects them like any unknown value.

/// A BTH opcode rroce understands.
///
/// The discriminant is the wire value: the transport in the top three bits,
/// the operation in the low five.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Opcode {
    /// RC SEND, first packet of several.
    RcSendFirst = 0x00,
    /// RC SEND, a packet between the first and the last.
    RcSendMiddle = 0x01,
    /// RC SEND, last packet.
    RcSendLast = 0x02,
    /// RC SEND with immediate data, last packet.
    RcSendLastImm = 0x03,
    /// RC SEND in a single packet.
    RcSendOnly = 0x04,
    /// RC SEND with immediate data in a single packet.
    RcSendOnlyImm = 0x05,
    /// RC RDMA WRITE, first packet of several.
    RcWriteFirst = 0x06,
    /// RC RDMA WRITE, a packet between the first and the last.
    RcWriteMiddle = 0x07,
    /// RC RDMA WRITE, last packet.
    RcWriteLast = 0x08,
    /// RC RDMA WRITE with immediate data, last packet.
    RcWriteLastImm = 0x09,
    /// RC RDMA WRITE in a single packet.
    RcWriteOnly = 0x0a,
    /// RC RDMA WRITE with immediate data in a single packet.
    RcWriteOnlyImm = 0x0b,
    /// RC RDMA READ request.
    RcReadRequest = 0x0c,
    /// RC RDMA READ response, first packet of several.
    RcReadResponseFirst = 0x0d,
    /// RC RDMA READ response, a packet between the first and the last.
    RcReadResponseMiddle = 0x0e,
    /// RC RDMA READ response, last packet.
    RcReadResponseLast = 0x0f,
    /// RC RDMA READ response in a single packet.
    RcReadResponseOnly = 0x10,
    /// RC ACK or NAK.
    RcAck = 0x11,
    /// RC atomic ACK, carrying the original value.
    RcAtomicAck = 0x12,
    /// RC atomic compare and swap.
    RcCompareSwap = 0x13,
    /// RC atomic fetch and add.
    RcFetchAdd = 0x14,
    /// RC SEND with invalidate, last packet.
    RcSendLastInv = 0x16,
    /// RC SEND with invalidate in a single packet.
    RcSendOnlyInv = 0x17,
    /// RC FLUSH: makes earlier writes to a range or an MR visible.
    RcFlush = 0x1c,
    /// RC ATOMIC WRITE: eight bytes stored at once, after earlier writes.
    RcAtomicWrite = 0x1d,
    /// UC SEND, first packet of several.
    UcSendFirst = 0x20,
    /// UC SEND, a packet between the first and the last.
    UcSendMiddle = 0x21,
    /// UC SEND, last packet.
    UcSendLast = 0x22,
    /// UC SEND with immediate data, last packet.
    UcSendLastImm = 0x23,
    /// UC SEND in a single packet.
    UcSendOnly = 0x24,
    /// UC SEND with immediate data in a single packet.
    UcSendOnlyImm = 0x25,
    /// UC RDMA WRITE, first packet of several.
    UcWriteFirst = 0x26,
    /// UC RDMA WRITE, a packet between the first and the last.
    UcWriteMiddle = 0x27,
    /// UC RDMA WRITE, last packet.
    UcWriteLast = 0x28,
    /// UC RDMA WRITE with immediate data, last packet.
    UcWriteLastImm = 0x29,
    /// UC RDMA WRITE in a single packet.
    UcWriteOnly = 0x2a,
    /// UC RDMA WRITE with immediate data in a single packet.
    UcWriteOnlyImm = 0x2b,
    /// UD SEND (always a single packet).
    UdSendOnly = 0x64,
    /// UD SEND with immediate data.
    UdSendOnlyImm = 0x65,
}

/// The transport service of an opcode, from its top three bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Reliable connected: acknowledged, retried, ordered.
    Rc,
    /// Unreliable connected: ordered within a message, never acknowledged.
    Uc,
    /// Unreliable datagram: single-packet messages carrying a DETH.
    Ud,
}

/// What a packet does, shared by the opcodes of one operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    /// Data for a receive WQE on the responder.
    Send,
    /// Data for remote memory named by a RETH.
    Write,
    /// Asks the responder to send data back.
    ReadRequest,
    /// Data coming back for a read request.
    ReadResponse,
    /// ACK, RNR NAK or NAK.
    Ack,
    /// Response to an atomic request, with the original value.
    AtomicAck,
    /// Atomic compare and swap on remote memory.
    CompareSwap,
    /// Atomic fetch and add on remote memory.
    FetchAdd,
    /// Makes earlier writes visible; answered by an empty read response.
    Flush,
    /// Stores eight bytes at once; answered by an empty read response.
    AtomicWrite,
}

/// Where a packet sits in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    /// Opens a message that more packets continue.
    First,
    /// Continues a message; neither opens nor closes it.
    Middle,
    /// Closes a message that earlier packets opened.
    Last,
    /// Is a whole message.
    Only,
}

/// The length of the BTH, which every packet starts with.
pub(crate) const BTH_LEN: usize = 12;

/// A set of extension headers, in the order they follow the BTH.
///
/// IBA fixes one order for all of them: DETH, FETH, RETH, AtomicETH, AETH,
/// AtomicAckETH, ImmDt, IETH. No opcode has two that would be out of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ext(u8);

impl Ext {
    /// No extension header.
    pub(crate) const NONE: Ext = Ext(0);
    /// Datagram ETH (UD).
    pub(crate) const DETH: Ext = Ext(1 << 0);
    /// RDMA ETH: remote address, key and length.
    pub(crate) const RETH: Ext = Ext(1 << 1);
    /// Atomic ETH: remote address, key and operands.
    pub(crate) const ATOMIC_ETH: Ext = Ext(1 << 2);
    /// ACK ETH: syndrome and MSN.
    pub(crate) const AETH: Ext = Ext(1 << 3);
    /// Atomic ACK ETH: the original value.
    pub(crate) const ATOMIC_ACK_ETH: Ext = Ext(1 << 4);
    /// Immediate data.
    pub(crate) const IMM_DT: Ext = Ext(1 << 5);
    /// Invalidate ETH: the rkey to invalidate.
    pub(crate) const IETH: Ext = Ext(1 << 6);
    /// FLUSH ETH: placement type and selectivity level.
    pub(crate) const FETH: Ext = Ext(1 << 7);

    /// Returns this set with the headers of `other` added.
    pub(crate) const fn with(self, other: Ext) -> Ext {
        Ext(self.0 | other.0)
    }

    /// Tells whether every header in `other` is in this set.
    pub(crate) const fn contains(self, other: Ext) -> bool {
        self.0 & other.0 == other.0
    }

    /// Returns the bytes the headers of this set take on the wire.
    pub(crate) const fn wire_len(self) -> usize {
        // IBA 9.3; the header types take their lengths from here.
        const LENS: [(Ext, usize); 8] = [
            (Ext::DETH, 8),
            (Ext::RETH, 16),
            (Ext::ATOMIC_ETH, 28),
            (Ext::AETH, 4),
            (Ext::ATOMIC_ACK_ETH, 8),
            (Ext::IMM_DT, 4),
            (Ext::IETH, 4),
            (Ext::FETH, 4),
        ];
        let mut len = 0;
        let mut i = 0;
        while i < LENS.len() {
            if self.contains(LENS[i].0) {
                len += LENS[i].1;
            }
            i += 1;
        }
        len
    }
}

/// Every byte's opcode, if rroce supports it: a packet's opcode is decoded
/// with one load.
const DECODE: [Option<Opcode>; 256] = {
    let mut table = [None; 256];
    let mut i = 0;
    while i < Opcode::ALL.len() {
        table[Opcode::ALL[i] as usize] = Some(Opcode::ALL[i]);
        i += 1;
    }
    table
};

/// Every opcode's entry, by its value: each question asked of a packet's
/// opcode on the data path is one load.
const INFO: [Info; 256] = {
    let mut table = [Opcode::RcAck.entry(); 256];
    let mut i = 0;
    while i < Opcode::ALL.len() {
        table[Opcode::ALL[i] as usize] = Opcode::ALL[i].entry();
        i += 1;
    }
    table
};

/// The table entry of one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Info {
    /// What the packet does.
    pub(crate) operation: Operation,
    /// Where it sits in its message.
    pub(crate) segment: Segment,
    /// Which extension headers follow the BTH.
    pub(crate) ext: Ext,
    /// The BTH and those headers' length, in bytes.
    pub(crate) header_len: u8,
}

/// The longest BTH plus extension headers of any supported opcode.
///
/// A transmit path reserves this much in front of the payload.
pub(crate) const MAX_HEADER_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < Opcode::ALL.len() {
        let len = Opcode::ALL[i].header_len();
        if len > max {
            max = len;
        }
        i += 1;
    }
    max
};

impl Opcode {
    /// Every supported opcode, in wire-value order.
    pub(crate) const ALL: [Opcode; 39] = {
        use Opcode::*;
        [
            RcSendFirst,
            RcSendMiddle,
            RcSendLast,
            RcSendLastImm,
            RcSendOnly,
            RcSendOnlyImm,
            RcWriteFirst,
            RcWriteMiddle,
            RcWriteLast,
            RcWriteLastImm,
            RcWriteOnly,
            RcWriteOnlyImm,
            RcReadRequest,
            RcReadResponseFirst,
            RcReadResponseMiddle,
            RcReadResponseLast,
            RcReadResponseOnly,
            RcAck,
            RcAtomicAck,
            RcCompareSwap,
            RcFetchAdd,
            RcSendLastInv,
            RcSendOnlyInv,
            RcFlush,
            RcAtomicWrite,
            UcSendFirst,
            UcSendMiddle,
            UcSendLast,
            UcSendLastImm,
            UcSendOnly,
            UcSendOnlyImm,
            UcWriteFirst,
            UcWriteMiddle,
            UcWriteLast,
            UcWriteLastImm,
            UcWriteOnly,
            UcWriteOnlyImm,
            UdSendOnly,
            UdSendOnlyImm,
        ]
    };

    /// Decodes a BTH opcode byte, or returns `None` for one rroce does not
    /// support.
    pub(crate) const fn from_u8(value: u8) -> Option<Opcode> {
        DECODE[value as usize]
    }

    /// Returns the opcode's table entry.
    pub(crate) const fn info(self) -> Info {
        INFO[self as usize]
    }

    /// Builds the opcode's table entry; [`INFO`] holds them all.
    const fn entry(self) -> Info {
        use Operation::*;
        use Segment::*;
        const IMM_RETH: Ext = Ext::RETH.with(Ext::IMM_DT);
        const IMM_DETH: Ext = Ext::DETH.with(Ext::IMM_DT);
        const ATOMIC_ACK: Ext = Ext::AETH.with(Ext::ATOMIC_ACK_ETH);
        const FLUSH: Ext = Ext::FETH.with(Ext::RETH);

        let (operation, segment, ext) = match self {
            Self::RcSendFirst | Self::UcSendFirst => (Send, First, Ext::NONE),
            Self::RcSendMiddle | Self::UcSendMiddle => (Send, Middle, Ext::NONE),
            Self::RcSendLast | Self::UcSendLast => (Send, Last, Ext::NONE),
            Self::RcSendLastImm | Self::UcSendLastImm => (Send, Last, Ext::IMM_DT),
            Self::RcSendOnly | Self::UcSendOnly => (Send, Only, Ext::NONE),
            Self::RcSendOnlyImm | Self::UcSendOnlyImm => (Send, Only, Ext::IMM_DT),
            Self::RcSendLastInv => (Send, Last, Ext::IETH),
            Self::RcSendOnlyInv => (Send, Only, Ext::IETH),
            Self::RcWriteFirst | Self::UcWriteFirst => (Write, First, Ext::RETH),
            Self::RcWriteMiddle | Self::UcWriteMiddle => (Write, Middle, Ext::NONE),
            Self::RcWriteLast | Self::UcWriteLast => (Write, Last, Ext::NONE),
            Self::RcWriteLastImm | Self::UcWriteLastImm => (Write, Last, Ext::IMM_DT),
            Self::RcWriteOnly | Self::UcWriteOnly => (Write, Only, Ext::RETH),
            Self::RcWriteOnlyImm | Self::UcWriteOnlyImm => (Write, Only, IMM_RETH),
            Self::RcReadRequest => (ReadRequest, Only, Ext::RETH),
            Self::RcReadResponseFirst => (ReadResponse, First, Ext::AETH),
            Self::RcReadResponseMiddle => (ReadResponse, Middle, Ext::NONE),
            Self::RcReadResponseLast => (ReadResponse, Last, Ext::AETH),
            Self::RcReadResponseOnly => (ReadResponse, Only, Ext::AETH),
            Self::RcAck => (Ack, Only, Ext::AETH),
            Self::RcAtomicAck => (AtomicAck, Only, ATOMIC_ACK),
            Self::RcCompareSwap => (CompareSwap, Only, Ext::ATOMIC_ETH),
            Self::RcFetchAdd => (FetchAdd, Only, Ext::ATOMIC_ETH),
            Self::RcFlush => (Flush, Only, FLUSH),
            Self::RcAtomicWrite => (AtomicWrite, Only, Ext::RETH),
            Self::UdSendOnly => (Send, Only, Ext::DETH),
            Self::UdSendOnlyImm => (Send, Only, IMM_DETH),
        };
        Info {
            operation,
            segment,
            ext,
            // 88 bytes even with every header: it fits a byte.
            header_len: (BTH_LEN + ext.wire_len()) as u8,
        }
    }

    /// Returns the transport service, which the top three bits encode.
    pub(crate) const fn transport(self) -> Transport {
        match self as u8 >> 5 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            // UD is 0b011; no other value is in the enum.
            _ => Transport::Ud,
        }
    }

    /// Returns what the packet does.
    pub(crate) const fn operation(self) -> Operation {
        self.info().operation
    }

    /// Returns which extension headers follow the BTH.
    pub(crate) const fn ext(self) -> Ext {
        self.info().ext
    }

    /// Returns the length of the BTH and the extension headers together.
    pub(crate) const fn header_len(self) -> usize {
        self.info().header_len as usize
    }

    /// Tells whether a payload may follow the headers.
    pub(crate) const fn has_payload(self) -> bool {
        matches!(
            self.operation(),
            Operation::Send | Operation::Write | Operation::ReadResponse | Operation::AtomicWrite
        )
    }

    /// Tells whether the requester sends this, as opposed to the responder.
    pub(crate) const fn is_request(self) -> bool {
        !matches!(
            self.operation(),
            Operation::ReadResponse | Operation::Ack | Operation::AtomicAck
        )
    }

    /// Tells whether the packet opens a message (first or only).
    pub(crate) const fn starts_message(self) -> bool {
        matches!(self.info().segment, Segment::First | Segment::Only)
    }

    /// Tells whether the packet closes a message (last or only).
    pub(crate) const fn ends_message(self) -> bool {
        matches!(self.info().segment, Segment::Last | Segment::Only)
    }

    /// Tells whether the packet carries immediate data.
    pub(crate) const fn has_imm(self) -> bool {
        self.ext().contains(Ext::IMM_DT)
    }

    /// Tells whether the responder must take a receive WQE for this packet.
    ///
    /// A SEND consumes one when it starts; a WRITE with immediate data
    /// consumes one to report the immediate, which only its last packet
    /// carries.
    pub(crate) const fn needs_recv_wqe(self) -> bool {
        match self.operation() {
            Operation::Send => self.starts_message(),
            Operation::Write => self.has_imm(),
            _ => false,
        }
    }

    /// Tells whether the packet completes a receive WQE on the responder.
    pub(crate) const fn completes_recv(self) -> bool {
        match self.operation() {
            Operation::Send => self.ends_message(),
            Operation::Write => self.has_imm(),
            _ => false,
        }
    }

    /// Tells whether the responder must acknowledge the packet.
    ///
    /// Every RC request is acknowledged, explicitly or by a later ACK that
    /// covers its PSN; read requests and atomics by their responses.
    pub(crate) const fn needs_ack(self) -> bool {
        matches!(self.transport(), Transport::Rc) && self.is_request()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_u8_round_trips_every_opcode() {
        for op in Opcode::ALL {
            assert_eq!(Opcode::from_u8(op as u8), Some(op));
        }
    }

    #[test]
    fn from_u8_rejects_everything_else() {
        let known = (0..=255u8)
            .filter(|&v| Opcode::from_u8(v).is_some())
            .count();
        assert_eq!(known, Opcode::ALL.len());
        // RD, CNP, UC FLUSH, the reserved 0x15 and UD SEND_FIRST.
        for v in [0x40, 0x81, 0x3c, 0x3d, 0x15, 0x60, 0x2c, 0x66, 0xff] {
            assert_eq!(Opcode::from_u8(v), None, "{v:#x}");
        }
    }

    #[test]
    fn all_is_sorted_and_unique() {
        for pair in Opcode::ALL.windows(2) {
            assert!((pair[0] as u8) < (pair[1] as u8));
        }
    }

    #[test]
    fn transport_matches_top_bits() {
        assert_eq!(Opcode::RcFetchAdd.transport(), Transport::Rc);
        assert_eq!(Opcode::UcWriteOnlyImm.transport(), Transport::Uc);
        assert_eq!(Opcode::UdSendOnlyImm.transport(), Transport::Ud);
    }

    #[test]
    fn uc_matches_rc_operation_for_operation() {
        for op in Opcode::ALL {
            if op.transport() == Transport::Uc {
                let rc = Opcode::from_u8(op as u8 & 0x1f).unwrap();
                assert_eq!(op.info(), rc.info(), "{op:?}");
                assert!(!op.needs_ack());
                assert!(rc.needs_ack());
            }
        }
    }

    // Header lengths as rdma_rxe's opcode table has them.
    #[test]
    fn header_lengths_match_rxe() {
        let expect = [
            (Opcode::RcSendFirst, 12),
            (Opcode::RcSendLastImm, 16),
            (Opcode::RcSendOnlyInv, 16),
            (Opcode::RcWriteFirst, 28),
            (Opcode::RcWriteMiddle, 12),
            (Opcode::RcWriteOnlyImm, 32),
            (Opcode::RcReadRequest, 28),
            (Opcode::RcReadResponseFirst, 16),
            (Opcode::RcReadResponseMiddle, 12),
            (Opcode::RcAck, 16),
            (Opcode::RcAtomicAck, 24),
            (Opcode::RcCompareSwap, 40),
            (Opcode::RcFlush, 32),
            (Opcode::RcAtomicWrite, 28),
            (Opcode::UdSendOnly, 20),
            (Opcode::UdSendOnlyImm, 24),
        ];
        for (op, len) in expect {
            assert_eq!(op.header_len(), len, "{op:?}");
        }
        assert_eq!(MAX_HEADER_LEN, 40);
    }

    #[test]
    fn payload_only_on_data_opcodes() {
        assert!(Opcode::RcSendMiddle.has_payload());
        assert!(Opcode::RcReadResponseLast.has_payload());
        assert!(!Opcode::RcReadRequest.has_payload());
        assert!(!Opcode::RcAck.has_payload());
        assert!(!Opcode::RcAtomicAck.has_payload());
        assert!(!Opcode::RcCompareSwap.has_payload());
        assert!(!Opcode::RcFlush.has_payload());
        assert!(Opcode::RcAtomicWrite.has_payload());
    }

    #[test]
    fn requests_and_responses() {
        let responses = Opcode::ALL.iter().filter(|op| !op.is_request()).count();
        assert_eq!(responses, 6);
        assert!(Opcode::RcReadRequest.is_request());
        assert!(!Opcode::RcReadResponseOnly.is_request());
    }

    #[test]
    fn segments_open_and_close_messages() {
        for op in Opcode::ALL {
            let seg = op.info().segment;
            assert_eq!(
                op.starts_message(),
                matches!(seg, Segment::First | Segment::Only)
            );
            assert_eq!(
                op.ends_message(),
                matches!(seg, Segment::Last | Segment::Only)
            );
            // Only the first and only packets of a WRITE name its target.
            if op.operation() == Operation::Write {
                assert_eq!(op.ext().contains(Ext::RETH), op.starts_message());
            }
        }
    }

    // rxe's RXE_RWR_MASK and RXE_COMP_MASK, opcode by opcode.
    #[test]
    fn receive_wqe_use_matches_rxe() {
        let rwr: [Opcode; 12] = {
            use Opcode::*;
            [
                RcSendFirst,
                RcSendOnly,
                RcSendOnlyImm,
                RcSendOnlyInv,
                RcWriteLastImm,
                RcWriteOnlyImm,
                UcSendFirst,
                UcSendOnly,
                UcSendOnlyImm,
                UcWriteLastImm,
                UcWriteOnlyImm,
                UdSendOnly,
            ]
        };
        for op in Opcode::ALL {
            let expect = rwr.contains(&op) || op == Opcode::UdSendOnlyImm;
            assert_eq!(op.needs_recv_wqe(), expect, "{op:?}");
        }
        assert!(Opcode::RcSendLastInv.completes_recv());
        assert!(Opcode::UcWriteLastImm.completes_recv());
        assert!(!Opcode::RcSendFirst.completes_recv());
        assert!(!Opcode::RcWriteOnly.completes_recv());
        assert!(!Opcode::RcReadResponseOnly.completes_recv());
    }
}
