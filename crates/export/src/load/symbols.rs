//! Mirrors serialize.py's `deserialize_sym_int` / `deserialize_sym_float` /
//! `deserialize_sym_bool` and `_parse_sym_expr`, with the ShapeEnv checks
//! they meet (`create_symintnode`, `compute_hint`, the symbols' ranges), and
//! "recompute unbacked bindings" at the end of `deserialize_graph`.

use std::collections::HashSet;
use torchspec_pyval::Raise;

use super::state::{Deserializer, R};
use crate::failure::LoadFailure;
use crate::ranges::Bound;
use crate::schema as wire;
use crate::sympify::{Parsed, Sympified};
use num_bigint::BigInt;
use torchspec_pyval::pyjson::PyJson;

/// A free symbol of a tensor size with no range: its name, and whether the
/// size is that bare unbacked symbol (its `u >= 0` check is a `KeyError`).
pub(super) type Unranged = (String, bool);

/// A hint of another type than int (`_dict_to_dataclass` kept it as it
/// came): its Python type, its text, and its value where it is a number.
type OddHint = (&'static str, String, Option<f64>);

/// `val.hint.as_int if val.hint else None` of a `deserialize_sym_int`
/// expression: the int hint, and a hint of another type, which
/// `create_symintnode` refuses.
fn sym_int_hint(e: &wire::SymExpr) -> R<(Option<BigInt>, Option<OddHint>)> {
    // A hint of another type than int: `create_symintnode` refuses it
    // (a bool counts as its int until then).
    let mut odd_hint = None;
    let hint = match &e.hint {
        None => None,
        Some(wire::SymExprHint::AsInt(i)) => Some(i.to_bigint()),
        Some(wire::SymExprHint::Raw(r)) if r.tag == "as_int" => match &r.value {
            PyJson::Null => None,
            PyJson::Bool(b) => {
                let text = if *b { "True" } else { "False" };
                odd_hint = Some(("bool", text.to_string(), Some(f64::from(u8::from(*b)))));
                Some(BigInt::from(u8::from(*b)))
            }
            PyJson::Float(f) => {
                let text = torchspec_pyval::repr::float_repr(*f);
                odd_hint = Some(("float", text, Some(*f)));
                None
            }
            PyJson::Str(s) => {
                odd_hint = Some(("str", s.clone(), None));
                None
            }
            other => {
                return Err(Raise::unsupported(format!(
                    "a `SymExpr.hint.as_int` that is a JSON {}",
                    other.type_name()
                )))
            }
        },
        Some(other) => {
            return Err(Raise::new(
                "AssertionError",
                format!("expected hint type 'as_int', got '{}'", other.tag()),
            ));
        }
    };
    Ok((hint, odd_hint))
}

/// `create_symintnode`: an Integer must equal its hint.
fn check_integer_hint(
    parsed: &Sympified,
    odd_hint: Option<&OddHint>,
    hint: Option<&BigInt>,
) -> R<()> {
    let Parsed::Int(n) = &parsed.value else {
        return Ok(());
    };
    let equal = match (odd_hint, hint) {
        (Some((_, _, number)), _) => {
            number.is_some_and(|f| n.to_string().parse::<f64>().is_ok_and(|m| m == f))
        }
        (None, Some(h)) => n == h,
        (None, None) => true,
    };
    if equal {
        return Ok(());
    }
    let shown = match (odd_hint, hint) {
        (Some((_, text, _)), _) => text.clone(),
        (None, h) => h.map(BigInt::to_string).unwrap_or_default(),
    };
    Err(Raise::new(
        "AssertionError",
        format!("int(sym)={n} != hint={shown}"),
    ))
}

/// A symbol an infix text binds as `_free_unbacked_symbols_with_path`
/// does: `u`, `c*u` or `u*c` with an integer `c`.
pub(super) fn infix_bound(e: &str) -> Option<String> {
    let text: String = e.chars().filter(|c| !c.is_whitespace()).collect();
    let name = |s: &str| {
        let mut cs = s.chars();
        cs.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let int = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match text.split_once('*') {
        None if name(&text) => Some(text),
        Some((a, b)) if int(a) && name(b) => Some(b.to_string()),
        Some((a, b)) if name(a) && int(b) => Some(a.to_string()),
        _ => None,
    }
}

/// `symbol_is_type(s, SymT.UNBACKED_INT)`: the name's prefix alone.
pub(super) fn unbacked_int(name: &str) -> bool {
    name.starts_with('u')
}

/// The ShapeEnv's evaluation of a `Lambda` (`sympify("lambda: 1")`).
pub(super) fn lambda_key_error() -> LoadFailure {
    Raise::new("KeyError", crate::sympify::LAMBDA_KEY_ERROR)
}

impl<'w> Deserializer<'w> {
    /// `_parse_sym_expr(val.expr_str)`: the value `_dict_to_dataclass`
    /// kept read as its text, but a bool (`sympify(True)` is sympy's
    /// `true`) or a list, which are not modelled.
    pub(super) fn parse_sym_expr_of(&mut self, e: &wire::SymExpr) -> R<crate::sympify::Sympified> {
        if let wire::Loose::Raw(v @ (PyJson::Bool(_) | PyJson::List(_))) = &e.expr_str {
            return Err(Raise::unsupported(format!(
                "a `SymExpr.expr_str` that is a JSON {}",
                v.type_name()
            )));
        }
        self.parse_sym_expr(&e.expr_text())
    }

    /// `_parse_sym_expr`: `sympy.sympify` of the text (its `SympifyError`,
    /// and `_process_sym_expr` reading `.is_Integer` of a Python constant),
    /// then the symbols the expression mentions.
    pub(super) fn parse_sym_expr(&mut self, expr: &str) -> R<crate::sympify::Sympified> {
        use crate::sympify::Parsed;
        let symbols = &self.symbols;
        let parsed = crate::sympify::sympify_in(expr, &|n| symbols.contains(n))
            .map_err(|(e, m)| Raise::new(e, m))?;
        if let Parsed::PyConst(ty) = parsed.value {
            return Err(Raise::new(
                "AttributeError",
                format!("'{ty}' object has no attribute 'is_Integer'"),
            ));
        }
        // `symbol_is_type(sym, (SymT.UNBACKED_INT, SymT.UNBACKED_FLOAT))`
        // of a symbol parsed for the first time.
        for n in parsed.free_symbols.iter().flatten() {
            let unbacked = unbacked_int(n) || n.starts_with("zuf");
            if unbacked && !self.symbols.contains(n) && !self.cx.unbacked.contains(n) {
                self.cx.unbacked.push(n.clone());
            }
        }
        self.symbols.extend(crate::srepr::subexpression_strs(expr));
        Ok(parsed)
    }

    /// `deserialize_sym_int`: an expression's hint must be an int; a bare
    /// symbol seen first with a hint gets it (`add_backed_var_to_val`),
    /// and `constrain_symbol_range` then checks it against the symbol's
    /// range (`_update_var_to_range`: `AssertionError: 4 not in VR[...]`).
    ///
    /// Returns what `int()` of the value will raise later
    /// (`torch.empty_strided` of a tensor's sizes: `oo` is not an int).
    ///
    /// For a tensor's size (`size`), also the free symbol whose missing
    /// range `torch.empty_strided` will trip on.
    pub(super) fn eval_sym_int(
        &mut self,
        s: &wire::SymInt,
        size: bool,
    ) -> R<(Option<LoadFailure>, Vec<Unranged>)> {
        let e = match s {
            wire::SymInt::AsExpr(e) => e,
            wire::SymInt::AsInt(_) => return Ok((None, Vec::new())),
            // `if type(val) is not int: raise AssertionError(...)`.
            wire::SymInt::Raw(r) => {
                return Err(Raise::new(
                    "AssertionError",
                    format!("expected int, got {}", r.value.type_name()),
                ))
            }
        };
        let (hint, odd_hint) = sym_int_hint(e)?;
        let known = self.symbols.len();
        let parsed = self.parse_sym_expr_of(e)?;
        // `constrain_symbol_range` is an `lru_cache` on (symbol, min, max):
        // only a symbol's first parse checks its hint against its range.
        let first_parse = self.symbols.len() > known;
        check_integer_hint(&parsed, odd_hint.as_ref(), hint.as_ref())?;
        if hint.is_none() && odd_hint.is_none() {
            self.compute_hint(&parsed, true)?;
        }
        let pending = match parsed.value {
            Parsed::NotInt(name) => Some(Raise::new(
                "TypeError",
                format!("Cannot convert {name} to int"),
            )),
            // `torch.empty_strided`'s check of a size evaluates it.
            Parsed::Lambda if size => Some(lambda_key_error()),
            _ => None,
        };
        let free = match size {
            true => self.unranged_size_symbol(&parsed, hint.is_some()),
            false => Vec::new(),
        };
        self.constrain_hinted_symbol(e, &parsed, hint, first_parse)?;
        // `SymNode(...)`: `type(hint) is pytype`.
        if let Some((ty, _, _)) = odd_hint {
            if !matches!(parsed.value, Parsed::Int(_)) {
                return Err(Raise::new(
                    "AssertionError",
                    format!(
                        "Cannot create SymNode of type <class 'int'> with incompatible hint of \
                         type <class '{ty}'>"
                    ),
                ));
            }
        }
        Ok((pending, free))
    }

    /// `torch.empty_strided`'s checks of a size (`_maybe_evaluate_static`
    /// where sympy cannot decide them) need the range of each free symbol
    /// `symbol_name_to_range` did not constrain: sympy decides `size >= 0`
    /// only for `positive=True` symbols, and `size == 1` only for
    /// `symbol + N`; a bare symbol's falls back on its hint (`hinted`).
    fn unranged_size_symbol(&self, parsed: &Sympified, hinted: bool) -> Vec<Unranged> {
        if parsed.positive_max {
            return Vec::new();
        }
        let free = parsed.free_symbols.iter().flatten();
        let mut free = free.filter(|n| !self.ranges.contains_key(n.as_str()));
        let mut unranged = free.find(|n| {
            let positive = parsed.positive.contains(n);
            !positive
                || (parsed.bare.as_ref() == Some(*n) && !hinted)
                || (parsed.bare.is_none() && !parsed.plus_positive_int)
        });
        // Other forms over positive symbols are not modelled.
        if let Some(n) = unranged {
            let modelled =
                !parsed.positive.contains(n) || parsed.bare.is_some() || parsed.plus_positive_int;
            if !modelled {
                unranged = None;
            }
        }
        // A bare unbacked symbol's `u >= 0` check stops at
        // `_should_skip_static_eval`'s `var_to_range[u]`: a `KeyError`.
        let bare_unbacked = |n: &String| parsed.bare.as_ref() == Some(n) && unbacked_int(n);
        unranged
            .map(|n| (n.clone(), bare_unbacked(n)))
            .into_iter()
            .collect()
    }

    /// `add_backed_var_to_val` of a bare symbol seen first with a hint,
    /// then `constrain_symbol_range`'s check of the hint against the
    /// symbol's range, which runs once per symbol (its `lru_cache`): on
    /// the symbol's `first_parse` only.
    fn constrain_hinted_symbol(
        &mut self,
        e: &wire::SymExpr,
        parsed: &Sympified,
        hint: Option<BigInt>,
        first_parse: bool,
    ) -> R<()> {
        let symbol = crate::srepr::bare_symbol(&e.expr_text()).or(parsed.bare.clone());
        let (Some(v), Some(name)) = (hint, symbol) else {
            return Ok(());
        };
        if !self.hinted.insert(name.clone()) || !first_parse {
            return Ok(());
        }
        let Some(vr) = self.ranges.get(name.as_str()) else {
            return Ok(());
        };
        let below = matches!(&vr.lower, Bound::Int(lo) if v < *lo);
        let above = matches!(&vr.upper, Bound::Int(hi) if v > *hi);
        if below || above {
            return Err(Raise::new(
                "AssertionError",
                // `AssertionError(f"{v} not in {r}")` (symbolic_shapes.py),
                // `r` a ValueRanges: `VR[lower, upper]`.
                format!(
                    "{v} not in {}",
                    format_args!("VR[{}, {}]", vr.lower, vr.upper)
                ),
            ));
        }
        Ok(())
    }

    /// `SymNode(expr, hint=None)`'s `compute_hint` (sym_node.py), run when
    /// `create_sym{int,float,bool}node` gets no hint: unless a free symbol
    /// is unbacked (`has_free_unbacked_symbols`), `_maybe_evaluate_static(
    /// expr, compute_hint=True)` substitutes the backed hints, and
    /// `_maybe_evaluate_static_worker` asserts a range for each symbol
    /// left (`sorted(key=str)`); a constant comes back as it is and an
    /// int node's `int(hint)` refuses `oo`, `nan` and `zoo`.
    pub(super) fn compute_hint(&self, parsed: &crate::sympify::Sympified, int: bool) -> R<()> {
        use crate::sympify::Parsed;
        match parsed.value {
            Parsed::NotInt(name) if int => {
                return Err(Raise::new(
                    "TypeError",
                    format!("Cannot convert {name} to int"),
                ))
            }
            Parsed::Lambda => return Err(lambda_key_error()),
            Parsed::Other => {}
            _ => return Ok(()),
        }
        let Some(free) = &parsed.free_symbols else {
            return Ok(());
        };
        // `symbol_is_type(s, (SymT.UNBACKED_INT, SymT.UNBACKED_FLOAT))`.
        let unbacked = |n: &String| {
            let lower = n.to_lowercase();
            lower.starts_with('u') || lower.starts_with("zuf")
        };
        // (A keyword among the names: not an expression this reads.)
        if free
            .iter()
            .any(|n| unbacked(n) || torchspec_pyval::is_keyword(n))
        {
            return Ok(());
        }
        let unranged = free
            .iter()
            .find(|n| !self.hinted.contains(*n) && !self.ranges.contains_key(n.as_str()));
        match unranged {
            Some(k) => Err(Raise::new(
                "AssertionError",
                format!("vr must not be None for symbol {k}"),
            )),
            None => Ok(()),
        }
    }

    /// "recompute unbacked bindings": each node's `val` binds the unbacked
    /// symbols it holds as a bare size, stride or SymInt, or as `c*u`
    /// (`_free_unbacked_symbols_with_path`); one left is an
    /// `AssertionError` (a set of several prints in hash order: not
    /// modelled).
    pub(super) fn unbound_unbacked(&mut self) -> R<()> {
        if self.cx.unbacked.is_empty() {
            return Ok(());
        }
        let bound_by = |e: &str| match crate::srepr::linear_form(e) {
            Some((_, s, b)) if b == BigInt::from(0) => Some(s),
            _ => crate::srepr::bare_symbol(e).or_else(|| infix_bound(e)),
        };
        let mut bound = HashSet::new();
        for (_, n) in self.cx.graph.nodes() {
            let Some(name) = n.meta.val.as_deref() else {
                continue;
            };
            let mut exprs: Vec<std::borrow::Cow<str>> = Vec::new();
            if let Some(t) = self.tensor_values.get(name) {
                for s in t.sizes.items().iter().chain(t.strides.items()) {
                    if let wire::SymInt::AsExpr(e) = s {
                        exprs.push(e.expr_text());
                    }
                }
            } else if let Some(wire::SymInt::AsExpr(e)) = self.sym_int_values.get(name).copied() {
                exprs.push(e.expr_text());
            }
            bound.extend(exprs.iter().filter_map(|e| bound_by(e)));
        }
        let left: Vec<&String> = self
            .cx
            .unbacked
            .iter()
            .filter(|u| !bound.contains(*u) || self.replaced.contains(*u))
            .collect();
        match left.as_slice() {
            [] => Ok(()),
            [u] => Err(Raise::new(
                "AssertionError",
                format!("expected no unbacked symbols, got 1: {{{u}}}"),
            )),
            _ => Err(Raise::unsupported(
                "several unbacked symbols no node binds (a set printed in hash order)",
            )),
        }
    }
}
