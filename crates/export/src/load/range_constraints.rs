//! Mirrors serialize.py's reading of `range_constraints`:
//! `ExportedProgramDeserializer.deserialize`'s `symbol_name_to_range`
//! (`_int_to_sympy_int` of each bound), the ShapeEnv's unbacked counters,
//! and the constraints that survive loading.

use std::collections::{HashMap, HashSet};
use torchspec_pyval::Raise;

use super::raw::raw_dict_use;
use super::state::R;
use crate::ranges::{Bound, RangeConstraints, ValueRanges};
use crate::schema as wire;
use num_bigint::BigInt;
use torchspec_pyval::pyjson::{PyInt, PyJson};

/// `symbol_name_to_range` of `ExportedProgramDeserializer.deserialize`,
/// built before the graph: each `ValueRanges(_int_to_sympy_int(min,
/// -int_oo), _int_to_sympy_int(max, int_oo))` refuses `min > max`.
pub(super) fn symbol_name_to_range(
    program: &wire::ExportedProgram,
) -> R<HashMap<&str, ValueRanges>> {
    raw_dict_use(program.raw_field("range_constraints"))?;
    let mut out = HashMap::new();
    for (k, v) in &program.range_constraints {
        let lower = int_to_sympy_int(&v.min_val, Bound::NegIntOo)?;
        let upper = int_to_sympy_int(&v.max_val, Bound::IntOo)?;
        let rank = |b: &Bound| match b {
            Bound::NegIntOo => 0,
            Bound::Int(_) => 1,
            Bound::IntOo => 2,
        };
        let invalid = match (&lower, &upper) {
            (Bound::Int(lo), Bound::Int(hi)) => lo > hi,
            (lo, hi) => rank(lo) > rank(hi),
        };
        if invalid {
            return Err(Raise::new(
                "ValueRangeError",
                format!("Invalid ranges [{lower}:{upper}]"),
            ));
        }
        out.insert(k.as_str(), ValueRanges { lower, upper });
    }
    Ok(out)
}

/// `GraphModuleDeserializer.deserialize` bumps the ShapeEnv's unbacked
/// counters past every range-constraint key named like an unbacked symbol:
/// `int(k[len("zuf"):])` or `int(k[len("u"):])`, which raises on a key
/// such as `u0 + 1`.
pub(super) fn unbacked_counters(program: &wire::ExportedProgram) -> R<()> {
    for (k, _) in &program.range_constraints {
        let digits = k.strip_prefix("zuf").or_else(|| k.strip_prefix('u'));
        if let Some(d) = digits.filter(|d| !python_int_literal(d)) {
            let shown: String = torchspec_pyval::repr::str_repr(d)
                .chars()
                .take(200)
                .collect();
            return Err(Raise::new(
                "ValueError",
                format!("invalid literal for int() with base 10: {shown}"),
            ));
        }
    }
    Ok(())
}

/// Whether `int(s)` parses: surrounding whitespace, a sign, ASCII digits
/// with single underscores between them.
pub(super) fn python_int_literal(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    !t.is_empty()
        && !t.starts_with('_')
        && !t.ends_with('_')
        && !t.contains("__")
        && t.bytes().all(|b| b.is_ascii_digit() || b == b'_')
}

/// `_int_to_sympy_int(val, default)` (serialize.py) on what
/// `_dict_to_dataclass` kept: `None` is the default, `int_oo` and
/// `math.inf` are `int_oo`, anything else is `sympy.Integer(val)`, which is
/// `int(val)` (a string without its spaces).
pub(super) fn int_to_sympy_int(v: &wire::Loose<Option<PyInt>>, default: Bound) -> R<Bound> {
    let raw = match v {
        wire::Loose::Typed(None) => return Ok(default),
        wire::Loose::Typed(Some(i)) => return Ok(Bound::Int(i.to_bigint())),
        wire::Loose::Raw(raw) => raw,
    };
    Ok(match raw {
        PyJson::Float(f) if *f == f64::INFINITY => Bound::IntOo,
        PyJson::Float(f) if *f == f64::NEG_INFINITY => Bound::NegIntOo,
        PyJson::Float(f) if f.is_nan() => {
            return Err(Raise::new(
                "ValueError",
                "cannot convert float NaN to integer",
            ))
        }
        PyJson::Float(f) => {
            Bound::Int(num_traits::FromPrimitive::from_f64(f.trunc()).unwrap_or_default())
        }
        PyJson::Bool(b) => Bound::Int(BigInt::from(u8::from(*b))),
        PyJson::Int(i) => Bound::Int(i.to_bigint()),
        PyJson::Str(s) => {
            let s = s.replace(' ', "");
            Bound::Int(py_int_str(&s).ok_or_else(|| {
                Raise::new(
                    "ValueError",
                    format!(
                        "invalid literal for int() with base 10: {}",
                        torchspec_pyval::str_repr(&s)
                    ),
                )
            })?)
        }
        other => {
            let mut text = String::new();
            wire::load::repr_raw(other, &mut text);
            return Err(Raise::new(
                "TypeError",
                format!("Argument of Integer should be of numeric type, got {text}."),
            ));
        }
    })
}

/// CPython's `int(str)` in base 10: surrounding whitespace, a sign, digits
/// with single `_` between them.
pub(super) fn py_int_str(s: &str) -> Option<BigInt> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let b = body.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() || !b[b.len() - 1].is_ascii_digit() {
        return None;
    }
    let mut digits = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => digits.push(c as char),
            b'_' if b[i + 1] != b'_' => {}
            _ => return None,
        }
    }
    if digits.len() > 4300 {
        return None;
    }
    let n: BigInt = digits.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// `ep.range_constraints` after loading: the serialized constraints of the
/// symbols some loaded value parsed (`symbol_name_to_symbol`), each bound
/// read as `symbol_name_to_range` did.
pub(super) fn surviving(
    program: &wire::ExportedProgram,
    symbols: &HashSet<String>,
) -> RangeConstraints {
    RangeConstraints(
        program
            .range_constraints
            .iter()
            .filter(|(k, _)| symbols.contains(k.as_str()))
            .map(|(k, v)| {
                (
                    k.clone(),
                    ValueRanges {
                        lower: int_to_sympy_int(&v.min_val, Bound::NegIntOo)
                            .unwrap_or(Bound::NegIntOo),
                        upper: int_to_sympy_int(&v.max_val, Bound::IntOo).unwrap_or(Bound::IntOo),
                    },
                )
            })
            .collect(),
    )
}
