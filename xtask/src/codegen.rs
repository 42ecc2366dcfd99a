//! Generates `generated.rs` from upstream's `torch/_export/serde/schema.yaml`
//! (`cargo xtask codegen`): one Rust type per schema type, with the
//! `from_pyjson` / `write_json` / `to_pyjson` walks of `serialize.py`.
//!
//! The yaml's field order is the dataclass field order of `schema.py`
//! (`update_schema.py` writes `dataclasses.fields` in order), which is the
//! order `_dataclass_to_dict` writes and `_dict_to_dataclass` reads.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};
use yaml_rust2::{Yaml, YamlLoader};

use crate::Error;

/// Fields `_dict_to_dataclass` does not type-check (`return data` for an
/// `int`, `str`, `bool` or enum, and element-wise for a list or dict): each
/// is a `Loose<T>`, the typed value when the JSON has the schema's type,
/// else the raw JSON Python keeps; the loader then mirrors what Python does
/// with it. Strict mode refuses the raw forms (rule `loose-field`).
const LOOSE: &[(&str, &str)] = &[
    // Stored on the program and never read by the loader.
    ("ExportedProgram", "opset_version"),
    ("ExportedProgram", "torch_version"),
    ("ExportedProgram", "guards_code"),
    // `version.major != SCHEMA_VERSION[0]`: Python `==` on what came in.
    ("SchemaVersion", "major"),
    ("SchemaVersion", "minor"),
    // `_int_to_sympy_int(v.min_val, -int_oo)`.
    ("RangeConstraint", "min_val"),
    ("RangeConstraint", "max_val"),
    // `_SERIALIZE_TO_TORCH_DTYPE[tensor_meta.dtype]`; `layout` is not read.
    ("TensorMeta", "dtype"),
    ("TensorMeta", "layout"),
    // `torch.empty_strided(..., requires_grad=tensor_meta.requires_grad)`.
    ("TensorMeta", "requires_grad"),
    // `tuple(self.deserialize_sym_int(val) for val in tensor_meta.sizes)`.
    ("TensorMeta", "sizes"),
    ("TensorMeta", "strides"),
    // `torch.device(type=d.type, index=d.index)`.
    ("Device", "type"),
    ("Device", "index"),
    // `deserialize_inputs` compares it with `ArgumentKind` members.
    ("NamedArgument", "kind"),
    // `deserialize_metadata`: `metadata.get(key)` and its truth value.
    ("Node", "metadata"),
    // `deserialize_graph_module`: `metadata.get("custom")`,
    // `treespec_namedtuple_fields.items()`.
    ("GraphModule", "metadata"),
    ("GraphModule", "treespec_namedtuple_fields"),
    // `deserialize_module_call_graph` keeps `entry.fqn` and a truthy
    // `forward_arg_names` as they are; `ep.module()` trips on them.
    ("ModuleCallEntry", "fqn"),
    ("ModuleCallSignature", "forward_arg_names"),
    // `sympy.sympify(expr_str)` reads an int, float, bool or None as it
    // reads its str().
    ("SymExpr", "expr_str"),
    // `treespec_loads(in_spec)`: `json.loads` of the value as it came.
    ("ModuleCallSignature", "in_spec"),
    ("ModuleCallSignature", "out_spec"),
    // `TokenArgument(name=i.token.arg.name)`: the signature keeps it as it
    // came; `str(sig)` prints it and `input_tokens` lists it.
    ("TokenArgument", "name"),
    // `InputSpec(persistent=i.buffer.persistent)`: only None is refused
    // there; `str(sig)` prints the value, the verifier asks `is True` /
    // `is False`.
    ("InputToBufferSpec", "persistent"),
    // `deserialize_inputs`: `{input.name: ...}`, a dict key the schema's
    // argument names are looked up in.
    ("NamedArgument", "name"),
    // Truth values.
    ("Node", "is_hop_single_tensor_return"),
    ("Graph", "is_single_tensor_return"),
];

fn is_loose(class: &str, field: &str) -> bool {
    LOOSE.contains(&(class, field))
}

/// List and dict fields `_dict_to_dataclass` passes through when the JSON
/// is neither (`return data`), and whose first use the loader mirrors
/// (`for x in v`, `len(v)`, `v.items()`). The field keeps its typed `Vec`
/// (empty then) and the struct's `raw` holds the value as it came, so code
/// that reads a loaded program never sees it.
const SHADOWED: &[(&str, &str)] = &[
    // `deserialize_graph`: `.items()` of each value table, then `for` over
    // the inputs, nodes and outputs.
    ("Graph", "inputs"),
    ("Graph", "nodes"),
    ("Graph", "outputs"),
    ("Graph", "tensor_values"),
    ("Graph", "sym_int_values"),
    ("Graph", "sym_float_values"),
    ("Graph", "sym_bool_values"),
    ("Graph", "custom_obj_values"),
    // `deserialize_node`: `for input in serialized_node.inputs`,
    // `len(serialized_node.outputs)`.
    ("Node", "inputs"),
    ("Node", "outputs"),
    // `deserialize_signature`: `for i in sig.input_specs` (then `i.type`),
    // likewise the output specs.
    ("GraphSignature", "input_specs"),
    ("GraphSignature", "output_specs"),
    // `deserialize_module_call_graph`: `for entry in module_call_graph`
    // (then `entry.fqn`), each signature's `for x in inputs` (`x.type`).
    ("GraphModule", "module_call_graph"),
    ("ModuleCallSignature", "inputs"),
    ("ModuleCallSignature", "outputs"),
    // `ExportedProgramDeserializer.deserialize`: `range_constraints.items()`.
    ("ExportedProgram", "range_constraints"),
    // `[load_verifier(v) for v in exported_program.verifiers]`.
    ("ExportedProgram", "verifiers"),
    // Strings `_dict_to_dataclass` passes through (`return data`), which
    // the deserializer uses as dict keys and names: `deserialize_operator`'s
    // `serialized_target.startswith(...)`, `create_node(..., name)`'s
    // `_name_regex.match(name)`, `serialized_name_to_node[arg.name]`. The
    // typed field is empty then and the loader mirrors each use.
    ("Node", "target"),
    ("Node", "name"),
    ("TensorArgument", "name"),
];

