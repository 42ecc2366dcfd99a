//! torchspec: the conformance harness of a reference implementation of
//! PyTorch 2.15.0's dynamic-shape specs (`torchspec-spec`) and exported
//! programs (`torchspec-export`), checked case by case against goldens
//! captured from real PyTorch. See ARCHITECTURE.md.
//!
//! The library crates are re-exported under their module names, so
//! `torchspec::export`, `torchspec::spec`, `torchspec::pyval` name them.

pub use torchspec_export as export;
pub use torchspec_export::pytree;
pub use torchspec_pyval as pyval;
pub use torchspec_pyval::{error, pyjson, Error, Result};
pub use torchspec_spec as spec;
pub use torchspec_spec::source;

pub mod case;
pub mod conformance;
pub mod diff;
pub mod drift;
pub mod json;
pub mod live;
pub mod names;
pub mod repro;
pub mod shard;
pub mod testing;
pub mod weights;
