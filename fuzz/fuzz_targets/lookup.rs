//! Bytes → spec tree + source chain → lookup; asserts the walk's invariants.
#![no_main]

mod asan_options;

libfuzzer_sys::fuzz_target!(|data: &[u8]| torchspec::testing::fuzz::lookup(data));
