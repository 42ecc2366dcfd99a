//! Case format v1 (`shared/case-format.md`): wire types, evaluation of a case
//! against the reference, result lines, and case files.

mod deep;
pub mod eval;
pub mod export_spec;
pub mod file;
mod read;
pub mod result;
pub mod text;
pub mod wire;

pub use eval::eval_case;
pub use result::{Outcome, ResultLine};
pub use wire::{Case, CaseBody, CaseKind, Expr};
