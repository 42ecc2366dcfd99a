//! Mirrors the part of sympy 1.14 (sympy/core/{add,mul,power,relational}.py,
//! sympy/logic/boolalg.py) and of torch/utils/_sympy/functions.py that the
//! spec ShapeEnv reaches: automatic canonicalization when an expression is
//! built (`Add.flatten`, `Mul.flatten`, `Pow`, `FloorDiv.eval`, `Mod.eval`,
//! `PythonMod.eval`, `IntTrueDiv.eval`, relational evaluation, `And`/`Or`/`Not`).
//!
//! The tree itself is `basic` (below); the assumption handlers (`facts`)
//! live here beside the classes, as sympy keeps `_eval_is_*` on them and
//! they build sums themselves (`_monotonic_sign`, `-expr`).

pub use super::basic::*;

mod add;
pub mod facts;
mod floordiv;
mod functions;
mod logic;
mod modulo;
mod mul;
mod poly;
mod rel;

pub use add::*;
pub use floordiv::*;
pub use functions::*;
pub use logic::*;
pub use modulo::*;
pub use mul::*;
use poly::*;
pub use rel::*;

use facts::{facts, Facts};

/// The assumptions sympy derives for `e` (`facts::facts`).
pub fn facts_of(e: &Ex) -> Facts {
    facts(e)
}
