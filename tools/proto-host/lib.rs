// SPDX-License-Identifier: GPL-2.0

//! Host build of rroce's protocol core.
//!
//! The core is compiled from the driver's own files, so the unit tests in
//! them run here with `cargo test`. This crate adds what the kernel must not
//! carry: a table-driven CRC-32 standing in for the kernel's `crc32_le()`,
//! and the properties that the fuzz targets and the deterministic smoke
//! fuzzers below both check: [`check_packet`] for the packet parser,
//! [`check_wqe`] for the ring element parsers, and [`check_window`], the
//! send window over a lossy, duplicating, reordering link.

#![no_std]

#[cfg(test)]
extern crate std;

// The core's items are `pub(crate)`, as the kernel's `unreachable_pub` lint
// wants; what the module does not use yet is dead here.
#[allow(dead_code)]
#[path = "../../drivers/infiniband/sw/rroce/proto/mod.rs"]
pub mod proto;

mod ring_check;
#[cfg(test)]
mod shared_peer_sim;
mod window_sim;
pub use ring_check::check_wqe;
pub use window_sim::check_window;

use proto::headers::{Bth, Header};
use proto::icrc;
use proto::opcode::{Opcode, MAX_HEADER_LEN};
use proto::packet::{packet_len, pad_len, Packet};

