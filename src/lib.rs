//! torchspec: a reference implementation of PyTorch 2.15.0's dynamic-shape
//! specs (`torch.fx.experimental.dynamic_spec`), checked case by case
//! against goldens captured from real PyTorch. See ARCHITECTURE.md.

pub mod case;
pub mod conformance;
pub mod diff;
pub mod drift;
pub mod error;
pub mod export;
pub mod live;
pub mod pyjson;
pub mod pytree;
pub mod pyval;
pub mod repro;
pub mod source;
pub mod spec;
pub mod testing;

pub use error::{Error, Result};
