//! Bytes as one case line: parse, then evaluate. A result or a clear error, never a panic.
#![no_main]

mod asan_options;

libfuzzer_sys::fuzz_target!(|data: &[u8]| torchspec::testing::fuzz::case_line(data));
