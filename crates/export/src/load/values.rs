//! Mirrors serialize.py's value metadata: `serialized_name_to_meta` and
//! `deserialize_tensor_meta` (`torch.empty_strided`'s checks),
//! `deserialize_device`, and the `_SERIALIZE_TO_TORCH_*` enum tables.

use super::raw::{field_not_set, iterated, key_error};
use super::state::{Deserializer, R};
use crate::failure::LoadFailure;
use crate::schema as wire;
use torchspec_pyval::pyjson::PyJson;
use torchspec_pyval::Raise;

/// `_SERIALIZE_TO_TORCH_DTYPE`.
pub fn dtype_name(v: i64) -> Option<&'static str> {
    Some(match v {
        1 => "torch.uint8",
        2 => "torch.int8",
        3 => "torch.int16",
        4 => "torch.int32",
        5 => "torch.int64",
        6 => "torch.float16",
        7 => "torch.float32",
        8 => "torch.float64",
        9 => "torch.complex32",
        10 => "torch.complex64",
        11 => "torch.complex128",
        12 => "torch.bool",
        13 => "torch.bfloat16",
        28 => "torch.uint16",
        29 => "torch.float8_e4m3fn",
        30 => "torch.float8_e5m2",
        31 => "torch.float8_e4m3fnuz",
        32 => "torch.float8_e5m2fnuz",
        33 => "torch.float8_e8m0fnu",
        34 => "torch.uint32",
        35 => "torch.uint64",
        _ => return None,
    })
}

/// `dtype.is_floating_point or dtype.is_complex`.
pub(super) fn is_floating_or_complex(dtype: &str) -> bool {
    matches!(
        dtype,
        "torch.float16"
            | "torch.float32"
            | "torch.float64"
            | "torch.bfloat16"
            | "torch.complex32"
            | "torch.complex64"
            | "torch.complex128"
            | "torch.float8_e4m3fn"
            | "torch.float8_e5m2"
            | "torch.float8_e4m3fnuz"
            | "torch.float8_e5m2fnuz"
            | "torch.float8_e8m0fnu"
    )
}

/// `_SERIALIZE_TO_TORCH_LAYOUT`.
pub(super) fn layout_name(v: i64) -> Option<&'static str> {
    Some(match v {
        1 => "torch.sparse_coo",
        2 => "torch.sparse_csr",
        3 => "torch.sparse_csc",
        4 => "torch.sparse_bsr",
        5 => "torch.sparse_bsc",
        6 => "torch._mkldnn",
        7 => "torch.strided",
        _ => return None,
    })
}

/// `_SERIALIZE_TO_TORCH_MEMORY_FORMAT`.
pub(super) fn memory_format_name(v: i64) -> Option<&'static str> {
    Some(match v {
        1 => "torch.contiguous_format",
        2 => "torch.channels_last",
        3 => "torch.channels_last_3d",
        4 => "torch.preserve_format",
        _ => return None,
    })
}

/// The device types `c10::DeviceType` parses, in the order its message
/// lists them.
pub(super) const DEVICE_TYPES: &[&str] = &[
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
];

