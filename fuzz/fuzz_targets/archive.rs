//! Bytes as a `.pt2`: the archive layer as `torch.export.load` reads it (zip directory, lookup, entries, fallback, weights). Never a panic.
#![no_main]

mod asan_options;

libfuzzer_sys::fuzz_target!(|data: &[u8]| torchspec::testing::fuzz::archive(data));
