//! The read side of `torch.export` programs.

pub mod schema;