fn is_shadowed(class: &str, field: &str) -> bool {
    SHADOWED.contains(&(class, field))
}

fn has_shadowed(class: &str) -> bool {
    SHADOWED.iter().any(|(c, _)| *c == class)
}

/// Union payloads `_dict_to_dataclass` passes through unchecked
/// (`cls.create(as_int=0.0)`) and whose fate the loader mirrors: such a
/// union gets a `Raw(Box<RawPayload>)` variant (the tag and the raw JSON).
const RAW_PAYLOAD: &[(&str, &str)] = &[
    // `deserialize_input` returns `inp.as_int` / `inp.as_bool` /
    // `list(inp.as_ints)` as they are, looks an enum up by the raw key
    // (`_SERIALIZE_TO_TORCH_DTYPE[inp.as_scalar_type]`) and ignores `as_none`.
    ("Argument", "as_none"),
    ("Argument", "as_int"),
    ("Argument", "as_ints"),
    ("Argument", "as_bool"),
    ("Argument", "as_string"),
    ("Argument", "as_scalar_type"),
    ("Argument", "as_memory_format"),
    ("Argument", "as_layout"),
    // `for arg in value` only when the value is a non-empty list, else
    // `Unhandled argument`.
    ("Argument", "as_tensors"),
    // `deserialize_sym_int`: `if type(val) is not int: raise AssertionError`
    // (and a storage offset's is never read).
    ("SymInt", "as_int"),
    // `deserialize_constant_input`: `int(inp.as_int)`, `str(inp.as_string)`,
    // `bool(inp.as_bool)` of the value as it came.
    ("ConstantValue", "as_int"),
    ("ConstantValue", "as_string"),
    ("ConstantValue", "as_bool"),
    // `if inp.type == "as_none": return None`: the payload is not read.
    ("ConstantValue", "as_none"),
    // `serialized_name_to_node[arg.as_name]` of a name that is no str
    // (`KeyError`), and a SymBool's `as_bool` as it came (a str has no
    // `.meta` where `_assert_scalar` is handled).
    ("SymIntArgument", "as_name"),
    ("SymFloatArgument", "as_name"),
    ("SymBoolArgument", "as_name"),
    ("SymBoolArgument", "as_bool"),
    // `create_symintnode(sym, hint=hint)`: the hint's type is checked there.
    ("SymExprHint", "as_int"),
    ("SymExprHint", "as_float"),
    ("SymExprHint", "as_bool"),
];

/// Whether a union member of this type is kept behind an `Arc`, one per
/// distinct value of a load (`LoadCx::share_expr`): the symbolic
/// expressions, repeated in every size and stride that has them.
fn is_shared(ty: &Ty) -> bool {
    matches!(ty, Ty::Named(n) if n == "SymExpr")
}

/// Whether a `dict[str, str]` field keeps its values as `Arc<str>`, one per
/// distinct text of a load (`load_shared_str`): a node's metadata, whose
/// `stack_trace` and `nn_module_stack` repeat across the graph's nodes.
fn is_shared_text(class: &str, field: &str) -> bool {
    (class, field) == ("Node", "metadata")
}

/// [`load_fn`] of a dataclass field.
fn struct_load_fn(class: &str, f: &Field) -> String {
    if is_shared_text(class, &f.name) {
        return "|v, p, cx| load_dict(v, p, cx, load_shared_str)".into();
    }
    load_fn(&f.ty)
}

fn is_raw_payload(union: &str, tag: &str) -> bool {
    RAW_PAYLOAD.contains(&(union, tag))
}

fn has_raw_payload(union: &str) -> bool {
    RAW_PAYLOAD.iter().any(|(u, _)| *u == union)
}

/// The `RawTy` shape of a field type: what `_dict_to_dataclass` still
/// checks in a raw value (`typing.get_args` of the declared type). An
/// enum is a scalar; a dataclass or union (any other named type) is
/// `Opaque`.
fn raw_ty(ty: &Ty, enums: &BTreeSet<&str>) -> String {
    match ty {
        Ty::Opt(t) => format!("RawTy::Opt(&{})", raw_ty(t, enums)),
        Ty::List(t) => format!("RawTy::List(&{})", raw_ty(t, enums)),
        Ty::Dict(t) => format!("RawTy::Dict(&{})", raw_ty(t, enums)),
        Ty::Named(n) if !enums.contains(n.as_str()) => "RawTy::Opaque".into(),
        _ => "RawTy::Scalar".into(),
    }
}

/// The committed copy of upstream's schema.
pub const SCHEMA_YAML: &str = include_str!("../../crates/export/src/schema/schema.yaml");

/// A field type as schema.yaml spells it.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    Str,
    Int,
    Float,
    Bool,
    Opt(Box<Ty>),
    List(Box<Ty>),
    Dict(Box<Ty>),
    Named(String),
}

#[derive(Debug)]
struct Field {
    name: String,
    ty: Ty,
    default: Option<String>,
}

#[derive(Debug)]
enum Def {
    Struct(Vec<Field>),
    Union(Vec<Field>),
    Enum(Vec<(String, i64)>),
}

