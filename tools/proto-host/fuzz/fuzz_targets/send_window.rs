// SPDX-License-Identifier: GPL-2.0

//! Runs work requests through the send window over a link that drops,
//! duplicates and reorders the packets the input picks; see
//! `proto_host::check_window` for the properties checked.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    proto_host::check_window(data);
});
