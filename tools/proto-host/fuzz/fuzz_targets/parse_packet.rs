// SPDX-License-Identifier: GPL-2.0

//! Feeds arbitrary bytes to the packet parser; see `proto_host::check_packet`
//! for the properties checked when parsing succeeds.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| proto_host::check_packet(data));