/// `sha256(text)` as lowercase hex.
pub fn sha256_hex(text: &[u8]) -> String {
    let digest = Sha256::digest(text);
    let mut s = String::with_capacity(64);
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn parse_ty(s: &str) -> Result<Ty, Error> {
    let s = s.trim();
    let inner = |prefix: &str| {
        s.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(']'))
            .map(str::trim)
    };
    Ok(match s {
        "str" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bool" => Ty::Bool,
        _ => {
            if let Some(t) = inner("Optional[") {
                Ty::Opt(Box::new(parse_ty(t)?))
            } else if let Some(t) = inner("List[") {
                Ty::List(Box::new(parse_ty(t)?))
            } else if let Some(t) = inner("Dict[") {
                let Some(v) = t.strip_prefix("str,") else {
                    return Err(Error::new(format!(
                        "schema type `{s}`: only `Dict[str, T]` is supported"
                    )));
                };
                Ty::Dict(Box::new(parse_ty(v)?))
            } else if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                Ty::Named(s.to_string())
            } else {
                return Err(Error::new(format!("schema type `{s}` is not supported")));
            }
        }
    })
}

fn yaml_str(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(if *b { "True" } else { "False" }.to_string()),
        Yaml::Null => Some("None".to_string()),
        _ => None,
    }
}

struct Schema {
    defs: Vec<(String, Def)>,
    version: (i64, i64),
    treespec_version: i64,
}

fn read_schema(yaml: &str) -> Result<Schema, Error> {
    let docs =
        YamlLoader::load_from_str(yaml).map_err(|e| Error::new(format!("schema.yaml: {e}")))?;
    let Some(Yaml::Hash(top)) = docs.first() else {
        return Err(Error::new("schema.yaml: expected a mapping at the top"));
    };
    let mut defs = Vec::new();
    let mut version = None;
    let mut treespec_version = None;
    for (k, v) in top {
        let name = k
            .as_str()
            .ok_or_else(|| Error::new("schema.yaml: a top-level key is not a string"))?;
        match name {
            "SCHEMA_VERSION" => {
                let parts: Vec<i64> = v
                    .as_vec()
                    .map(|l| l.iter().filter_map(Yaml::as_i64).collect())
                    .unwrap_or_default();
                let [major, minor] = parts[..] else {
                    return Err(Error::new(
                        "schema.yaml: `SCHEMA_VERSION` is not [major, minor]",
                    ));
                };
                version = Some((major, minor));
                continue;
            }
            "TREESPEC_VERSION" => {
                treespec_version = v.as_i64();
                continue;
            }
            _ => {}
        }
        let bad = |what: &str| Error::new(format!("schema.yaml: `{name}`: {what}"));
        let kind = v["kind"].as_str().ok_or_else(|| bad("no `kind`"))?;
        let Yaml::Hash(fields) = &v["fields"] else {
            return Err(bad("no `fields` mapping"));
        };
        let def = if kind == "enum" {
            let mut values = Vec::new();
            for (fk, fv) in fields {
                let fname = fk
                    .as_str()
                    .ok_or_else(|| bad("an enum name is not a string"))?;
                let value = fv
                    .as_i64()
                    .ok_or_else(|| bad("an enum value is not an int"))?;
                values.push((fname.to_string(), value));
            }
            Def::Enum(values)
        } else {
            let mut out = Vec::new();
            for (fk, fv) in fields {
                let fname = fk
                    .as_str()
                    .ok_or_else(|| bad("a field name is not a string"))?;
                let ty = fv["type"]
                    .as_str()
                    .ok_or_else(|| bad(&format!("field `{fname}` has no `type`")))?;
                let default = match &fv["default"] {
                    Yaml::BadValue => None,
                    d => Some(yaml_str(d).ok_or_else(|| bad("a default is not a scalar"))?),
                };
                out.push(Field {
                    name: fname.to_string(),
                    ty: parse_ty(ty)?,
                    default,
                });
            }
            match kind {
                "struct" => Def::Struct(out),
                "union" => Def::Union(out),
                _ => return Err(bad(&format!("unknown kind `{kind}`"))),
            }
        };
        defs.push((name.to_string(), def));
    }
    for (class, field) in LOOSE.iter().chain(SHADOWED) {
        // A class the schema does not have is not an error (a reduced
        // schema); a field it lacks is.
        let Some((_, def)) = defs.iter().find(|(n, _)| n == class) else {
            continue;
        };
        let found = matches!(def, Def::Struct(fs) if fs.iter().any(|f| f.name == *field));
        if !found {
            return Err(Error::new(format!(
                "schema.yaml: loose field `{class}.{field}` is not a struct field"
            )));
        }
    }
    for (union, tag) in RAW_PAYLOAD {
        let Some((_, def)) = defs.iter().find(|(n, _)| n == union) else {
            continue;
        };
        let found = matches!(def, Def::Union(fs) if fs.iter().any(|f| f.name == *tag));
        if !found {
            return Err(Error::new(format!(
                "schema.yaml: raw payload `{union}.{tag}` is not a union field"
            )));
        }
    }
    let known: BTreeSet<&str> = defs.iter().map(|(n, _)| n.as_str()).collect();
    for (name, def) in &defs {
        if let Def::Struct(fields) | Def::Union(fields) = def {
            for f in fields {
                for n in named(&f.ty) {
                    if !known.contains(n) {
                        return Err(Error::new(format!(
                            "schema.yaml: `{name}.{}` names unknown type `{n}`",
                            f.name
                        )));
                    }
                }
            }
        }
    }
    Ok(Schema {
        defs,
        version: version.ok_or_else(|| Error::new("schema.yaml: no `SCHEMA_VERSION`"))?,
        treespec_version: treespec_version
            .ok_or_else(|| Error::new("schema.yaml: no `TREESPEC_VERSION`"))?,
    })
}