/// The reflected CRC-32 table for polynomial 0xEDB88320.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// The kernel's `crc32_le()`: reflected CRC-32 without inversion on entry or
/// exit, so that calls chain.
pub fn crc32_le(crc: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(crc, |crc, &b| {
        CRC_TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// The IPv4 and UDP headers the round-trip check computes ICRCs under.
const IPV4: [u8; 20] = [
    0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
];
const UDP: [u8; 8] = [0xc0, 0x00, 0x12, 0xb7, 0, 0, 0, 0];

/// Bits of the header bytes that the parser ignores and the builder zeroes:
/// BTH `resv6a` and `resv7`, and the byte above the DETH source QPN.
fn reserved(opcode: Opcode, at: usize) -> u8 {
    const BTH_RESV6A: usize = 4;
    const BTH_RESV7: usize = 8;
    const DETH_RESV8: usize = Bth::LEN + 4;
    // The FETH's bits 31:6.
    const FETH_RESV: core::ops::Range<usize> = Bth::LEN..Bth::LEN + 4;
    match at {
        BTH_RESV6A => 0x3f,
        BTH_RESV7 => 0x7f,
        DETH_RESV8 if matches!(opcode, Opcode::UdSendOnly | Opcode::UdSendOnlyImm) => 0xff,
        _ if opcode == Opcode::RcFlush && FETH_RESV.contains(&at) => {
            if at == FETH_RESV.end - 1 {
                0xc0
            } else {
                0xff
            }
        }
        _ => 0,
    }
}

/// Parses `data` as a packet and, if that succeeds, checks that the result
/// is consistent; panics if it is not.
///
/// The first byte picks the path MTU (256 to 4096); the rest is the packet,
/// from the BTH through the ICRC. Checked: the lengths of headers, payload,
/// pad and ICRC add up to the input; the payload is where the headers end
/// and fits the MTU; writing the parsed headers back gives the input bytes
/// except reserved bits; parsing the rewritten packet gives the same
/// packet; an ICRC computed over it verifies, and fails once a covered byte
/// changes.
pub fn check_packet(data: &[u8]) {
    let Some((&mtu_sel, bytes)) = data.split_first() else {
        return;
    };
    let mtu = 256usize << (mtu_sel % 5);
    let Ok(pkt) = Packet::parse(bytes, mtu) else {
        return;
    };
    let opcode = pkt.headers.bth.opcode;
    let hlen = opcode.header_len();
    let plen = pkt.payload.len();
    let pad = usize::from(pkt.headers.bth.pad);

    assert!(hlen <= MAX_HEADER_LEN);
    assert_eq!(pkt.headers.wire_len(), hlen);
    assert_eq!(hlen + plen + pad + icrc::LEN, bytes.len());
    assert_eq!(packet_len(opcode, plen), Some(bytes.len()));
    assert_eq!(pad, usize::from(pad_len(plen)));
    assert!(plen <= mtu);
    assert!(opcode.has_payload() || plen == 0);
    assert_eq!(bytes.get(hlen..hlen + plen), Some(pkt.payload));

    let mut out = [0u8; MAX_HEADER_LEN + 4096 + 8];
    assert_eq!(pkt.headers.write(&mut out), Ok(hlen));
    for (at, (&a, &b)) in bytes.iter().zip(&out[..hlen]).enumerate() {
        assert_eq!(a & !reserved(opcode, at), b, "header byte {at}");
    }

    let len = bytes.len();
    out[hlen..len].copy_from_slice(&bytes[hlen..]);
    assert_eq!(Packet::parse(&out[..len], mtu), Ok(pkt));

    let covered = len - icrc::LEN;
    let sum = icrc::compute(crc32_le, &IPV4, &UDP, &out[..covered]).unwrap();
    out[covered..len].copy_from_slice(&sum);
    assert_eq!(icrc::verify(crc32_le, &IPV4, &UDP, &out[..len]), Ok(()));
    let flip = usize::from(mtu_sel) % covered;
    out[flip] ^= 0x01;
    let damaged = icrc::verify(crc32_le, &IPV4, &UDP, &out[..len]);
    // BTH byte 4 is masked out of the ICRC; every other byte counts. In
    // the FLUSH form rroce sends for rxe, it counts too (icrc.rs).
    assert_eq!(damaged.is_ok(), flip == 4 && opcode != Opcode::RcFlush);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::headers::{
        Aeth, AtomicAckEth, AtomicEth, Deth, Feth, Ieth, ImmDt, NakCode, Reth, Syndrome,
    };
    use proto::opcode::Ext;
    use proto::packet::{ExtHeaders, Headers, ParseError};
    use proto::psn::Psn;
    use std::vec::Vec;

    /// xorshift64*: small, fast, and the same sequence on every machine.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn u32(&mut self) -> u32 {
            (self.next() >> 32) as u32
        }

        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }
    }

    fn random_headers(rng: &mut Rng, opcode: Opcode, payload_len: usize) -> Headers {
        let want = opcode.ext();
        let syndrome = match rng.below(3) {
            0 => Syndrome::Ack {
                credits: rng.below(32) as u8,
            },
            1 => Syndrome::RnrNak {
                timer: rng.below(32) as u8,
            },
            _ => Syndrome::Nak(NakCode::RemoteAccessError),
        };
        Headers {
            bth: Bth {
                opcode,
                solicited: rng.chance(50),
                mig_req: rng.chance(50),
                pad: pad_len(payload_len),
                pkey: rng.u32() as u16,
                fecn: rng.chance(10),
                becn: rng.chance(10),
                dest_qpn: rng.u32() & 0xff_ffff,
                ack_req: rng.chance(50),
                psn: Psn::new(rng.u32()),
            },
            ext: {
                let mut ext = ExtHeaders::default();
                if want.contains(Ext::DETH) {
                    ext.set_deth(Deth {
                        qkey: rng.u32(),
                        src_qpn: rng.u32() & 0xff_ffff,
                    });
                }
                if want.contains(Ext::FETH) {
                    ext.set_feth(Feth {
                        placement: rng.below(16) as u8,
                        selectivity: rng.below(4) as u8,
                    });
                }
                if want.contains(Ext::RETH) {
                    ext.set_reth(Reth {
                        va: rng.next(),
                        rkey: rng.u32(),
                        dma_len: rng.u32(),
                    });
                }
                if want.contains(Ext::ATOMIC_ETH) {
                    ext.set_atomic(AtomicEth {
                        va: rng.next(),
                        rkey: rng.u32(),
                        swap_add: rng.next(),
                        compare: rng.next(),
                    });
                }
                if want.contains(Ext::AETH) {
                    ext.set_aeth(Aeth {
                        syndrome,
                        msn: rng.u32() & 0xff_ffff,
                    });
                }
                if want.contains(Ext::ATOMIC_ACK_ETH) {
                    ext.set_atomic_ack(AtomicAckEth { orig: rng.next() });
                }
                if want.contains(Ext::IMM_DT) {
                    ext.set_imm(ImmDt { imm: rng.u32() });
                }
                if want.contains(Ext::IETH) {
                    ext.set_ieth(Ieth { rkey: rng.u32() });
                }
                ext
            },
        }
    }

    /// A fuzz input: the MTU selector byte, then a valid packet of a random
    /// opcode with random fields, with a valid ICRC.
    fn valid_input(rng: &mut Rng, out: &mut Vec<u8>) {
        let opcode = Opcode::ALL[rng.below(Opcode::ALL.len())];
        let payload_len = if !opcode.has_payload() {
            0
        } else if rng.chance(3) {
            rng.below(4200)
        } else {
            rng.below(70)
        };
        let h = random_headers(rng, opcode, payload_len);
        let len = packet_len(opcode, payload_len).unwrap();
        out.clear();
        out.push(rng.below(256) as u8);
        out.resize(1 + len, 0);
        let n = h.write(&mut out[1..]).unwrap();
        for b in &mut out[1 + n..1 + n + payload_len] {
            *b = rng.next() as u8;
        }
        let covered = 1 + len - icrc::LEN;
        let sum = icrc::compute(crc32_le, &IPV4, &UDP, &out[1..covered]).unwrap();
        out[covered..].copy_from_slice(&sum);
    }

    /// Damages an input the ways a fuzzer would: flipped bits, random bytes,
    /// cut or grown tails.
    fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
        for _ in 0..rng.below(4) {
            if input.is_empty() {
                break;
            }
            let at = rng.below(input.len());
            match rng.below(4) {
                0 => input[at] ^= 1 << rng.below(8),
                1 => input[at] = rng.next() as u8,
                2 => input.truncate(at),
                _ => {
                    for _ in 0..rng.below(9) {
                        input.push(rng.next() as u8);
                    }
                }
            }
        }
    }

    #[test]
    fn table_crc_matches_check_value() {
        assert_eq!(!crc32_le(!0, b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32_le(!0, &[0xff; 8]), 0xdebb_20e3);
    }

    #[test]
    fn valid_inputs_parse() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let mut input = Vec::new();
        for _ in 0..2000 {
            valid_input(&mut rng, &mut input);
            let mtu = 256usize << (input[0] % 5);
            match Packet::parse(&input[1..], mtu) {
                Ok(_) => {}
                Err(ParseError::PayloadTooLong) => {}
                Err(e) => panic!("{e:?} for {:x?}", &input[..input.len().min(48)]),
            }
            check_packet(&input);
        }
    }

    /// The fuzz property on 200,000 inputs from a fixed seed, so that it runs
    /// in every `cargo test` without a nightly toolchain or libFuzzer.
    #[test]
    fn smoke_fuzz_parse_packet() {
        const INPUTS: usize = 200_000;
        let mut rng = Rng(0x5eed_0f4c_ce55_e5e5);
        let mut input = Vec::new();
        let mut parsed = 0;
        for _ in 0..INPUTS {
            if rng.chance(20) {
                // Raw noise, sometimes with a real opcode up front.
                input.clear();
                for _ in 0..rng.below(80) {
                    input.push(rng.next() as u8);
                }
                if input.len() > 1 && rng.chance(50) {
                    input[1] = Opcode::ALL[rng.below(Opcode::ALL.len())] as u8;
                }
            } else {
                valid_input(&mut rng, &mut input);
                mutate(&mut rng, &mut input);
            }
            check_packet(&input);
            if input.len() > 1 && Packet::parse(&input[1..], 4096).is_ok() {
                parsed += 1;
            }
        }
        // The property is only worth something if many inputs get through.
        assert!(parsed > INPUTS / 4, "only {parsed} inputs parsed");
    }

    /// The send window's fuzz property on inputs from a fixed seed: work
    /// requests of every kind over links that lose, duplicate or reorder
    /// from none to most of their packets.
    #[test]
    fn smoke_fuzz_send_window() {
        const INPUTS: usize = 3000;
        let mut rng = Rng(0x0bad_11e5_5eed_0001);
        let mut input = Vec::new();
        let mut completed = 0;
        for i in 0..INPUTS {
            input.clear();
            // The number of requests, then two bytes for each (see
            // check_window): no more, or the rest would be read as link faults.
            let requests = rng.below(24);
            input.push(requests as u8);
            for _ in 0..2 * (requests + 1) {
                input.push(rng.next() as u8);
            }
            // How many packets the link may drop, duplicate or hold back,
            // and how often.
            let (losses, bias) = (rng.below(400), rng.below(256) as u8);
            for _ in 0..losses {
                input.push((rng.next() as u8).saturating_add(bias));
            }
            if check_window(&input) {
                completed += 1;
            } else {
                assert!(losses > 0, "input {i} gave up on a lossless link");
            }
        }
        // Most lossy links still get everything through.
        assert!(completed > INPUTS * 9 / 10, "only {completed} completed");
    }

    /// The ring element parsers' fuzz property: valid elements of every
    /// operation written as the provider does, then damaged, and noise.
    #[test]
    fn smoke_fuzz_parse_wqe() {
        use proto::wqe::{dma, send, WrOpcode, SEND_INLINE, SEND_WQE_SIZE};
        const INPUTS: usize = 100_000;
        let mut rng = Rng(0x51de_c0de_0000_0017);
        let mut input = Vec::new();
        let mut parsed = 0;
        for _ in 0..INPUTS {
            input.clear();
            let len = 2 + SEND_WQE_SIZE as usize + rng.below(300);
            for _ in 0..len {
                input.push(if rng.chance(70) { 0 } else { rng.next() as u8 });
            }
            if rng.chance(80) {
                // A plausible element: a real opcode, and a length and SGE
                // count near the limits.
                let slot = &mut input[2..];
                let op = WrOpcode::ALL[rng.below(WrOpcode::ALL.len())] as u32;
                slot[send::OPCODE..send::OPCODE + 4].copy_from_slice(&op.to_ne_bytes());
                let flags = if rng.chance(40) { SEND_INLINE } else { 0 };
                slot[send::SEND_FLAGS..send::SEND_FLAGS + 4].copy_from_slice(&flags.to_ne_bytes());
                let n = rng.below(18) as u32;
                let at = send::DMA + dma::NUM_SGE;
                slot[at..at + 4].copy_from_slice(&n.to_ne_bytes());
                let length = rng.below(260) as u32;
                let at = send::DMA + dma::LENGTH;
                slot[at..at + 4].copy_from_slice(&length.to_ne_bytes());
                let at = proto::wqe::recv::DMA + dma::NUM_SGE;
                if rng.chance(50) {
                    slot[at..at + 4].copy_from_slice(&n.to_ne_bytes());
                }
                // Limits that mostly let it through.
                let max_sge = (n as usize + rng.below(3)).min(16);
                input[0] = (max_sge << 1 | rng.below(2)) as u8;
                input[1] = (length as usize + rng.below(8)).min(255) as u8;
                mutate(&mut rng, &mut input);
            }
            check_wqe(&input);
            if input.len() > 2 {
                let (max_sge, max_inline) = (u32::from(input[0] >> 1) % 17, u32::from(input[1]));
                let ok = if input[0] & 1 == 0 {
                    proto::wqe::SendWqe::<_, ()>::parse(&input[2..], max_sge, max_inline).is_some()
                } else {
                    proto::wqe::RecvWqe::parse(&input[2..], max_sge).is_some()
                };
                parsed += usize::from(ok);
            }
        }
        assert!(parsed > INPUTS / 5, "only {parsed} inputs parsed");
    }
}
