//! Case format v1 (`shared/case-format.md`): wire types, evaluation of a case
//! against the reference, result lines, and case files.

mod deep;
pub mod eval;
pub mod file;
mod read;
pub mod result;
pub mod text;
pub mod wire;

pub use eval::eval_case;
pub use result::{Outcome, ResultLine};
/// The `export_spec` kind's wire types (`wire/export_spec.rs`); its
/// evaluation is `eval/export_spec.rs`.
pub use wire::export_spec;
pub use wire::{Case, CaseBody, CaseKind, Expr};