fn named(ty: &Ty) -> Vec<&str> {
    match ty {
        Ty::Named(n) => vec![n.as_str()],
        Ty::Opt(t) | Ty::List(t) | Ty::Dict(t) => named(t),
        _ => vec![],
    }
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while",
    "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

fn camel(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            let first = c.next().expect("non-empty part");
            first.to_ascii_uppercase().to_string() + c.as_str()
        })
        .collect()
}

fn rust_ty(ty: &Ty) -> String {
    match ty {
        Ty::Str => "String".into(),
        Ty::Int => "PyInt".into(),
        Ty::Float => "f64".into(),
        Ty::Bool => "bool".into(),
        Ty::Opt(t) => format!("Option<{}>", rust_ty(t)),
        Ty::List(t) => format!("Vec<{}>", rust_ty(t)),
        Ty::Dict(t) => format!("Vec<(String, {})>", rust_ty(t)),
        Ty::Named(n) => n.clone(),
    }
}

/// A callable `Fn(Val<'a>, &mut JsonPath<'a>, &mut LoadCx) -> Result<T, LoadError>`.
fn load_fn(ty: &Ty) -> String {
    match ty {
        Ty::Str => "load_str".into(),
        Ty::Int => "load_int".into(),
        Ty::Float => "load_float".into(),
        Ty::Bool => "load_bool".into(),
        Ty::Opt(t) => format!("|v, p, cx| load_opt(v, p, cx, {})", load_fn(t)),
        Ty::List(t) => format!("|v, p, cx| load_list(v, p, cx, {})", load_fn(t)),
        Ty::Dict(t) => format!("|v, p, cx| load_dict(v, p, cx, {})", load_fn(t)),
        Ty::Named(n) => format!("{n}::from_pyjson"),
    }
}

/// An expression reading `v` as `ty`.
fn load_call(ty: &Ty, v: &str) -> String {
    match ty {
        Ty::Opt(t) => format!("load_opt({v}, path, cx, {})?", load_fn(t)),
        Ty::List(t) => format!("load_list({v}, path, cx, {})?", load_fn(t)),
        Ty::Dict(t) => format!("load_dict({v}, path, cx, {})?", load_fn(t)),
        _ => format!("{}({v}, path, cx)?", load_fn(ty)),
    }
}

/// A callable `Fn(&T, &mut String)`.
fn write_fn(ty: &Ty) -> String {
    match ty {
        Ty::Str => "write_str".into(),
        Ty::Int => "write_int".into(),
        Ty::Float => "write_float".into(),
        Ty::Bool => "write_bool".into(),
        Ty::Opt(t) => format!("|x, out| write_opt(x, out, {})", write_fn(t)),
        Ty::List(t) => format!("|x, out| write_list(x, out, {})", write_fn(t)),
        Ty::Dict(t) => format!("|x, out| write_dict(x, out, {})", write_fn(t)),
        Ty::Named(n) => format!("{n}::write_json"),
    }
}

/// A statement writing `x` (a reference) as `ty`.
fn write_call(ty: &Ty, x: &str) -> String {
    match ty {
        Ty::Opt(t) => format!("write_opt({x}, out, {});", write_fn(t)),
        Ty::List(t) => format!("write_list({x}, out, {});", write_fn(t)),
        Ty::Dict(t) => format!("write_dict({x}, out, {});", write_fn(t)),
        Ty::Named(_) => format!("{x}.write_json(out);"),
        _ => format!("{}({x}, out);", write_fn(ty)),
    }
}

/// A callable `Fn(&T, &mut String)` writing Python's `repr` of the value
/// `_dict_to_dataclass` builds.
fn repr_fn(ty: &Ty) -> String {
    match ty {
        Ty::Str => "repr_str".into(),
        Ty::Int => "repr_int".into(),
        Ty::Float => "repr_float".into(),
        Ty::Bool => "repr_bool".into(),
        Ty::Opt(t) => format!("|x, out| repr_opt(x, out, {})", repr_fn(t)),
        Ty::List(t) => format!("|x, out| repr_list(x, out, {})", repr_fn(t)),
        Ty::Dict(t) => format!("|x, out| repr_dict(x, out, {})", repr_fn(t)),
        Ty::Named(n) => format!("{n}::py_repr"),
    }
}

/// A statement writing `repr(x)` (`x` a reference) as `ty`.
fn repr_call(ty: &Ty, x: &str) -> String {
    match ty {
        Ty::Opt(t) => format!("repr_opt({x}, out, {});", repr_fn(t)),
        Ty::List(t) => format!("repr_list({x}, out, {});", repr_fn(t)),
        Ty::Dict(t) => format!("repr_dict({x}, out, {});", repr_fn(t)),
        Ty::Named(_) => format!("{x}.py_repr(out);"),
        _ => format!("{}({x}, out);", repr_fn(ty)),
    }
}

/// A callable `Fn(&T) -> PyJson`.
fn py_fn(ty: &Ty) -> String {
    match ty {
        Ty::Str => "str_py".into(),
        Ty::Int => "int_py".into(),
        Ty::Float => "float_py".into(),
        Ty::Bool => "bool_py".into(),
        Ty::Opt(t) => format!("|x| opt_py(x, {})", py_fn(t)),
        Ty::List(t) => format!("|x| list_py(x, {})", py_fn(t)),
        Ty::Dict(t) => format!("|x| dict_py(x, {})", py_fn(t)),
        Ty::Named(n) => format!("{n}::to_pyjson"),
    }
}

