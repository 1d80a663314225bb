// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 protocol core: wire formats and the arithmetic around them.
//!
//! Everything here is plain `core` Rust without kernel dependencies, so the
//! same files build into the module and into a host crate
//! (`tools/proto-host`) where they are unit tested and fuzzed. Parsers take
//! untrusted bytes and return a typed value or a reason, and never panic;
//! builders write into buffers the caller provides.
//!
//! The formats follow the InfiniBand Architecture Specification and, where it
//! leaves room, what `rdma_rxe` puts on the wire, because rroce must talk to
//! it.
//!
//! ```text
//! post_send -> requester: Opcode + Headers::write -> icrc::seal_in_place -> UDP
//! UDP -> icrc::verify_in_place -> Packet::parse -> responder / completer
//! user rings (send, recv, completion queues) -> ring::Ring index math,
//!     wqe::SendWqe::parse, RecvWqe::parse; completions -> cqe::Wc::to_bytes
//! ```

pub(crate) mod cnp;
pub(crate) mod cqe;
pub(crate) mod dcqcn;
pub(crate) mod headers;
pub(crate) mod icrc;
pub(crate) mod ip;
pub(crate) mod opcode;
pub(crate) mod packet;
pub(crate) mod pma;
pub(crate) mod psn;
pub(crate) mod ring;
pub(crate) mod rtt;
pub(crate) mod window;
mod wire;
pub(crate) mod wqe;