/// `deserialize_device(d)`: `torch.device(type=d.type)` or, with an index,
/// `torch.device(type=d.type, index=d.index)`, with the argument parser's
/// and `c10::Device`'s refusals in their order; the device as FX prints it.
pub(super) fn device_text(d: &wire::Device) -> R<String> {
    use torchspec_pyval::pyjson::PyJson;
    let index = match &d.index {
        wire::Loose::Typed(i) => i.as_ref().map(|i| PyJson::Int(i.clone())),
        wire::Loose::Raw(PyJson::Null) => None,
        wire::Loose::Raw(v) => Some(v.clone()),
    };
    let ty = match (&d.r#type, &index) {
        (wire::Loose::Typed(t), _) => t.as_str(),
        (wire::Loose::Raw(PyJson::Str(t)), _) => t.as_str(),
        (wire::Loose::Raw(v), None) => {
            return Err(Raise::new(
                "TypeError",
                format!(
                    "device() received an invalid combination of arguments - got (type={}, ), \
                     but expected one of:\n * (torch.device device)\n      didn't match because \
                     some of the keywords were incorrect: type\n * (str type, int index = -1)\n",
                    v.type_name()
                ),
            ))
        }
        (wire::Loose::Raw(v), Some(_)) => {
            return Err(Raise::new(
                "TypeError",
                format!(
                    "device(): argument 'type' must be str, not {}",
                    v.type_name()
                ),
            ))
        }
    };
    let index = match index {
        None => None,
        Some(PyJson::Int(i)) => Some(i),
        Some(v) => {
            return Err(Raise::new(
                "TypeError",
                format!(
                    "device(): argument 'index' must be int, not {}",
                    v.type_name()
                ),
            ))
        }
    };
    let runtime = |m: String| Raise::new("RuntimeError", m);
    if ty.is_empty() {
        return Err(runtime("Device string must not be empty".into()));
    }
    let (name, in_string) = match ty.split_once(':') {
        Some((n, i)) => (n, Some(i)),
        None => (ty, None),
    };
    let well_formed = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
        && in_string.is_none_or(|i| {
            !i.is_empty()
                && i.chars().all(|c| c.is_ascii_digit())
                && (i == "0" || !i.starts_with('0'))
        });
    if !well_formed {
        return Err(runtime(format!("Invalid device string: '{ty}'")));
    }
    if !DEVICE_TYPES.contains(&name) {
        return Err(runtime(format!(
            "Expected one of {} device type at start of device string: {ty}",
            DEVICE_TYPES.join(", ")
        )));
    }
    if in_string.is_some() {
        return Err(runtime(format!(
            "type (string) must not include an index because index was passed explicitly: {ty}"
        )));
    }
    let Some(index) = index else {
        return Ok(ty.to_string());
    };
    match index.to_i64() {
        None => Err(Raise::new(
            "ValueError",
            "Overflow when unpacking long long",
        )),
        Some(i) if i < 0 => Err(runtime("Device index must not be negative".into())),
        // `DeviceIndex` is an `int8_t`: a larger index keeps its low byte,
        // and -1 is no index (`torch.device("cpu", 255)` is `cpu`,
        // `("cpu", 128)` is `cpu:-128`, which empty_strided accepts on CPU).
        Some(i) => match i as i8 {
            -1 => Ok(ty.to_string()),
            w if w >= 0 || name == "cpu" => Ok(format!("{ty}:{w}")),
            w => Err(Raise::unsupported(format!(
                "a {name} device index of {i} (`DeviceIndex` {w})"
            ))),
        },
    }
}

/// A size or stride that reaches `torch.empty_strided` as a Python int: an
/// `as_int`, or an expression sympy reads as an integer
/// (`create_symintnode` returns `int(sym)` for a `sympy.Integer`).
fn int_value(s: &wire::SymInt) -> Option<num_bigint::BigInt> {
    match s {
        wire::SymInt::AsInt(v) => Some(v.to_bigint()),
        wire::SymInt::AsExpr(e) => match crate::sympify::sympify(&e.expr_text()) {
            Ok(crate::sympify::Parsed::Int(n)) => Some(n),
            _ => None,
        },
        wire::SymInt::Raw(_) => None,
    }
}

/// `torch.empty_strided`'s argument parser: each size, then each stride,
/// unpacked as a C `long long` (`THPUtils_unpackLong`). The message is
/// what PyTorch prints without the C++ backtrace that follows "long long"
/// inside the quotes (goldens cut it: its addresses change run to run).
fn unpack_overflow(sizes: &[wire::SymInt], strides: &[wire::SymInt]) -> Option<LoadFailure> {
    use num_traits::ToPrimitive;
    for (arg, list) in [("size", sizes), ("stride", strides)] {
        let overflows = |s: &wire::SymInt| int_value(s).is_some_and(|n| n.to_i64().is_none());
        let Some(at) = list.iter().position(overflows) else {
            continue;
        };
        return Some(Raise::new(
            "TypeError",
            format!(
                "empty_strided(): argument '{arg}' failed to unpack the object at pos {} \
                 with error \"Overflow when unpacking long long\"",
                at + 1
            ),
        ));
    }
    None
}

/// `TensorImpl::compute_numel` of sizes that are all ints (already known
/// non-negative and within `int64`): `safe_multiplies_u64` overflows, or
/// the product passes `int64`'s max, unless a size is 0. Symbolic sizes
/// make a symbolic numel, which is not checked.
fn numel_overflows(sizes: &[wire::SymInt]) -> bool {
    use num_traits::ToPrimitive;
    let mut ints = Vec::with_capacity(sizes.len());
    for s in sizes {
        match int_value(s).and_then(|n| n.to_u64()) {
            Some(n) => ints.push(n),
            None => return false,
        }
    }
    if ints.contains(&0) {
        return false;
    }
    let product = ints.iter().try_fold(1u64, |acc, n| acc.checked_mul(*n));
    product.is_none_or(|p| p > i64::MAX as u64)
}

/// `torch.empty_strided(..., requires_grad=...)`: a bool, or None for False.
pub(super) fn requires_grad(v: &wire::load::Loose<bool>) -> R<bool> {
    match v {
        wire::load::Loose::Typed(b) => Ok(*b),
        wire::load::Loose::Raw(PyJson::Null) => Ok(false),
        wire::load::Loose::Raw(other) => Err(Raise::new(
            "TypeError",
            format!(
                "empty_strided(): argument 'requires_grad' must be bool, not {}",
                other.type_name()
            ),
        )),
    }
}