fn py_call(ty: &Ty, x: &str) -> String {
    match ty {
        Ty::Opt(t) => format!("opt_py({x}, {})", py_fn(t)),
        Ty::List(t) => format!("list_py({x}, {})", py_fn(t)),
        Ty::Dict(t) => format!("dict_py({x}, {})", py_fn(t)),
        Ty::Named(_) => format!("{x}.to_pyjson()"),
        _ => format!("{}({x})", py_fn(ty)),
    }
}

/// The Rust value of an upstream default (`str(value)` of the dataclass
/// default, read by the field's type).
fn default_expr(class: &str, f: &Field) -> Result<String, Error> {
    let d = f.default.as_deref().expect("a field with a default");
    let bad = || {
        Error::new(format!(
            "schema.yaml: `{class}.{}`: default `{d}` for type {:?} is not supported",
            f.name, f.ty
        ))
    };
    Ok(match (&f.ty, d) {
        (Ty::Opt(_), "None") => "None".into(),
        (Ty::List(_), "[]") | (Ty::Dict(_), "{}") => "Vec::new()".into(),
        (Ty::Bool, "False") => "false".into(),
        (Ty::Bool, "True") => "true".into(),
        (Ty::Str, s) => format!("{s:?}.to_owned()"),
        (Ty::Int, s) => format!("PyInt::Small({})", s.parse::<i64>().map_err(|_| bad())?),
        (Ty::Float, s) => format!("{:?}_f64", s.parse::<f64>().map_err(|_| bad())?),
        _ => return Err(bad()),
    })
}

/// Union variants whose payload leads back to the union are boxed, so the
/// enum stays small (`Argument::AsGraph`: Argument → Graph → Node → Argument).
fn boxed_variants(defs: &[(String, Def)]) -> BTreeSet<(String, String)> {
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, def) in defs {
        if let Def::Struct(fields) | Def::Union(fields) = def {
            edges
                .entry(name)
                .or_default()
                .extend(fields.iter().flat_map(|f| named(&f.ty)));
        }
    }
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n) {
                todo.extend(edges.get(n).into_iter().flatten().copied());
            }
        }
        false
    };
    let mut out = BTreeSet::new();
    for (name, def) in defs {
        if let Def::Union(fields) = def {
            for f in fields {
                if let Ty::Named(n) = &f.ty {
                    if reaches(n, name) {
                        out.insert((name.clone(), f.name.clone()));
                    }
                }
            }
        }
    }
    out
}

/// The text of `generated.rs` for `yaml`.
pub fn generate(yaml: &str) -> Result<String, Error> {
    let schema = read_schema(yaml)?;
    let boxed = boxed_variants(&schema.defs);
    let mut o = String::with_capacity(128 * 1024);
    let _ = writeln!(o, "// @generated by `cargo xtask codegen`");
    let _ = writeln!(o, "// schema.yaml sha256: {}", sha256_hex(yaml.as_bytes()));
    o.push_str(
        "// Do not edit: run `cargo xtask codegen`.\n\
         //! The wire types of torch/_export/serde/schema.yaml, one per schema type.\n\n\
         #![allow(non_camel_case_types, clippy::upper_case_acronyms)]\n\n\
         use super::load::*;\n\
         use torchspec_pyval::pyjson::{PyInt, PyJson};\n\
         use torchspec_pyval::pyjson::text::Val;\n\n",
    );
    let (major, minor) = schema.version;
    let _ = writeln!(
        o,
        "/// `SCHEMA_VERSION` of schema.py.\npub const SCHEMA_VERSION: (i64, i64) = ({major}, {minor});\n"
    );
    let _ = writeln!(
        o,
        "/// `TREESPEC_VERSION` of schema.py.\npub const TREESPEC_VERSION: i64 = {};",
        schema.treespec_version
    );
    let enums: BTreeSet<&str> = schema
        .defs
        .iter()
        .filter(|(_, d)| matches!(d, Def::Enum(_)))
        .map(|(n, _)| n.as_str())
        .collect();
    for (name, def) in &schema.defs {
        o.push('\n');
        match def {
            Def::Enum(values) => gen_enum(&mut o, name, values),
            Def::Struct(fields) => gen_struct(&mut o, name, fields, &enums)?,
            Def::Union(fields) => gen_union(&mut o, name, fields, &boxed, &enums),
        }
    }
    Ok(o)
}

/// The annotation schema.py gives a field (`List[TensorArgument]`).
fn py_ty(t: &Ty) -> String {
    match t {
        Ty::Str => "str".into(),
        Ty::Int => "int".into(),
        Ty::Float => "float".into(),
        Ty::Bool => "bool".into(),
        Ty::Opt(t) => format!("Optional[{}]", py_ty(t)),
        Ty::List(t) => format!("List[{}]", py_ty(t)),
        Ty::Dict(t) => format!("Dict[str, {}]", py_ty(t)),
        Ty::Named(n) => n.clone(),
    }
}

/// The doc line of a field or variant: `Class.field: annotation`, and
/// what a loose field keeps.
fn field_doc(class: &str, f: &Field, loose: bool) -> String {
    let keeps = if loose {
        " (the JSON as it came when `_dict_to_dataclass` passed another type through)"
    } else {
        ""
    };
    format!("    /// `{class}.{}: {}`{keeps}.\n", f.name, py_ty(&f.ty))
}

/// Doc lines of the methods every generated type has.
const LOAD_DOC: &str =
    "    /// `_dict_to_dataclass` of this class: the JSON read as torch.export.load reads it.\n";
