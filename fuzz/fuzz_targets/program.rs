//! Bytes as an exported program (`.pt2` or program JSON): load, report, passes, write back. Never a panic.
#![no_main]

mod asan_options;

libfuzzer_sys::fuzz_target!(|data: &[u8]| torchspec::testing::fuzz::program(data));
