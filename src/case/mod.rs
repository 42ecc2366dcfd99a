//! Case format v1 (`shared/case-format.md`): wire types, evaluation of a case
//! against the reference, result lines, and case files.

pub mod eval;
pub mod file;
pub mod result;
pub mod wire;

pub use eval::eval_case;
pub use result::{Outcome, ResultLine};
pub use wire::{Case, CaseBody, Expr};