impl<'w> Deserializer<'w> {
    pub(super) fn index_values(&mut self, g: &'w wire::Graph) {
        self.tensor_values = g
            .tensor_values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        self.sym_int_values = g
            .sym_int_values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        self.sym_float_values = g
            .sym_float_values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        self.sym_bool_values = g
            .sym_bool_values
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        self.custom_obj_values = g
            .custom_obj_values
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
    }

    /// `serialized_name_to_meta[name]`: evaluating a value's metadata parses
    /// its symbolic sizes; a name with no metadata is a `KeyError`.
    pub(super) fn eval_meta(&mut self, name: &str) -> R<()> {
        if let Some(t) = self.tensor_values.get(name).copied() {
            return self.eval_tensor_meta(t);
        }
        if let Some(s) = self.sym_int_values.get(name).copied() {
            self.eval_sym_int(s, false)?;
            return Ok(());
        }
        if let Some(s) = self.sym_float_values.get(name).copied() {
            if let wire::SymFloat::AsExpr(e) = s {
                self.eval_sym_float(e)?;
            }
            return Ok(());
        }
        if let Some(s) = self.sym_bool_values.get(name).copied() {
            if let wire::SymBool::AsExpr(e) = s {
                let parsed = self.parse_sym_expr_of(e)?;
                self.compute_hint(&parsed, false)?;
            }
            return Ok(());
        }
        if self.custom_obj_values.contains(name) {
            return Ok(());
        }
        Err(key_error(name))
    }

    /// `deserialize_tensor_meta`: sizes, strides, then
    /// `_SERIALIZE_TO_TORCH_DTYPE[tensor_meta.dtype]`, then
    /// `torch.empty_strided(..., requires_grad=...)`.
    fn eval_tensor_meta(&mut self, t: &wire::TensorMeta) -> R<()> {
        let mut pending = None;
        let mut free = Vec::new();
        let mut free_at = None;
        let sizes = iterated(&t.sizes)?;
        for (i, s) in sizes.iter().enumerate() {
            let (p, f) = self.eval_sym_int(s, true)?;
            pending = pending.or(p);
            if !f.is_empty() && free_at.is_none() {
                free_at = Some(i);
            }
            free.extend(f);
        }
        let strides = iterated(&t.strides)?;
        for s in strides {
            let (p, f) = self.eval_sym_int(s, false)?;
            pending = pending.or(p);
            free.extend(f);
        }
        device_text(&t.device)?;
        // `check_size_nonnegative`, size by size: a size known negative
        // (an int, or an unbacked symbol whose range is below 0) before
        // the first one whose check meets a symbol with no range.
        let negative = self.negative_size(sizes)?;
        let negative = negative.filter(|(at, _)| free_at.is_none_or(|f| *at < f));
        if pending.is_none() {
            pending = negative.map(|(_, failure)| failure);
        }
        // `_maybe_evaluate_static_worker` of a size's check in
        // `torch.empty_strided`: a free symbol with no range.
        free.sort();
        if pending.is_none() {
            pending = free.first().map(|(k, key_error)| match key_error {
                true => Raise::new("KeyError", k.clone()),
                false => Raise::new(
                    "AssertionError",
                    format!("vr must not be None for symbol {k}"),
                ),
            });
        }
        let dtype = t
            .dtype
            .enum_key(|d| d.value())
            .and_then(|k| dtype_name(k).ok_or_else(|| Raise::new("KeyError", k.to_string())))?;
        if let Some(failure) = unpack_overflow(sizes, strides) {
            return Err(failure);
        }
        // `torch.empty_strided`: `int()` of each size and stride
        // (sympy's `Expr.__int__`), the static evaluation of the sizes.
        if let Some(failure) = pending {
            return Err(failure);
        }
        if sizes.len() != strides.len() {
            return Err(Raise::new(
                "RuntimeError",
                format!(
                    "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                    sizes.len(),
                    strides.len()
                ),
            ));
        }
        if numel_overflows(sizes) {
            return Err(Raise::new(
                "RuntimeError",
                "numel: integer multiplication overflow",
            ));
        }
        if requires_grad(&t.requires_grad)? && !is_floating_or_complex(dtype) {
            return Err(Raise::new(
                "RuntimeError",
                "Only Tensors of floating point and complex dtype can require gradients",
            ));
        }
        Ok(())
    }

