//! Unit-ish integration tests, one module per behaviour.

mod archives;
mod cli;
mod derived_props;
mod error_kinds;
mod errors;
mod footguns;
mod fuzz_corpus;
mod lenient;
mod live;
mod live_programs;
mod lookup_props;
mod mutants;
mod names;
mod ops;
mod programs;
mod properties;
mod pyjson;
mod pytree;
mod refuse;
mod sample_inputs;
mod schema;
mod serialize;
mod snapshots;
mod text_lines;
mod upstream_table;
mod verdicts;
