//! Unit-ish integration tests, one module per behaviour.

mod errors;
mod fuzz_corpus;
mod properties;
mod snapshots;
