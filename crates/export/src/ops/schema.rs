//! What the loader and the verifier read from an operator's schema string
//! (`str(op._schema)`, as `ops::op_schema` and a registration keep it):
//! the arguments `GraphModuleDeserializer.deserialize_inputs` walks
//! (`schema_arg.name`, `.kwarg_only`, `.has_default_value()`), whether the
//! single return is a tensor (`deserialize_node`'s
//! `_is_single_tensor_return`) and `FunctionSchema.is_mutable` (the
//! verifier's `is_functional`).
//!
//! A small parser of the textual form torch/csrc/jit/frontend/function_schema_parser.cpp
//! reads: `ns::name.overload(ARG, ARG, *, ARG=DEFAULT) -> RETURNS`, an
//! argument `TYPE NAME[=DEFAULT]` whose type may carry an alias annotation
//! (`Tensor(a!)`, `Tensor(a!)[]`, `Tensor(a -> *)`), commas only at the top
//! level (not inside `[...]`, `(...)` or a quoted default).

/// One `schema.arguments` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaArg {
    /// `Argument.name`.
    pub name: String,
    /// The type as written (`Tensor(a!)`, `int[]?`).
    pub ty: String,
    /// `Argument.kwarg_only`: after the `*` marker.
    pub kwarg_only: bool,
    /// `Argument.has_default_value()`.
    pub has_default: bool,
}

/// The parts of a `FunctionSchema` the loader and verifier use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// `FunctionSchema.arguments`, in order.
    pub arguments: Vec<SchemaArg>,
    /// The return types as written, names dropped.
    pub returns: Vec<String>,
}

impl Schema {
    /// `FunctionSchema.is_mutable`: some argument's alias annotation is a
    /// write (`!`), the element's of a list (`Tensor(a!)[]`) included.
    pub fn is_mutable(&self) -> bool {
        self.arguments.iter().any(|a| alias_is_write(&a.ty))
    }

    /// `_is_single_tensor_return` in `deserialize_node`: one return whose
    /// `real_type` is `TensorType` (`Tensor`, `Tensor(a)`), not `Tensor?`
    /// or `Tensor[]`.
    pub fn is_single_tensor_return(&self) -> bool {
        match self.returns.as_slice() {
            [t] => strip_alias(t) == "Tensor",
            _ => false,
        }
    }
}

/// Whether a type's alias annotation (`(a!)`, `(a! -> b)`) is a write.
fn alias_is_write(ty: &str) -> bool {
    let mut depth = 0usize;
    let mut annotation = String::new();
    for c in ty.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth > 0 => annotation.push(c),
            _ => {}
        }
    }
    // Only `Tensor(...)` carries annotations in 2.15.0's schemas; a
    // container type (`Dict(str, Tensor)`) has none of `!`.
    annotation.contains('!')
}

/// `Tensor(a!)` → `Tensor`; `Tensor(a)[]` → `Tensor[]`.
fn strip_alias(ty: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in ty.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Splits `s` at the top-level occurrences of `sep` (outside brackets,
/// parentheses and quotes).
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ if c == sep && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The index of the `)` closing the `(` at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s[open..].char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `TYPE NAME` → (type, name): the name is the last top-level word.
fn type_and_name(decl: &str) -> (&str, &str) {
    let decl = decl.trim();
    let spaces = split_top(decl, ' ');
    if spaces.len() < 2 {
        return (decl, "");
    }
    let name = spaces[spaces.len() - 1];
    let ty = decl[..decl.len() - name.len()].trim_end();
    (ty, name)
}

/// Parses `str(op._schema)`; `None` for a text that is not a schema.
pub fn parse(schema: &str) -> Option<Schema> {
    let open = schema.find('(')?;
    let close = closing(schema, open)?;
    let inner = schema[open + 1..close].trim();
    let mut arguments = Vec::new();
    let mut kwarg_only = false;
    if !inner.is_empty() {
        for part in split_top(inner, ',') {
            let part = part.trim();
            if part == "*" {
                kwarg_only = true;
                continue;
            }
            if part == "..." {
                // `is_vararg`: not an argument.
                continue;
            }
            let pieces = split_top(part, '=');
            let (decl, has_default) = match pieces.as_slice() {
                [decl] => (*decl, false),
                [decl, ..] => (*decl, true),
                [] => return None,
            };
            let (ty, name) = type_and_name(decl);
            if name.is_empty() {
                return None;
            }
            arguments.push(SchemaArg {
                name: name.to_string(),
                ty: ty.to_string(),
                kwarg_only,
                has_default,
            });
        }
    }
    let rest = schema[close + 1..].trim();
    let rets = rest.strip_prefix("->")?.trim();
    let returns = if rets.starts_with('(') && closing(rets, 0) == Some(rets.len() - 1) {
        let inner = rets[1..rets.len() - 1].trim();
        if inner.is_empty() {
            Vec::new()
        } else {
            split_top(inner, ',')
                .into_iter()
                .map(|r| return_type(r).to_string())
                .collect()
        }
    } else if rets == "..." {
        // `is_varret`: no declared returns.
        Vec::new()
    } else {
        vec![return_type(rets).to_string()]
    };
    Some(Schema { arguments, returns })
}

/// A return `TYPE [NAME]` → its type.
fn return_type(r: &str) -> &str {
    let r = r.trim();
    let words = split_top(r, ' ');
    if words.len() >= 2 {
        type_and_name(r).0
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_returns() {
        let s = parse("aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)").unwrap();
        let names: Vec<_> = s.arguments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["self", "mat1", "mat2", "beta", "alpha", "out"]);
        assert!(s.arguments[3].kwarg_only && s.arguments[3].has_default);
        assert!(s.arguments[5].kwarg_only && !s.arguments[5].has_default);
        assert!(!s.arguments[0].kwarg_only);
        assert!(s.is_mutable());
        assert!(s.is_single_tensor_return());

        let s = parse("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=[0, 0], int[2] dilation=[1, 1], bool ceil_mode=False) -> (Tensor, Tensor)").unwrap();
        assert_eq!(s.arguments.len(), 6);
        assert_eq!(s.arguments[3].name, "padding");
        assert_eq!(s.returns, ["Tensor", "Tensor"]);
        assert!(!s.is_mutable() && !s.is_single_tensor_return());

        let s = parse("aten::_foreach_tanh_(Tensor(a!)[] self) -> ()").unwrap();
        assert!(s.is_mutable());
        assert!(s.returns.is_empty());

        let s = parse(
            "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
        )
        .unwrap();
        assert!(s.arguments[2].kwarg_only && !s.arguments[2].has_default);

        let s = parse(
            "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        )
        .unwrap();
        assert!(!s.is_mutable() && !s.is_single_tensor_return());

        let s = parse("aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)").unwrap();
        assert_eq!(s.returns.len(), 3);

        let s = parse("_quantized::linear(Tensor X, __torch__.torch.classes.quantized.LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y").unwrap();
        assert_eq!(s.arguments[1].name, "W_prepack");
        assert!(s.is_single_tensor_return());

        let s = parse("aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor").unwrap();
        assert!(s.arguments[2].has_default);
        assert_eq!(s.arguments[3].name, "value");
    }

    /// Every schema of the operator table parses. (Checked once against
    /// the live registry of torch 2.15.0, all 4460 overloads: the names,
    /// `kwarg_only`, `has_default_value()`, `is_mutable` and the single
    /// tensor return agree with `op._schema`'s.)
    #[test]
    fn every_table_schema_parses() {
        for (target, schema) in crate::ops::all_ops() {
            assert!(parse(schema).is_some(), "{target}: {schema}");
        }
    }
}
