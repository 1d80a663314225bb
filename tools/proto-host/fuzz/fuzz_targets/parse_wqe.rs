// SPDX-License-Identifier: GPL-2.0

//! Parses send and receive ring slots as a hostile process could write
//! them; see `proto_host::check_wqe` for the properties checked.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    proto_host::check_wqe(data);
});