    /// `check_size_nonnegative` (`expect_size`: `size >= 0`, decided
    /// statically or deferred as a runtime assert): the first size known
    /// negative and `RuntimeError: Trying to create tensor with negative
    /// dimension {size}: {sizes}`. A bare unbacked symbol's deferred
    /// assert refines a range `[lo < 0, 0]` to `0`, which replaces it.
    fn negative_size(&mut self, sizes: &[wire::SymInt]) -> R<Option<(usize, LoadFailure)>> {
        use crate::ranges::Bound;
        use num_bigint::BigInt;
        let zero = BigInt::from(0);
        let mut at = None;
        for (i, s) in sizes.iter().enumerate() {
            let negative = match s {
                wire::SymInt::AsInt(v) => v.to_bigint() < zero,
                wire::SymInt::AsExpr(e) => {
                    let text = e.expr_text();
                    match crate::sympify::sympify(&text) {
                        Ok(crate::sympify::Parsed::Int(n)) => n < zero,
                        _ => {
                            let name = crate::srepr::bare_symbol(&text);
                            let vr = name.as_deref().filter(|n| super::symbols::unbacked_int(n));
                            let vr = vr.and_then(|n| self.ranges.get(n).map(|vr| (n, vr)));
                            match vr {
                                Some((_, vr)) if matches!(&vr.upper, Bound::Int(hi) if *hi < zero) => {
                                    true
                                }
                                Some((n, vr)) => {
                                    let below = match &vr.lower {
                                        Bound::Int(lo) => *lo < zero,
                                        _ => true,
                                    };
                                    if below && matches!(&vr.upper, Bound::Int(hi) if *hi == zero) {
                                        self.replaced.insert(n.to_string());
                                    }
                                    false
                                }
                                // `a*u + b` over an unbacked `u`'s range.
                                None => self.linear_upper(&text).is_some_and(|hi| hi < zero),
                            }
                        }
                    }
                }
                wire::SymInt::Raw(_) => false,
            };
            if negative {
                at = Some(i);
                break;
            }
        }
        let Some(at) = at else {
            return Ok(None);
        };
        let mut shown = Vec::with_capacity(sizes.len());
        for s in sizes {
            shown.push(match s {
                wire::SymInt::AsInt(v) => v.to_bigint().to_string(),
                wire::SymInt::AsExpr(e) => {
                    let text = e.expr_text();
                    match crate::sympify::sympify(&text) {
                        Ok(crate::sympify::Parsed::Int(n)) => n.to_string(),
                        _ => match crate::srepr::subexpression_strs(&text).pop() {
                            Some(s) => s,
                            None => {
                                return Err(Raise::unsupported(format!(
                                    "the size `{text}` printed in a negative-dimension error"
                                )))
                            }
                        },
                    }
                }
                wire::SymInt::Raw(_) => return Ok(None),
            });
        }
        Ok(Some((
            at,
            Raise::new(
                "RuntimeError",
                format!(
                    "Trying to create tensor with negative dimension {}: [{}]",
                    shown[at],
                    shown.join(", ")
                ),
            ),
        )))
    }

    /// The largest value of `a*u + b` (an unbacked `u` with a range) over
    /// that range, when finite.
    fn linear_upper(&self, text: &str) -> Option<num_bigint::BigInt> {
        use crate::ranges::Bound;
        let (a, u, b) = crate::srepr::linear_form(text)?;
        if !super::symbols::unbacked_int(&u) {
            return None;
        }
        let vr = self.ranges.get(u.as_str())?;
        let end = if a > num_bigint::BigInt::from(0) {
            &vr.upper
        } else {
            &vr.lower
        };
        match end {
            Bound::Int(v) => Some(a * v + b),
            _ => None,
        }
    }

    /// `deserialize_sym_float` of an expression.
    fn eval_sym_float(&mut self, e: &wire::SymExpr) -> R<()> {
        // `hint = val.hint.as_float if val.hint else None`.
        match &e.hint {
            Some(wire::SymExprHint::AsFloat(_)) => {
                self.parse_sym_expr_of(e)?;
            }
            Some(wire::SymExprHint::Raw(r)) if r.tag == "as_float" => {
                let parsed = self.parse_sym_expr_of(e)?;
                match &r.value {
                    PyJson::Null => self.compute_hint(&parsed, false)?,
                    v => {
                        return Err(Raise::new(
                            "AssertionError",
                            format!(
                                "Cannot create SymNode of type <class 'float'> with \
                                 incompatible hint of type <class '{}'>",
                                v.type_name()
                            ),
                        ))
                    }
                }
            }
            Some(_) => return Err(field_not_set("as_float")),
            None => {
                let parsed = self.parse_sym_expr_of(e)?;
                self.compute_hint(&parsed, false)?;
            }
        }
        Ok(())
    }
}