const WRITE_DOC: &str =
    "    /// `_dataclass_to_dict` then `json.dumps`: the JSON torch.export.save writes.\n";
const TO_PYJSON_DOC: &str = "    /// `_dataclass_to_dict`: the value as a JSON document.\n";

const LOAD_SIG: &str = "pub fn from_pyjson<'a>(v: Val<'a>, path: &mut JsonPath<'a>, cx: &mut LoadCx) -> Result<Self, LoadError>";

fn gen_enum(o: &mut String, name: &str, values: &[(String, i64)]) {
    let _ = writeln!(o, "/// `class {name}(IntEnum)`; `Other` keeps a value upstream does not name (Python keeps the raw int).");
    let _ = writeln!(
        o,
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum {name} {{"
    );
    for (v, n) in values {
        let _ = writeln!(o, "    /// `{name}.{v}` ({n}).\n    {v},");
    }
    o.push_str("    /// A value schema.py does not name.\n    Other(i64),\n}\n\n");
    let _ = writeln!(o, "impl {name} {{");
    o.push_str("    /// Every member's name and value, in schema.py's order.\n");
    o.push_str("    pub const VALUES: &'static [(&'static str, i64)] = &[");
    for (i, (v, n)) in values.iter().enumerate() {
        let _ = write!(o, "{}(\"{v}\", {n})", if i > 0 { ", " } else { "" });
    }
    o.push_str("];\n\n    /// The member of `value` (`Other` for one schema.py does not name).\n    pub fn from_value(value: i64) -> Self {\n        match value {\n");
    for (v, n) in values {
        let _ = writeln!(o, "            {n} => Self::{v},");
    }
    o.push_str("            other => Self::Other(other),\n        }\n    }\n\n");
    o.push_str(
        "    /// The member's int value.\n    pub fn value(self) -> i64 {\n        match self {\n",
    );
    for (v, n) in values {
        let _ = writeln!(o, "            Self::{v} => {n},");
    }
    o.push_str("            Self::Other(other) => other,\n        }\n    }\n\n");
    o.push_str(LOAD_DOC);
    let _ = writeln!(
        o,
        "    {LOAD_SIG} {{\n        let known = |i| !matches!(Self::from_value(i), Self::Other(_));\n        load_enum_value(v, path, cx, \"{name}\", known).map(Self::from_value)\n    }}\n"
    );
    o.push_str(WRITE_DOC);
    o.push_str("    pub fn write_json(&self, out: &mut String) {\n        out.push_str(itoa::Buffer::new().format(self.value()));\n    }\n\n");
    o.push_str(TO_PYJSON_DOC);
    o.push_str("    pub fn to_pyjson(&self) -> PyJson {\n        PyJson::Int(PyInt::Small(self.value()))\n    }\n\n");
    o.push_str("    /// `repr` of the raw int `_dict_to_dataclass` keeps.\n");
    o.push_str("    pub fn py_repr(&self, out: &mut String) {\n        out.push_str(itoa::Buffer::new().format(self.value()));\n    }\n}\n");
}

fn gen_struct(
    o: &mut String,
    name: &str,
    fields: &[Field],
    enums: &BTreeSet<&str>,
) -> Result<(), Error> {
    let _ = writeln!(
        o,
        "/// `@dataclass class {name}`.\n#[derive(Clone, Debug, PartialEq)]\npub struct {name} {{"
    );
    for f in fields {
        let ty = if is_shared_text(name, &f.name) {
            "Vec<(String, std::sync::Arc<str>)>".to_string()
        } else {
            rust_ty(&f.ty)
        };
        let loose = is_loose(name, &f.name);
        let ty = if loose { format!("Loose<{ty}>") } else { ty };
        o.push_str(&field_doc(name, f, loose));
        let _ = writeln!(o, "    pub {}: {ty},", ident(&f.name));
    }
    if has_shadowed(name) {
        o.push_str("    /// Fields `_dict_to_dataclass` passed through as they came (a list or\n    /// dict field that is neither, a string field that is no string): the\n    /// field's name and JSON. The typed field is empty then.\n    pub raw: RawFields,\n");
    }
    o.push_str("}\n\n");
    let _ = writeln!(o, "impl {name} {{");
    if has_shadowed(name) {
        o.push_str("    /// The JSON of `field` as it came, when it did not have the schema's type.\n    pub fn raw_field(&self, field: &str) -> Option<&PyJson> {\n        self.raw.get(field)\n    }\n\n");
    }
    // Read: `_dict_to_dataclass`, fields in dataclass order, then `cls(**fields)`.
    o.push_str(LOAD_DOC);
    let _ = writeln!(o, "    {LOAD_SIG} {{");
    o.push_str("        const FIELDS: &[&str] = &[");
    for (i, f) in fields.iter().enumerate() {
        let _ = write!(o, "{}\"{}\"", if i > 0 { ", " } else { "" }, f.name);
    }
    o.push_str("];\n        const REQUIRED: &[&str] = &[");
    let required: Vec<&Field> = fields.iter().filter(|f| f.default.is_none()).collect();
    for (i, f) in required.iter().enumerate() {
        let _ = write!(o, "{}\"{}\"", if i > 0 { ", " } else { "" }, f.name);
    }
    o.push_str("];\n");
    let _ = writeln!(
        o,
        "        let d = load_object(v, path, cx, \"{name}\", FIELDS, REQUIRED)?;"
    );
    if has_shadowed(name) {
        o.push_str("        let mut raw = RawFields::default();\n");
    }
    for f in fields {
        let load = if is_loose(name, &f.name) || is_shadowed(name, &f.name) {
            format!(
                "|v, p, cx| load_loose(v, p, cx, &{}, {})",
                raw_ty(&f.ty, enums),
                struct_load_fn(name, f)
            )
        } else {
            struct_load_fn(name, f)
        };
        let _ = writeln!(
            o,
            "        let f_{} = load_field(&d, \"{}\", path, cx, {load})?;",
            f.name, f.name
        );
        if is_shadowed(name, &f.name) {
            let _ = writeln!(
                o,
                "        let f_{0} = f_{0}.map(|l| match l {{ Loose::Typed(t) => t, Loose::Raw(r) => {{ raw.push((\"{0}\", r)); Default::default() }} }});",
                f.name
            );
        }
    }
    if !required.is_empty() {
        o.push_str("        let missing = [");
        for (i, f) in required.iter().enumerate() {
            let _ = write!(
                o,
                "{}(f_{}.is_none(), \"{}\")",
                if i > 0 { ", " } else { "" },
                f.name,
                f.name
            );
        }
        o.push_str("];\n");
        let pats: Vec<String> = required
            .iter()
            .map(|f| format!("Some(f_{})", f.name))
            .collect();
        let vals: Vec<String> = required.iter().map(|f| format!("f_{}", f.name)).collect();
        if required.len() == 1 {
            let _ = writeln!(o, "        let {} = {} else {{", pats[0], vals[0]);
        } else {
            let _ = writeln!(
                o,
                "        let ({}) = ({}) else {{",
                pats.join(", "),
                vals.join(", ")
            );
        }
        let _ = writeln!(
            o,
            "            return Err(missing_fields(\"{name}\", &missing, path));\n        }};"
        );
    }
    o.push_str("        Ok(Self {\n");
    for f in fields {
        if f.default.is_none() {
            let _ = writeln!(o, "            {}: f_{},", ident(&f.name), f.name);
        } else if is_loose(name, &f.name) {
            let d = default_expr(name, f)?;
            let init = if matches!(d.as_str(), "None" | "false" | "true") {
                format!("f_{}.unwrap_or(Loose::Typed({d}))", f.name)
            } else {
                format!("f_{}.unwrap_or_else(|| Loose::Typed({d}))", f.name)
            };
            let _ = writeln!(o, "            {}: {init},", ident(&f.name));
        } else {
            let d = default_expr(name, f)?;
            let init = if d == "None" {
                format!("f_{}.unwrap_or(None)", f.name)
            } else if d == "Vec::new()" {
                format!("f_{}.unwrap_or_default()", f.name)
            } else if d == "false" || d == "true" {
                format!("f_{}.unwrap_or({d})", f.name)
            } else {
                format!("f_{}.unwrap_or_else(|| {d})", f.name)
            };
            let _ = writeln!(o, "            {}: {init},", ident(&f.name));
        }
    }
    if has_shadowed(name) {
        o.push_str("            raw,\n");
    }
    o.push_str("        })\n    }\n\n");
    // Write: `_dataclass_to_dict` then `json.dumps`.
    o.push_str(WRITE_DOC);
    o.push_str("    pub fn write_json(&self, out: &mut String) {\n");
    for (i, f) in fields.iter().enumerate() {
        let sep = if i == 0 { "{" } else { ", " };
        let _ = writeln!(o, "        out.push_str(\"{sep}\\\"{}\\\": \");", f.name);
        let place = format!("self.{}", ident(&f.name));
        if is_loose(name, &f.name) {
            let _ = writeln!(
                o,
                "        write_loose(&{place}, out, {});",
                write_fn(&f.ty)
            );
            continue;
        }
        if is_shadowed(name, &f.name) {
            let _ = writeln!(
                o,
                "        if let Some(r) = self.raw_field(\"{}\") {{ write_raw(r, out); }} else {{ {} }}",
                f.name,
                write_call(&f.ty, &format!("&{place}"))
            );
            continue;
        }
        let x = if matches!(f.ty, Ty::Named(_)) {
            place
        } else {
            format!("&{place}")
        };
        let _ = writeln!(o, "        {}", write_call(&f.ty, &x));
    }
    o.push_str("        out.push('}');\n    }\n\n");
    o.push_str(TO_PYJSON_DOC);
    o.push_str("    pub fn to_pyjson(&self) -> PyJson {\n        PyJson::Object(vec![\n");
    for f in fields {
        let place = format!("self.{}", ident(&f.name));
        let value = if is_loose(name, &f.name) {
            format!("loose_py(&{place}, {})", py_fn(&f.ty))
        } else if is_shadowed(name, &f.name) {
            format!(
                "self.raw_field(\"{}\").cloned().unwrap_or_else(|| {})",
                f.name,
                py_call(&f.ty, &format!("&{place}"))
            )
        } else {
            let x = if matches!(f.ty, Ty::Named(_)) {
                place
            } else {
                format!("&{place}")
            };
            py_call(&f.ty, &x)
        };
        let _ = writeln!(o, "            (\"{}\".to_owned(), {value}),", f.name);
    }
    o.push_str("        ])\n    }\n\n");
    let _ = writeln!(
        o,
        "    /// The dataclass `repr`: `{name}(field=repr(value), ...)`."
    );
    o.push_str("    pub fn py_repr(&self, out: &mut String) {\n");
    for (i, f) in fields.iter().enumerate() {
        let open = if i == 0 {
            format!("{name}(")
        } else {
            ", ".to_string()
        };
        let _ = writeln!(o, "        out.push_str(\"{open}{}=\");", f.name);
        let place = format!("self.{}", ident(&f.name));
        if is_loose(name, &f.name) {
            let _ = writeln!(o, "        repr_loose(&{place}, out, {});", repr_fn(&f.ty));
            continue;
        }
        if is_shadowed(name, &f.name) {
            let _ = writeln!(
                o,
                "        if let Some(r) = self.raw_field(\"{}\") {{ repr_raw(r, out); }} else {{ {} }}",
                f.name,
                repr_call(&f.ty, &format!("&{place}"))
            );
            continue;
        }
        let x = if matches!(f.ty, Ty::Named(_)) {
            place
        } else {
            format!("&{place}")
        };
        let _ = writeln!(o, "        {}", repr_call(&f.ty, &x));
    }
    if fields.is_empty() {
        let _ = writeln!(o, "        out.push_str(\"{name}(\");");
    }
    o.push_str("        out.push(')');\n    }\n}\n");
    Ok(())
}

fn gen_union(
    o: &mut String,
    name: &str,
    fields: &[Field],
    boxed: &BTreeSet<(String, String)>,
    enums: &BTreeSet<&str>,
) {
    let is_boxed = |f: &Field| boxed.contains(&(name.to_string(), f.name.clone()));
    let _ = writeln!(o, "/// `class {name}(_Union)`: one variant per field.\n#[derive(Clone, Debug, PartialEq)]\npub enum {name} {{");
    for f in fields {
        let ty = rust_ty(&f.ty);
        let ty = if is_boxed(f) {
            format!("Box<{ty}>")
        } else if is_shared(&f.ty) {
            format!("std::sync::Arc<{ty}>")
        } else {
            ty
        };
        o.push_str(&field_doc(name, f, false));
        let _ = writeln!(o, "    {}({ty}),", camel(&f.name));
    }
    let raw = has_raw_payload(name);
    if raw {
        o.push_str(
            "    /// A payload `_dict_to_dataclass` kept as it came.\n    Raw(Box<RawPayload>),\n",
        );
    }
    o.push_str("}\n\n");
    let _ = writeln!(o, "impl {name} {{");
    let _ = writeln!(o, "    /// The set field's name (`{name}.type` upstream).");
    o.push_str("    pub fn tag(&self) -> &'static str {\n        match self {\n");
    if raw {
        o.push_str("            Self::Raw(r) => r.tag,\n");
    }
    for f in fields {
        let _ = writeln!(
            o,
            "            Self::{}(_) => \"{}\",",
            camel(&f.name),
            f.name
        );
    }
    o.push_str("        }\n    }\n\n");
    o.push_str(LOAD_DOC);
    let _ = writeln!(o, "    {LOAD_SIG} {{");
    o.push_str("        let (tag, val) = load_union(v, path)?;\n        let r = match &*tag {\n");
    for f in fields {
        let call = load_call(&f.ty, "val");
        let call = if is_boxed(f) {
            format!("Box::new({call})")
        } else if is_shared(&f.ty) {
            format!("{{ let e = {call}; cx.share_expr(e) }}")
        } else {
            call
        };
        if is_raw_payload(name, &f.name) {
            let _ = writeln!(
                o,
                "            \"{tag}\" => match load_loose(val, path, cx, &{}, {})? {{\n                Loose::Typed(x) => Self::{}(x),\n                Loose::Raw(value) => Self::Raw(Box::new(RawPayload {{ tag: \"{tag}\", value }})),\n            }},",
                raw_ty(&f.ty, enums),
                load_fn(&f.ty),
                camel(&f.name),
                tag = f.name,
            );
            continue;
        }
        let _ = writeln!(
            o,
            "            \"{}\" => Self::{}({call}),",
            f.name,
            camel(&f.name)
        );
    }
    o.push_str("            _ => return Err(unknown_tag(&tag, path)),\n        };\n        path.pop();\n        Ok(r)\n    }\n\n");
    o.push_str(WRITE_DOC);
    o.push_str("    pub fn write_json(&self, out: &mut String) {\n        match self {\n");
    for f in fields {
        let _ = writeln!(
            o,
            "            Self::{}(x) => {{\n                out.push_str(\"{{\\\"{}\\\": \");\n                {}\n            }}",
            camel(&f.name),
            f.name,
            write_call(&f.ty, "x")
        );
    }
    if raw {
        o.push_str("            Self::Raw(r) => r.write_json(out),\n");
    }
    o.push_str("        }\n        out.push('}');\n    }\n\n");
    o.push_str(TO_PYJSON_DOC);
    o.push_str("    pub fn to_pyjson(&self) -> PyJson {\n        let value = match self {\n");
    if raw {
        o.push_str("            Self::Raw(r) => r.value.clone(),\n");
    }
    for f in fields {
        let _ = writeln!(
            o,
            "            Self::{}(x) => {},",
            camel(&f.name),
            py_call(&f.ty, "x")
        );
    }
    o.push_str(
        "        };\n        PyJson::Object(vec![(self.tag().to_owned(), value)])\n    }\n\n",
    );
    let _ = writeln!(
        o,
        "    /// `_Union.__repr__`: `{name}(tag=value)`, the value by `str()` (a str unquoted)."
    );
    o.push_str("    pub fn py_repr(&self, out: &mut String) {\n        match self {\n");
    if raw {
        let _ = writeln!(o, "            Self::Raw(r) => r.py_repr(\"{name}\", out),");
    }
    for f in fields {
        let value = match f.ty {
            Ty::Str => "out.push_str(x);".to_string(),
            _ => repr_call(&f.ty, "x"),
        };
        let _ = writeln!(
            o,
            "            Self::{}(x) => {{\n                out.push_str(\"{name}({}=\");\n                {value}\n            }}",
            camel(&f.name),
            f.name
        );
    }
    o.push_str("        }\n        out.push(')');\n    }\n}\n");
}
