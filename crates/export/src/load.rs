//! Mirrors torch/_export/serde/serialize.py `GraphModuleDeserializer` and
//! `ExportedProgramDeserializer.deserialize` up to the `ExportedProgram`
//! constructor: the FX graph `torch.export.load` rebuilds, with the
//! loader's node names (placeholders and synced values keep their
//! serialized names; getitem nodes for multi-output ops; `<op>_unused` for
//! ops returning None), the graph signature, the module call graph and the
//! range constraints that survive loading (only symbols some loaded value
//! mentions). The constructor's getitem elimination and verifiers run after
//! (`ExportedProgram::load_*`, `passes`, `verify`).
//!
//! An OpOverload's arguments are placed by its schema (`ops::schema`, from
//! the generated table or the registration). Where the reconstruction
//! needs what only PyTorch's op registry knows (a target that is not an
//! operator PyTorch ships or the process registered), the result is
//! [`LoadFailure::Unsupported`], never a guess.

use std::collections::{HashMap, HashSet};

pub use crate::failure::LoadFailure;
use crate::fx::{self, Arg, Graph, NodeId, Op};
// The model types under the paths they had when this module held them.
pub use crate::model::{LoadedGraphModule, ModuleCallEntry, ModuleCallSignature, SubGraph};
use crate::ops::{self, Resolved};
use crate::ranges::{Bound, RangeConstraints, ValueRanges};
use crate::registrations::Registrations;
use crate::schema as wire;
use crate::signature::{
    ArgumentSpec, Constant, ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec,
};
use num_bigint::BigInt;
use torchspec_pyval::pyjson::{PyInt, PyJson};

type R<T> = Result<T, LoadFailure>;

/// A call's `(args, kwargs)`.
type ArgsKwargs = (Vec<Arg>, Vec<(String, Arg)>);

/// `torch.ops.aten._assert_scalar.default` and friends are recognised by
/// their serialized target string.
const SYM_OPS: &[&str] = &[
    "math.trunc",
    "_operator.floordiv",
    "_operator.lt",
    "_operator.eq",
    "_operator.sub",
    "_operator.ne",
    "_operator.mul",
    "_operator.pow",
    "torch.sym_max",
    "_operator.add",
    "torch.sym_not",
    "torch.sym_float",
    "torch.sym_min",
    "_operator.truediv",
    "torch.sym_ite",
    "_operator.or_",
    "_operator.and_",
    "torch._sym_sqrt",
    "_operator.gt",
    "_operator.rshift",
    "torch.sym_int",
    "_operator.ge",
    "_operator.lshift",
    "_operator.le",
    "_operator.pos",
    "_operator.neg",
    "_operator.mod",
    "torch.ops.aten.item.default",
];

/// The higher-order operator `deserialize_node` refuses before any other.
const TRITON_FUNCTIONAL: &str = "torch.ops.higher_order.triton_kernel_wrapper_functional";

/// What `deserialize_node` says of a target `deserialize_operator` could
/// not resolve, after `We failed to resolve {target} to an operator. `.
const UNRESOLVED_HINT: &str = "If it's a custom op/custom triton op, this is usually because \
    the custom op is not registered when deserializing. Please import the custom op to \
    register it before deserializing. Otherwise, please file an issue on github.";

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
fn is_floating_or_complex(dtype: &str) -> bool {
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

/// `symbol_name_to_range` of `ExportedProgramDeserializer.deserialize`,
/// built before the graph: each `ValueRanges(_int_to_sympy_int(min,
/// -int_oo), _int_to_sympy_int(max, int_oo))` refuses `min > max`.
fn symbol_name_to_range(program: &wire::ExportedProgram) -> R<HashMap<&str, ValueRanges>> {
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
            return Err(LoadFailure::py(
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
fn unbacked_counters(program: &wire::ExportedProgram) -> R<()> {
    for (k, _) in &program.range_constraints {
        let digits = k.strip_prefix("zuf").or_else(|| k.strip_prefix('u'));
        if let Some(d) = digits.filter(|d| !python_int_literal(d)) {
            let shown: String = torchspec_pyval::repr::str_repr(d)
                .chars()
                .take(200)
                .collect();
            return Err(LoadFailure::py(
                "ValueError",
                format!("invalid literal for int() with base 10: {shown}"),
            ));
        }
    }
    Ok(())
}

/// Whether `int(s)` parses: surrounding whitespace, a sign, ASCII digits
/// with single underscores between them.
fn python_int_literal(s: &str) -> bool {
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
fn int_to_sympy_int(v: &wire::Loose<Option<PyInt>>, default: Bound) -> R<Bound> {
    let raw = match v {
        wire::Loose::Typed(None) => return Ok(default),
        wire::Loose::Typed(Some(i)) => return Ok(Bound::Int(i.to_bigint())),
        wire::Loose::Raw(raw) => raw,
    };
    Ok(match raw {
        PyJson::Float(f) if *f == f64::INFINITY => Bound::IntOo,
        PyJson::Float(f) if *f == f64::NEG_INFINITY => Bound::NegIntOo,
        PyJson::Float(f) if f.is_nan() => {
            return Err(LoadFailure::py(
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
                LoadFailure::py(
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
            return Err(LoadFailure::py(
                "TypeError",
                format!("Argument of Integer should be of numeric type, got {text}."),
            ));
        }
    })
}

/// CPython's `int(str)` in base 10: surrounding whitespace, a sign, digits
/// with single `_` between them.
fn py_int_str(s: &str) -> Option<BigInt> {
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

/// `TABLE[value]` for one of serialize.py's tables keyed by an `IntEnum`
/// (`_SERIALIZE_TO_TORCH_DTYPE[tensor_meta.dtype]`): the int a raw value
/// hashes and compares equal to (`6.0` and `True` find their int), else
/// the `KeyError` of the raw key or the `TypeError` of an unhashable one.
pub fn enum_key<T>(v: &wire::Loose<T>, value: impl Fn(&T) -> i64) -> R<i64> {
    match v {
        wire::Loose::Typed(t) => Ok(value(t)),
        wire::Loose::Raw(raw) => raw_enum_key(raw),
    }
}

/// [`enum_key`] of a raw value.
pub fn raw_enum_key(raw: &PyJson) -> R<i64> {
    match raw {
        PyJson::Bool(b) => return Ok(i64::from(*b)),
        PyJson::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => return Ok(*f as i64),
        PyJson::List(_) => {
            return Err(LoadFailure::py("TypeError", "unhashable type: 'list'"));
        }
        PyJson::Object(_) => {
            return Err(LoadFailure::py("TypeError", "unhashable type: 'dict'"));
        }
        _ => {}
    }
    let mut key = String::new();
    wire::load::repr_raw(raw, &mut key);
    Err(LoadFailure::py("KeyError", key))
}

/// `_SERIALIZE_TO_TORCH_LAYOUT`.
fn layout_name(v: i64) -> Option<&'static str> {
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
fn memory_format_name(v: i64) -> Option<&'static str> {
    Some(match v {
        1 => "torch.contiguous_format",
        2 => "torch.channels_last",
        3 => "torch.channels_last_3d",
        4 => "torch.preserve_format",
        _ => return None,
    })
}

/// How a call_function target prints (`_pretty_print_target`): things in
/// `_operator` print as `operator.x`; the rest by their qualified name,
/// which is the serialized string.
pub fn printed_target(serialized: &str) -> String {
    match serialized.strip_prefix("_operator.") {
        Some(rest) => format!("operator.{rest}"),
        None => serialized.to_string(),
    }
}

/// A free symbol of a tensor size with no range: its name, and whether the
/// size is that bare unbacked symbol (its `u >= 0` check is a `KeyError`).
type Unranged = (String, bool);

/// What `deserialize_node` makes of a resolved target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TargetKind {
    /// An `OpOverload` (or one of the loader's `_SYM_OPS`, which the
    /// caller tells apart by name).
    OpOverload,
    HigherOrder,
    /// Any other callable (`elif callable(target)`): one of the verifier's
    /// `_allowed_torch_functions` (vmap's `_add_batch_dim`, ...), or an
    /// `OpOverloadPacket`, which the verifier refuses.
    Callable,
}

/// A value `json.loads` made, as an FX argument (`inp.as_int` kept raw).
fn raw_arg(v: &PyJson) -> Arg {
    match v {
        PyJson::Null => Arg::None,
        PyJson::Bool(b) => Arg::Bool(*b),
        PyJson::Int(i) => int_arg(i),
        PyJson::Float(f) => Arg::Float(*f),
        PyJson::Str(s) => Arg::Str(s.clone()),
        PyJson::List(items) => Arg::List(items.iter().map(raw_arg).collect()),
        PyJson::Object(entries) => Arg::Dict(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), raw_arg(v)))
                .collect(),
        ),
    }
}

/// `deserialize_input` of a payload `_dict_to_dataclass` kept raw: an enum
/// table looked up by the raw key, `as_none` ignored, `list(value)` of a
/// list, any other value as it came.
fn raw_input(a: &wire::Argument, r: &wire::load::RawPayload) -> R<Arg> {
    let table: fn(i64) -> Option<&'static str> = match r.tag {
        "as_none" => return Ok(Arg::None),
        "as_scalar_type" => dtype_name,
        "as_memory_format" => memory_format_name,
        "as_layout" => layout_name,
        "as_ints" | "as_tensors" => {
            return match &r.value {
                PyJson::List(_) if r.tag == "as_ints" => Ok(raw_arg(&r.value)),
                // TensorArguments with a field of another type.
                PyJson::List(_) => Err(LoadFailure::unsupported(
                    "an `as_tensors` item whose fields are not of the schema's types",
                )),
                _ => {
                    let mut repr = String::new();
                    a.py_repr(&mut repr);
                    Err(LoadFailure::py(
                        "SerializeError",
                        format!("Unhandled argument {repr}"),
                    ))
                }
            };
        }
        _ => return Ok(raw_arg(&r.value)),
    };
    let key = raw_enum_key(&r.value)?;
    match table(key) {
        Some(name) => Ok(Arg::Torch(name.into())),
        None => {
            let mut repr = String::new();
            wire::load::repr_raw(&r.value, &mut repr);
            Err(LoadFailure::py("KeyError", repr))
        }
    }
}

fn int_arg(i: &PyInt) -> Arg {
    match i {
        PyInt::Small(v) => Arg::Int(*v),
        PyInt::Big(b) => Arg::BigInt(Box::new(b.clone())),
    }
}

fn key_error(name: &str) -> LoadFailure {
    LoadFailure::py("KeyError", torchspec_pyval::repr::str_repr(name))
}

/// The state of one `deserialize_graph` (saved and restored around
/// subgraphs, as `save_graph_module` does).
struct GraphCx {
    graph: Graph,
    name_to_node: HashMap<String, NodeId>,
    submodules: Vec<SubGraph>,
    /// The call_function nodes `deserialize_outputs` gave no `val` (a node
    /// serialized with no outputs).
    valueless: Vec<NodeId>,
    /// `self.unbacked_symbols`: the unbacked symbols first parsed in this
    /// graph, in order.
    unbacked: Vec<String>,
}

impl GraphCx {
    fn new() -> GraphCx {
        GraphCx {
            graph: Graph::new(),
            name_to_node: HashMap::new(),
            submodules: Vec::new(),
            valueless: Vec::new(),
            unbacked: Vec::new(),
        }
    }

    /// The graph as read: every node has its `val` but the valueless ones.
    fn finish(mut self) -> (Graph, Vec<SubGraph>) {
        let ids: Vec<NodeId> = self.graph.node_ids().to_vec();
        for id in ids {
            self.graph.node_mut(id).meta.has_val = !self.valueless.contains(&id);
        }
        (self.graph, self.submodules)
    }
}

struct Deserializer<'w> {
    /// Metadata of the values of the graph being read.
    tensor_values: HashMap<&'w str, &'w wire::TensorMeta>,
    sym_int_values: HashMap<&'w str, &'w wire::SymInt>,
    sym_float_values: HashMap<&'w str, &'w wire::SymFloat>,
    sym_bool_values: HashMap<&'w str, &'w wire::SymBool>,
    custom_obj_values: HashSet<&'w str>,
    /// `symbol_name_to_symbol`: every symbol name some loaded value parsed.
    symbols: HashSet<String>,
    /// `symbol_name_to_range`, by the serialized key.
    ranges: HashMap<&'w str, ValueRanges>,
    /// The symbols `shape_env.backed_var_to_val` holds a hint for.
    hinted: HashSet<String>,
    signature: ExportGraphSignature,
    cx: GraphCx,
    /// The custom ops of the loading process (node targets resolve against
    /// the built-in table and these).
    registrations: &'w Registrations,
}

/// Loads the graph module of a serialized program as `torch.export.load`
/// rebuilds it in a process with `registrations`, before the
/// `ExportedProgram` constructor's passes and verifiers.
pub fn load_graph_module<'w>(
    program: &'w wire::ExportedProgram,
    registrations: &'w Registrations,
) -> R<LoadedGraphModule> {
    let gm = &program.graph_module;
    let ranges = symbol_name_to_range(program)?;
    unbacked_counters(program)?;
    let signature = deserialize_signature(&gm.signature)?;
    let mut d = Deserializer {
        registrations,
        ranges,
        hinted: HashSet::new(),
        tensor_values: HashMap::new(),
        sym_int_values: HashMap::new(),
        sym_float_values: HashMap::new(),
        sym_bool_values: HashMap::new(),
        custom_obj_values: HashSet::new(),
        symbols: HashSet::new(),
        signature,
        cx: GraphCx::new(),
    };
    d.deserialize_graph(&gm.graph)?;
    let module_call_graph = deserialize_module_call_graph(gm, &registrations.pytree_registry())?;
    let (graph, submodules) = d.cx.finish();
    // `ep._create_graph_module_for_export(self.module, self.graph)`.
    check_codegen(&graph)?;
    graph_module_meta(gm)?;
    let range_constraints = RangeConstraints(
        program
            .range_constraints
            .iter()
            .filter(|(k, _)| d.symbols.contains(k.as_str()))
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
    );
    Ok(LoadedGraphModule {
        graph,
        submodules,
        signature: d.signature,
        module_call_graph,
        range_constraints,
    })
}

/// `deserialize_module_call_graph`: `for entry in module_call_graph`, each
/// entry's `fqn`, then its signature's inputs and outputs.
fn deserialize_module_call_graph(
    gm: &wire::GraphModule,
    registry: &crate::pytree::Registry,
) -> R<Vec<ModuleCallEntry>> {
    raw_list_use(gm.raw_field("module_call_graph"), Use::Iter("fqn"))?;
    let mut entries = Vec::with_capacity(gm.module_call_graph.len());
    for e in &gm.module_call_graph {
        let signature = match &e.signature {
            Some(s) => Some(deserialize_module_call_signature(s, registry)?),
            None => None,
        };
        entries.push(ModuleCallEntry {
            fqn: e.fqn.clone(),
            signature,
        });
    }
    Ok(entries)
}

/// `deserialize_module_call_signature`: the argument specs of `inputs`,
/// then of `outputs` (`x.type` of each), then `treespec_loads` of the in
/// and out specs.
fn deserialize_module_call_signature(
    s: &wire::ModuleCallSignature,
    registry: &crate::pytree::Registry,
) -> R<ModuleCallSignature> {
    let specs = |field: &str, args: &[wire::Argument]| {
        raw_list_use(s.raw_field(field), Use::Iter("type"))?;
        args.iter().map(deserialize_argument_spec).collect::<R<_>>()
    };
    let inputs = specs("inputs", &s.inputs)?;
    let outputs = specs("outputs", &s.outputs)?;
    let in_spec = treespec_text(&s.in_spec)?;
    let out_spec = treespec_text(&s.out_spec)?;
    for spec in [in_spec, out_spec] {
        crate::pytree::treespec_loads_cause(spec, registry).map_err(|e| match e {
            torchspec_pyval::Raise::Exception(e) => LoadFailure::py(&e.type_name, e.message),
            torchspec_pyval::Raise::Unsupported(w) => LoadFailure::unsupported(w),
        })?;
    }
    Ok(ModuleCallSignature {
        inputs,
        outputs,
        in_spec: in_spec.to_string(),
        out_spec: out_spec.to_string(),
        forward_arg_names: match &s.forward_arg_names {
            wire::Loose::Typed(names) => names
                .clone()
                .filter(|n| !n.is_empty())
                .map(wire::Loose::Typed),
            wire::Loose::Raw(v) => truthy(v).then(|| wire::Loose::Raw(v.clone())),
        },
    })
}

/// The text `treespec_loads` passes to `json.loads`: a spec kept as it
/// came is never a str, so `json.loads` raises.
fn treespec_text(spec: &wire::Loose<String>) -> R<&str> {
    match spec {
        wire::Loose::Typed(text) => Ok(text),
        wire::Loose::Raw(v) => Err(json_loads(v)
            .err()
            .unwrap_or_else(|| LoadFailure::unsupported("a treespec kept as it came"))),
    }
}

/// The end of `deserialize_graph_module`: `metadata.get("custom")` and
/// `json.loads` of it when truthy, then `treespec_namedtuple_fields.items()`
/// (each value's `field_names`).
fn graph_module_meta(gm: &wire::GraphModule) -> R<()> {
    use torchspec_pyval::pyjson::PyJson;
    match &gm.metadata {
        wire::Loose::Typed(m) => {
            if let Some(text) = meta_get(m, "custom").filter(|t| !t.is_empty()) {
                json_loads(&PyJson::Str(text.to_string()))?;
            }
        }
        wire::Loose::Raw(PyJson::Object(entries)) => {
            let custom = entries.iter().rev().find(|(k, _)| k == "custom");
            if let Some((_, v)) = custom.filter(|(_, v)| truthy(v)) {
                json_loads(v)?;
            }
        }
        wire::Loose::Raw(v) => return Err(no_attribute(v, "get")),
    }
    match &gm.treespec_namedtuple_fields {
        wire::Loose::Typed(_) => Ok(()),
        wire::Loose::Raw(PyJson::Object(_)) => Err(LoadFailure::unsupported(
            "a treespec_namedtuple_fields value that is not a NamedTupleDef",
        )),
        wire::Loose::Raw(v) => Err(no_attribute(v, "items")),
    }
}

/// `for val in v` over a list field `_dict_to_dataclass` passed through:
/// the items, or what Python raises iterating the raw value (`""` is empty;
/// a longer str yields one-character strs, which have no `.value`).
fn iterated<T>(v: &wire::Loose<Vec<T>>) -> R<&[T]> {
    match v {
        wire::Loose::Typed(items) => Ok(items),
        wire::Loose::Raw(raw) => raw_list_use(Some(raw), Use::Iter("value")).map(|()| &[][..]),
    }
}

/// The device types `c10::DeviceType` parses, in the order its message
/// lists them.
const DEVICE_TYPES: &[&str] = &[
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
fn device_text(d: &wire::Device) -> R<String> {
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
            return Err(LoadFailure::py(
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
            return Err(LoadFailure::py(
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
            return Err(LoadFailure::py(
                "TypeError",
                format!(
                    "device(): argument 'index' must be int, not {}",
                    v.type_name()
                ),
            ))
        }
    };
    let runtime = |m: String| LoadFailure::py("RuntimeError", m);
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
        None => Err(LoadFailure::py(
            "ValueError",
            "Overflow when unpacking long long",
        )),
        Some(i) if i < 0 => Err(runtime("Device index must not be negative".into())),
        // `DeviceIndex` is narrower than the int: larger indices wrap.
        Some(i) if i > 127 => Err(LoadFailure::unsupported(format!("a device index of {i}"))),
        Some(i) => Ok(format!("{ty}:{i}")),
    }
}

/// A symbol an infix text binds as `_free_unbacked_symbols_with_path`
/// does: `u`, `c*u` or `u*c` with an integer `c`.
fn infix_bound(e: &str) -> Option<String> {
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
fn unbacked_int(name: &str) -> bool {
    name.starts_with('u')
}

/// How the deserializer first uses a list field.
#[derive(Clone, Copy)]
enum Use {
    /// `for x in v`, then `x.ATTR`.
    Iter(&'static str),
    /// `len(v)`.
    Len,
    /// `v[0].ATTR`.
    Index(&'static str),
}

/// The first use of a list field `_dict_to_dataclass` passed through as
/// it came (`raw`; `None`: it was a list): Python's `TypeError` on a value
/// it cannot iterate or measure, or on a non-empty str the
/// `AttributeError` of its first character (`""` is an empty list).
fn raw_list_use(raw: Option<&torchspec_pyval::pyjson::PyJson>, how: Use) -> R<()> {
    use torchspec_pyval::pyjson::PyJson;
    let Some(v) = raw else {
        return Ok(());
    };
    match (v, how) {
        (PyJson::Str(s), Use::Index(_)) if s.is_empty() => {
            Err(LoadFailure::py("IndexError", "string index out of range"))
        }
        (PyJson::Str(_), Use::Index(attr)) => Err(LoadFailure::py(
            "AttributeError",
            format!("'str' object has no attribute '{attr}'"),
        )),
        (PyJson::Str(s), _) if s.is_empty() => Ok(()),
        (PyJson::Str(_), Use::Iter(attr)) => Err(LoadFailure::py(
            "AttributeError",
            format!("'str' object has no attribute '{attr}'"),
        )),
        (PyJson::Str(_) | PyJson::List(_) | PyJson::Object(_), _) => Err(LoadFailure::unsupported(
            format!("a {} where the schema has a list", v.type_name()),
        )),
        (_, Use::Iter(_)) => Err(LoadFailure::py(
            "TypeError",
            format!("'{}' object is not iterable", v.type_name()),
        )),
        (_, Use::Len) => Err(LoadFailure::py(
            "TypeError",
            format!("object of type '{}' has no len()", v.type_name()),
        )),
        (_, Use::Index(_)) => Err(LoadFailure::py(
            "TypeError",
            format!("'{}' object is not subscriptable", v.type_name()),
        )),
    }
}

/// `v.items()` of a dict field `_dict_to_dataclass` passed through as it
/// came (`raw`; `None`: it was a dict of the schema's values): a dict whose
/// values the reader could not type is not modelled; anything else (a list
/// comes back a list) has no `items`.
fn raw_dict_use(raw: Option<&torchspec_pyval::pyjson::PyJson>) -> R<()> {
    match raw {
        None => Ok(()),
        Some(torchspec_pyval::pyjson::PyJson::Object(_)) => Err(LoadFailure::unsupported(
            "a dict whose values are not all of the schema's type",
        )),
        Some(v) => Err(no_attribute(v, "items")),
    }
}

/// `v.ATTR` of a value that has no such attribute.
fn no_attribute(v: &torchspec_pyval::pyjson::PyJson, attr: &str) -> LoadFailure {
    LoadFailure::py(
        "AttributeError",
        format!("'{}' object has no attribute '{attr}'", v.type_name()),
    )
}

/// The ShapeEnv's evaluation of a `Lambda` (`sympify("lambda: 1")`).
fn lambda_key_error() -> LoadFailure {
    LoadFailure::py("KeyError", crate::sympify::LAMBDA_KEY_ERROR)
}

/// `json.loads(v)` of a value `json.loads` made: a str is parsed, anything
/// else is CPython's `TypeError`.
fn json_loads(v: &torchspec_pyval::pyjson::PyJson) -> R<torchspec_pyval::pyjson::PyJson> {
    use torchspec_pyval::pyjson::PyJson;
    let PyJson::Str(text) = v else {
        return Err(LoadFailure::py(
            "TypeError",
            format!(
                "the JSON object must be str, bytes or bytearray, not {}",
                v.type_name()
            ),
        ));
    };
    torchspec_pyval::pyjson::loads(text).map_err(|e| LoadFailure::Python {
        exception: e
            .exception
            .clone()
            .unwrap_or_else(|| "JSONDecodeError".into()),
        message: e.message.clone(),
    })
}

impl<'w> Deserializer<'w> {
    fn index_values(&mut self, g: &'w wire::Graph) {
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

    /// `_parse_sym_expr(val.expr_str)`: the value `_dict_to_dataclass`
    /// kept read as its text, but a bool (`sympify(True)` is sympy's
    /// `true`) or a list, which are not modelled.
    fn parse_sym_expr_of(&mut self, e: &wire::SymExpr) -> R<crate::sympify::Sympified> {
        if let wire::Loose::Raw(v @ (PyJson::Bool(_) | PyJson::List(_))) = &e.expr_str {
            return Err(LoadFailure::unsupported(format!(
                "an expr_str that is a {}",
                v.type_name()
            )));
        }
        self.parse_sym_expr(&e.expr_text())
    }

    /// `_parse_sym_expr`: `sympy.sympify` of the text (its `SympifyError`,
    /// and `_process_sym_expr` reading `.is_Integer` of a Python constant),
    /// then the symbols the expression mentions.
    fn parse_sym_expr(&mut self, expr: &str) -> R<crate::sympify::Sympified> {
        use crate::sympify::Parsed;
        let symbols = &self.symbols;
        let parsed = crate::sympify::sympify_in(expr, &|n| symbols.contains(n))
            .map_err(|(e, m)| LoadFailure::py(e, m))?;
        if let Parsed::PyConst(ty) = parsed.value {
            return Err(LoadFailure::py(
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
    fn eval_sym_int(
        &mut self,
        s: &wire::SymInt,
        size: bool,
    ) -> R<(Option<LoadFailure>, Vec<Unranged>)> {
        let e = match s {
            wire::SymInt::AsExpr(e) => e,
            wire::SymInt::AsInt(_) => return Ok((None, Vec::new())),
            // `if type(val) is not int: raise AssertionError(...)`.
            wire::SymInt::Raw(r) => {
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!("expected int, got {}", r.value.type_name()),
                ))
            }
        };
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
                    return Err(LoadFailure::unsupported(format!(
                        "a symbolic hint that is a {}",
                        other.type_name()
                    )))
                }
            },
            Some(other) => {
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!("expected hint type 'as_int', got '{}'", other.tag()),
                ));
            }
        };
        let parsed = self.parse_sym_expr_of(e)?;
        // `create_symintnode`: an Integer must equal its hint.
        if let crate::sympify::Parsed::Int(n) = &parsed.value {
            let equal = match (&odd_hint, &hint) {
                (Some((_, _, number)), _) => {
                    number.is_some_and(|f| n.to_string().parse::<f64>().is_ok_and(|m| m == f))
                }
                (None, Some(h)) => n == h,
                (None, None) => true,
            };
            if !equal {
                let shown = match (&odd_hint, &hint) {
                    (Some((_, text, _)), _) => text.clone(),
                    (None, h) => h.as_ref().map(BigInt::to_string).unwrap_or_default(),
                };
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!("int(sym)={n} != hint={shown}"),
                ));
            }
        }
        if hint.is_none() && odd_hint.is_none() {
            self.compute_hint(&parsed, true)?;
        }
        let pending = match parsed.value {
            crate::sympify::Parsed::NotInt(name) => Some(LoadFailure::py(
                "TypeError",
                format!("Cannot convert {name} to int"),
            )),
            // `torch.empty_strided`'s check of a size evaluates it.
            crate::sympify::Parsed::Lambda if size => Some(lambda_key_error()),
            _ => None,
        };
        // `torch.empty_strided`'s checks of a size (`_maybe_evaluate_static`
        // where sympy cannot decide them) need the range of each free
        // symbol `symbol_name_to_range` did not constrain: sympy decides
        // `size >= 0` only for `positive=True` symbols, and `size == 1` only
        // for `symbol + N`; a bare symbol's falls back on its hint.
        let mut unranged = None;
        if size {
            let free = parsed.free_symbols.iter().flatten();
            let mut free = free.filter(|n| !self.ranges.contains_key(n.as_str()));
            unranged = free.find(|n| {
                let positive = parsed.positive.contains(n);
                !positive
                    || (parsed.bare.as_ref() == Some(*n) && hint.is_none())
                    || (parsed.bare.is_none() && !parsed.plus_positive_int)
            });
            // Other forms over positive symbols are not modelled.
            if let Some(n) = unranged {
                let modelled = !parsed.positive.contains(n)
                    || parsed.bare.is_some()
                    || parsed.plus_positive_int;
                if !modelled {
                    unranged = None;
                }
            }
        }
        // A bare unbacked symbol's `u >= 0` check stops at
        // `_should_skip_static_eval`'s `var_to_range[u]`: a `KeyError`.
        let bare_unbacked = |n: &String| parsed.bare.as_ref() == Some(n) && unbacked_int(n);
        let free: Vec<Unranged> = unranged
            .map(|n| (n.clone(), bare_unbacked(n)))
            .into_iter()
            .collect();
        let symbol = crate::srepr::bare_symbol(&e.expr_text()).or(parsed.bare.clone());
        if let (Some(v), Some(name)) = (hint, symbol) {
            if self.hinted.insert(name.clone()) {
                if let Some(vr) = self.ranges.get(name.as_str()) {
                    let below = matches!(&vr.lower, Bound::Int(lo) if v < *lo);
                    let above = matches!(&vr.upper, Bound::Int(hi) if v > *hi);
                    if below || above {
                        return Err(LoadFailure::py(
                            "AssertionError",
                            // `AssertionError(f"{v} not in {r}")` (symbolic_shapes.py),
                            // `r` a ValueRanges: `VR[lower, upper]`.
                            format!(
                                "{v} not in {}",
                                format_args!("VR[{}, {}]", vr.lower, vr.upper)
                            ),
                        ));
                    }
                }
            }
        }
        // `SymNode(...)`: `type(hint) is pytype`.
        if let Some((ty, _, _)) = odd_hint {
            if !matches!(parsed.value, crate::sympify::Parsed::Int(_)) {
                return Err(LoadFailure::py(
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

    /// `SymNode(expr, hint=None)`'s `compute_hint` (sym_node.py), run when
    /// `create_sym{int,float,bool}node` gets no hint: unless a free symbol
    /// is unbacked (`has_free_unbacked_symbols`), `_maybe_evaluate_static(
    /// expr, compute_hint=True)` substitutes the backed hints, and
    /// `_maybe_evaluate_static_worker` asserts a range for each symbol
    /// left (`sorted(key=str)`); a constant comes back as it is and an
    /// int node's `int(hint)` refuses `oo`, `nan` and `zoo`.
    fn compute_hint(&self, parsed: &crate::sympify::Sympified, int: bool) -> R<()> {
        use crate::sympify::Parsed;
        match parsed.value {
            Parsed::NotInt(name) if int => {
                return Err(LoadFailure::py(
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
        if free.iter().any(|n| unbacked(n) || is_python_keyword(n)) {
            return Ok(());
        }
        let unranged = free
            .iter()
            .find(|n| !self.hinted.contains(*n) && !self.ranges.contains_key(n.as_str()));
        match unranged {
            Some(k) => Err(LoadFailure::py(
                "AssertionError",
                format!("vr must not be None for symbol {k}"),
            )),
            None => Ok(()),
        }
    }

    /// `serialized_name_to_meta[name]`: evaluating a value's metadata parses
    /// its symbolic sizes; a name with no metadata is a `KeyError`.
    fn eval_meta(&mut self, name: &str) -> R<()> {
        if let Some(t) = self.tensor_values.get(name).copied() {
            // `deserialize_tensor_meta`: sizes, strides, then
            // `_SERIALIZE_TO_TORCH_DTYPE[tensor_meta.dtype]`, then
            // `torch.empty_strided(..., requires_grad=...)`.
            let mut pending = None;
            let mut free = Vec::new();
            let sizes = iterated(&t.sizes)?;
            for s in sizes {
                let (p, f) = self.eval_sym_int(s, true)?;
                pending = pending.or(p);
                free.extend(f);
            }
            let strides = iterated(&t.strides)?;
            for s in strides {
                let (p, f) = self.eval_sym_int(s, false)?;
                pending = pending.or(p);
                free.extend(f);
            }
            device_text(&t.device)?;
            // `_maybe_evaluate_static_worker` of a size's check in
            // `torch.empty_strided`: a free symbol with no range.
            free.sort();
            if pending.is_none() {
                pending = free.first().map(|(k, key_error)| match key_error {
                    true => LoadFailure::py("KeyError", k.clone()),
                    false => LoadFailure::py(
                        "AssertionError",
                        format!("vr must not be None for symbol {k}"),
                    ),
                });
            }
            let dtype = enum_key(&t.dtype, |d| d.value()).and_then(|k| {
                dtype_name(k).ok_or_else(|| LoadFailure::py("KeyError", k.to_string()))
            })?;
            // `torch.empty_strided`: `int()` of each size and stride
            // (sympy's `Expr.__int__`), the static evaluation of the sizes.
            if let Some(failure) = pending {
                return Err(failure);
            }
            if sizes.len() != strides.len() {
                return Err(LoadFailure::py(
                    "RuntimeError",
                    format!(
                        "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                        sizes.len(),
                        strides.len()
                    ),
                ));
            }
            if requires_grad(&t.requires_grad)? && !is_floating_or_complex(dtype) {
                return Err(LoadFailure::py(
                    "RuntimeError",
                    "Only Tensors of floating point and complex dtype can require gradients",
                ));
            }
            return Ok(());
        }
        if let Some(s) = self.sym_int_values.get(name).copied() {
            self.eval_sym_int(s, false)?;
            return Ok(());
        }
        if let Some(s) = self.sym_float_values.get(name).copied() {
            if let wire::SymFloat::AsExpr(e) = s {
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
                                return Err(LoadFailure::py(
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

    /// `sync_fx_node`.
    fn sync(&mut self, name: &str, id: NodeId) -> R<()> {
        if self.cx.name_to_node.contains_key(name) {
            return Err(LoadFailure::py(
                "SerializeError",
                format!("Node {name} has already been deserialized before."),
            ));
        }
        self.cx.graph.node_mut(id).name = name.to_string();
        self.cx.name_to_node.insert(name.to_string(), id);
        self.eval_meta(name)?;
        self.cx.graph.node_mut(id).meta.val = Some(name.to_string());
        Ok(())
    }

    fn node_named(&self, name: &str) -> R<NodeId> {
        self.cx
            .name_to_node
            .get(name)
            .copied()
            .ok_or_else(|| key_error(name))
    }

    fn deserialize_graph(&mut self, g: &'w wire::Graph) -> R<()> {
        for table in [
            "tensor_values",
            "sym_int_values",
            "sym_float_values",
            "sym_bool_values",
            "custom_obj_values",
        ] {
            raw_dict_use(g.raw_field(table))?;
        }
        self.index_values(g);
        raw_list_use(g.raw_field("inputs"), Use::Iter("type"))?;
        for (i, input) in g.inputs.iter().enumerate() {
            match input {
                wire::Argument::AsTensor(wire::TensorArgument { name })
                | wire::Argument::AsCustomObj(wire::CustomObjArgument { name, .. }) => {
                    self.placeholder(name)?;
                }
                wire::Argument::AsSymInt(s) => match s {
                    wire::SymIntArgument::AsName(name) => self.placeholder(name)?,
                    wire::SymIntArgument::AsInt(i) => {
                        return Err(LoadFailure::py(
                            "SerializeError",
                            format!("Deserializing a constant symint SymIntArgument(as_int={i}) as an input"),
                        ))
                    }
                },
                // `input_.type in ("as_int", ...)`: the payload is not read.
                a if matches!(
                    a.tag(),
                    "as_int" | "as_float" | "as_bool" | "as_none" | "as_string"
                ) =>
                {
                    let spec_name = self
                        .signature
                        .input_specs
                        .get(i)
                        .map(|s| s.arg.name().to_string())
                        .ok_or_else(|| LoadFailure::py("IndexError", "list index out of range"))?;
                    let name = if spec_name.is_empty() {
                        format!("arg{i}")
                    } else {
                        spec_name
                    };
                    self.cx
                        .graph
                        .create_node(Op::Placeholder, &name, vec![], vec![], None);
                }
                raw @ wire::Argument::Raw(_) => {
                    let mut repr = String::new();
                    raw.py_repr(&mut repr);
                    return Err(LoadFailure::py(
                        "SerializeError",
                        format!("Invalid input type {repr}"),
                    ));
                }
                other => {
                    return Err(LoadFailure::unsupported(format!(
                        "graph input of type `{}`",
                        other.tag()
                    )))
                }
            }
        }
        raw_list_use(g.raw_field("nodes"), Use::Iter("target"))?;
        for (i, node) in g.nodes.iter().enumerate() {
            self.deserialize_node(node, i as u32)?;
        }
        raw_list_use(g.raw_field("outputs"), Use::Iter("type"))?;
        let mut outputs = Vec::with_capacity(g.outputs.len());
        for out in &g.outputs {
            outputs.push(match out {
                wire::Argument::AsTensor(t) => Arg::Node(self.node_named(&t.name)?),
                wire::Argument::AsSymInt(wire::SymIntArgument::AsName(n))
                | wire::Argument::AsSymBool(wire::SymBoolArgument::AsName(n))
                | wire::Argument::AsSymFloat(wire::SymFloatArgument::AsName(n)) => {
                    Arg::Node(self.node_named(n)?)
                }
                wire::Argument::AsInt(i) => int_arg(i),
                wire::Argument::AsFloat(f) => Arg::Float(*f),
                wire::Argument::AsBool(b) => Arg::Bool(*b),
                wire::Argument::AsNone(_) => Arg::None,
                // `output.as_int` / `output.as_bool` as it came.
                wire::Argument::Raw(r) if matches!(r.tag, "as_int" | "as_bool") => {
                    raw_arg(&r.value)
                }
                wire::Argument::Raw(r) if r.tag == "as_none" => Arg::None,
                other => {
                    return Err(LoadFailure::unsupported(format!(
                        "graph output of type `{}` (PyTorch raises SerializeError)",
                        other.tag()
                    )))
                }
            });
        }
        let result = if wire::load::loose_truth(&g.is_single_tensor_return, |b| *b) {
            if outputs.len() != 1 {
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!(
                        "expected single output for single_tensor_return, got {}",
                        outputs.len()
                    ),
                ));
            }
            outputs.pop().unwrap_or(Arg::None)
        } else {
            Arg::Tuple(outputs)
        };
        self.cx
            .graph
            .create_node(Op::Output, "output", vec![result], vec![], None);
        self.unbound_unbacked()
    }

    /// "recompute unbacked bindings": each node's `val` binds the unbacked
    /// symbols it holds as a bare size, stride or SymInt, or as `c*u`
    /// (`_free_unbacked_symbols_with_path`); one left is an
    /// `AssertionError` (a set of several prints in hash order: not
    /// modelled).
    fn unbound_unbacked(&mut self) -> R<()> {
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
            .filter(|u| !bound.contains(*u))
            .collect();
        match left.as_slice() {
            [] => Ok(()),
            [u] => Err(LoadFailure::py(
                "AssertionError",
                format!("expected no unbacked symbols, got 1: {{{u}}}"),
            )),
            _ => Err(LoadFailure::unsupported(
                "several unbacked symbols no node binds (a set printed in hash order)",
            )),
        }
    }

    /// `Graph.placeholder(name)` then `sync_fx_node(name, ...)`.
    fn placeholder(&mut self, name: &str) -> R<()> {
        let id = self
            .cx
            .graph
            .create_node(Op::Placeholder, name, vec![], vec![], None);
        self.sync(name, id)
    }

    /// `deserialize_operator(n.target)` and `deserialize_node`'s dispatch on
    /// the result: the canonical target and its kind, or PyTorch's refusal
    /// of a target it cannot resolve.
    fn node_target(&self, n: &wire::Node) -> R<(String, TargetKind)> {
        let unsupported_type = |prefix: String, ty: &str| {
            let mut node = String::new();
            n.py_repr(&mut node);
            LoadFailure::py(
                "SerializeError",
                format!("{prefix} Unsupported target type for node {node}: {ty}."),
            )
        };
        match ops::resolve(&n.target, self.registrations) {
            Resolved::OpOverload(t) => Ok((t, TargetKind::OpOverload)),
            Resolved::HigherOrder(t) if t == TRITON_FUNCTIONAL => Err(LoadFailure::py(
                "SerializeError",
                "deserialize nyi for torch._higher_order_ops.triton_kernel_wrap.triton_kernel_wrapper_functional",
            )),
            Resolved::HigherOrder(t) => Ok((t, TargetKind::HigherOrder)),
            Resolved::Packet(t) => Ok((t, TargetKind::Callable)),
            Resolved::Callable(t) | Resolved::TorchAttr(t) | Resolved::Function(t)
                if SYM_OPS.contains(&t.as_str()) =>
            {
                Ok((t, TargetKind::OpOverload))
            }
            Resolved::Function(t) => Ok((t, TargetKind::Callable)),
            Resolved::Callable(t) | Resolved::TorchAttr(t) => Err(LoadFailure::unsupported(
                format!("call target `{t}` (a Python callable, not an operator)"),
            )),
            Resolved::Str(s) => Err(unsupported_type(
                format!("We failed to resolve {s} to an operator. {UNRESOLVED_HINT}"),
                "<class 'str'>",
            )),
            Resolved::NotCallable(ty) => Err(unsupported_type(String::new(), ty)),
            Resolved::Raises(exception, message) => Err(LoadFailure::py(exception, message)),
            Resolved::Unmodeled(what) => Err(LoadFailure::unsupported(format!(
                "call target `{}` ({what})",
                n.target
            ))),
        }
    }

    fn deserialize_node(&mut self, n: &'w wire::Node, origin: u32) -> R<()> {
        let (target, kind) = self.node_target(n)?;
        let printed = printed_target(&target);
        let given_name = n.name.as_deref().filter(|s| !s.is_empty());
        if SYM_OPS.contains(&target.as_str()) {
            let name = match given_name {
                Some(s) => s.to_string(),
                None => sym_output_name(n)?,
            };
            raw_list_use(n.raw_field("inputs"), Use::Iter("arg"))?;
            let args = n
                .inputs
                .iter()
                .map(|i| self.deserialize_input(&i.arg))
                .collect::<R<Vec<_>>>()?;
            let id =
                self.cx
                    .graph
                    .create_node(Op::CallFunction, &printed, args, vec![], Some(&name));
            self.cx.graph.node_mut(id).meta.origin = Some(origin);
            raw_list_use(n.raw_field("outputs"), Use::Index("value"))?;
            let out = sym_output_name(n)?;
            self.sync(&out, id)?;
            return check_metadata(&n.metadata, self.registrations);
        }
        let (args, kwargs, name) = if kind == TargetKind::Callable {
            // "Handle predispatch wrapper functions": the inputs as a
            // higher-order op's, the name only when given.
            raw_list_use(n.raw_field("inputs"), Use::Iter("kind"))?;
            let (args, kwargs) = self.hoo_inputs(&n.inputs)?;
            (args, kwargs, given_name.map(str::to_string))
        } else if kind == TargetKind::HigherOrder {
            raw_list_use(n.raw_field("inputs"), Use::Iter("kind"))?;
            let (args, kwargs) = self.hoo_inputs(&n.inputs)?;
            check_metadata(&n.metadata, self.registrations)?;
            let name = given_name
                .map(str::to_string)
                .or_else(|| match n.outputs.as_slice() {
                    [wire::Argument::AsTensor(t)] if hop_single_tensor_return(n) => {
                        Some(t.name.clone())
                    }
                    _ => None,
                });
            (args, kwargs, name)
        } else {
            let schema = self.schema_of(&target)?;
            let name = match given_name {
                Some(s) => Some(s.to_string()),
                // `serialized_node.outputs[0].as_tensor.name if
                // _is_single_tensor_return(target) else None`.
                None if schema.is_single_tensor_return() => match n.outputs.first() {
                    Some(wire::Argument::AsTensor(t)) => Some(t.name.clone()),
                    Some(_) => {
                        // `_Union.__getattr__`: `f"Field {name} is not set."`.
                        return Err(LoadFailure::py(
                            "AttributeError",
                            format!("Field {} is not set.", "as_tensor"),
                        ));
                    }
                    None => return Err(LoadFailure::py("IndexError", "list index out of range")),
                },
                None => None,
            };
            raw_list_use(n.raw_field("inputs"), Use::Iter("name"))?;
            let (args, kwargs) = self.op_inputs(&schema, &n.inputs)?;
            (args, kwargs, name)
        };
        let id =
            self.cx
                .graph
                .create_node(Op::CallFunction, &printed, args, kwargs, name.as_deref());
        self.cx.graph.node_mut(id).meta.origin = Some(origin);
        self.deserialize_outputs(n, id, &printed)?;
        // `fx_node.meta.update(self.deserialize_metadata(...))`
        check_metadata(&n.metadata, self.registrations)?;
        self.shape_env_assert(&target, id)
    }

    /// "handle ShapeEnv asserts": `fx_node.args[0].meta["val"]` of an
    /// `_assert_scalar` whose first argument is not a bool, and of every
    /// `sym_constrain_range_for_size`. (What the ShapeEnv then does with
    /// a SymBool or SymInt is not modelled.)
    fn shape_env_assert(&self, target: &str, id: NodeId) -> R<()> {
        let bool_skips = match target {
            "torch.ops.aten._assert_scalar.default" => true,
            "torch.ops.aten.sym_constrain_range_for_size.default" => false,
            _ => return Ok(()),
        };
        let node = self.cx.graph.node(id);
        let no_meta = |ty: &str| {
            LoadFailure::py(
                "AttributeError",
                format!("'{ty}' object has no attribute 'meta'"),
            )
        };
        match node.args.first() {
            None => Err(LoadFailure::py("IndexError", "tuple index out of range")),
            Some(Arg::Bool(_)) if bool_skips => Ok(()),
            Some(Arg::Node(arg)) if bool_skips && !self.cx.valueless.contains(arg) => {
                self.runtime_assert(*arg)
            }
            // A subgraph's get_attr node has no `val` either.
            Some(Arg::Node(arg))
                if self.cx.valueless.contains(arg)
                    || self.cx.graph.node(*arg).op == Op::GetAttr =>
            {
                Err(key_error("val"))
            }
            Some(Arg::Node(_)) => Ok(()),
            Some(Arg::Bool(_)) => Err(no_meta("bool")),
            Some(Arg::None) => Err(no_meta("NoneType")),
            Some(Arg::Int(_) | Arg::BigInt(_)) => Err(no_meta("int")),
            Some(Arg::Float(_)) => Err(no_meta("float")),
            Some(Arg::Str(_)) => Err(no_meta("str")),
            Some(Arg::Complex(..)) => Err(no_meta("complex")),
            // FX keeps a node's list and dict arguments as immutable ones.
            Some(Arg::List(_)) => Err(no_meta("immutable_list")),
            Some(Arg::Tuple(_)) => Err(no_meta("tuple")),
            Some(Arg::Dict(_)) => Err(no_meta("immutable_dict")),
            Some(Arg::Torch(_) | Arg::Device(_)) => Err(LoadFailure::unsupported(
                "`.meta` of a torch object as a ShapeEnv assert's argument",
            )),
        }
    }

    /// `shape_env.guard_or_defer_runtime_assert(expr)` of an `_assert_scalar`
    /// on a SymBool, as far as its fast paths go: `_maybe_fast_eval_comparison`
    /// (a sum of terms with non-negative ranges `>= 0` is true), then
    /// `_should_skip_static_eval`'s `var_to_range[u]` of an unbacked symbol
    /// `u` compared with zero (`KeyError` when no range constraint gave it
    /// one). What `_maybe_evaluate_static` decides after is not modelled.
    fn runtime_assert(&self, arg: NodeId) -> R<()> {
        use crate::srepr::SumTerm;
        let node = self.cx.graph.node(arg);
        if node.op == Op::GetAttr {
            return Err(key_error("val"));
        }
        let Some(name) = node.meta.val.as_deref() else {
            return Ok(());
        };
        let Some(wire::SymBool::AsExpr(e)) = self.sym_bool_values.get(name).copied() else {
            return Ok(());
        };
        let (terms, bare) =
            crate::srepr::comparison_with_zero(&e.expr_text()).unwrap_or((Vec::new(), false));
        let nonneg = |t: &SumTerm| match t {
            SumTerm::Symbol(s) => self
                .ranges
                .get(s.as_str())
                .is_some_and(|vr| matches!(&vr.lower, Bound::Int(lo) if *lo >= BigInt::from(0))),
            SumTerm::Number(n) => *n,
            SumTerm::Other => false,
        };
        if !terms.is_empty() && terms.iter().all(nonneg) {
            return Ok(());
        }
        if let (true, [SumTerm::Symbol(s)]) = (bare, terms.as_slice()) {
            if unbacked_int(s) {
                // With a range (unbounded or not), what `_maybe_evaluate_static`
                // then decides is not modelled.
                return match self.ranges.contains_key(s.as_str()) {
                    false => Err(LoadFailure::py("KeyError", s.clone())),
                    true => Ok(()),
                };
            }
        }
        // `_maybe_evaluate_static`: each free symbol (`sorted(key=str)`)
        // needs a range (`_maybe_evaluate_static_worker`); a backed hint
        // gives none (unlike `compute_hint`, this substitutes no hints).
        let symbols = &self.symbols;
        let Ok(parsed) = crate::sympify::sympify_in(&e.expr_text(), &|n| symbols.contains(n))
        else {
            return Ok(());
        };
        if parsed.value == crate::sympify::Parsed::Lambda {
            return Err(lambda_key_error());
        }
        let mut free = parsed.free_symbols.unwrap_or_default();
        free.sort();
        match free.iter().find(|n| !self.ranges.contains_key(n.as_str())) {
            Some(k) => Err(LoadFailure::py(
                "AssertionError",
                format!("vr must not be None for symbol {k}"),
            )),
            None => Ok(()),
        }
    }

    /// `_get_schema_from_target(target)` of an OpOverload: the built-in
    /// table's schema or the registered op's.
    fn schema_of(&self, target: &str) -> R<ops::schema::Schema> {
        let text = ops::op_schema(target)
            .or_else(|| self.registrations.op(target).map(|op| op.schema.as_str()))
            .ok_or_else(|| LoadFailure::unsupported(format!("the schema of `{target}`")))?;
        ops::schema::parse(text)
            .ok_or_else(|| LoadFailure::unsupported(format!("the schema text `{text}`")))
    }

    /// `deserialize_inputs`: every serialized input is deserialized first,
    /// in file order, into `actual_args` (a dict by name: a repeated name
    /// keeps its last value and kind); then the schema's arguments are
    /// walked in schema order, each placed by its serialized
    /// `ArgumentKind`, or, without a POSITIONAL/KEYWORD kind, by the old
    /// rules (no default and not kwarg-only: positional, a missing one a
    /// `KeyError`). Inputs whose names the schema lacks are dropped.
    fn op_inputs(
        &mut self,
        schema: &ops::schema::Schema,
        inputs: &'w [wire::NamedArgument],
    ) -> R<ArgsKwargs> {
        let mut actual: Vec<(&'w str, Option<wire::ArgumentKind>, Arg)> = Vec::new();
        for input in inputs {
            let value = self.deserialize_input(&input.arg)?;
            match actual.iter_mut().find(|(k, _, _)| *k == input.name) {
                Some(slot) => {
                    slot.1 = argument_kind(&input.kind);
                    slot.2 = value;
                }
                None => actual.push((&input.name, argument_kind(&input.kind), value)),
            }
        }
        let mut args = Vec::new();
        let mut kwargs: Vec<(String, Arg)> = Vec::new();
        let put = |kwargs: &mut Vec<(String, Arg)>, name: &str, value: Arg| match kwargs
            .iter_mut()
            .find(|(k, _)| k == name)
        {
            Some(slot) => slot.1 = value,
            None => kwargs.push((name.to_string(), value)),
        };
        for schema_arg in &schema.arguments {
            let name = schema_arg.name.as_str();
            let found = actual.iter().find(|(k, _, _)| *k == name);
            if let Some((_, kind, value)) = found {
                match kind {
                    Some(wire::ArgumentKind::POSITIONAL) => {
                        args.push(value.clone());
                        continue;
                    }
                    Some(wire::ArgumentKind::KEYWORD) if !is_python_keyword(name) => {
                        put(&mut kwargs, name, value.clone());
                        continue;
                    }
                    _ => {}
                }
            }
            // "If there's no ArgumentKind found, fallback to the old cases."
            let is_positional = !schema_arg.has_default && !schema_arg.kwarg_only;
            if is_positional {
                let (_, _, value) = found.ok_or_else(|| key_error(name))?;
                args.push(value.clone());
            } else if is_python_keyword(name) {
                if schema_arg.kwarg_only {
                    return Err(LoadFailure::py(
                        "AssertionError",
                        format!("schema_arg {name} should not be kwarg_only"),
                    ));
                }
                // `kwargs = OrderedDict(); args.extend(list(kwargs.values()))`:
                // the kwargs so far are dropped, not moved.
                kwargs.clear();
                let (_, _, value) = found.ok_or_else(|| key_error(name))?;
                args.push(value.clone());
            } else if let Some((_, _, value)) = found {
                put(&mut kwargs, name, value.clone());
            }
        }
        Ok((args, kwargs))
    }

    /// `deserialize_hoo_inputs`.
    fn hoo_inputs(&mut self, inputs: &'w [wire::NamedArgument]) -> R<ArgsKwargs> {
        let mut args = Vec::new();
        let mut kwargs: Vec<(String, Arg)> = Vec::new();
        for input in inputs {
            let value = self.deserialize_input(&input.arg)?;
            if argument_kind(&input.kind) == Some(wire::ArgumentKind::POSITIONAL)
                || input.name.is_empty()
            {
                args.push(value);
            } else {
                match kwargs.iter_mut().find(|(k, _)| *k == input.name) {
                    Some(slot) => slot.1 = value,
                    None => kwargs.push((input.name.clone(), value)),
                }
            }
        }
        Ok((args, kwargs))
    }

    /// `deserialize_input`: one argument, by its union tag.
    fn deserialize_input(&mut self, a: &'w wire::Argument) -> R<Arg> {
        use wire::Argument as A;
        Ok(match a {
            A::Raw(r) => raw_input(a, r)?,
            A::AsNone(_) => Arg::None,
            A::AsTensor(t) => Arg::Node(self.node_named(&t.name)?),
            A::AsScalarType(_) | A::AsMemoryFormat(_) | A::AsLayout(_) => enum_input(a)?,
            A::AsGraph(g) => self.graph_input(g)?,
            A::AsDevice(d) => Arg::Device(device_text(d)?),
            A::AsInt(i) => int_arg(i),
            A::AsFloat(f) => Arg::Float(*f),
            A::AsBool(b) => Arg::Bool(*b),
            A::AsString(s) => Arg::Str(s.clone()),
            A::AsComplex(c) => Arg::Complex(c.real, c.imag),
            A::AsSymInt(s) => self.sym_int_arg(s)?,
            A::AsSymFloat(s) => self.sym_float_arg(s)?,
            A::AsSymBool(s) => self.sym_bool_arg(s)?,
            A::AsStringToArgument(items) => {
                let mut out: Vec<(String, Arg)> = Vec::with_capacity(items.len());
                for (k, v) in items {
                    out.push((k.clone(), self.deserialize_input(v)?));
                }
                Arg::Dict(out)
            }
            A::AsOptionalTensor(o) => self.optional_tensor_arg(o)?,
            A::AsCustomObj(c) => match self.cx.name_to_node.get(&c.name) {
                Some(id) => Arg::Node(*id),
                None => return Err(LoadFailure::unsupported(
                    "a custom object argument that is not a graph input (a ScriptObject constant)",
                )),
            },
            A::AsOperator(op) => self.operator_input(op)?,
            _ => self.list_input(a)?,
        })
    }

    /// The list forms of `deserialize_input` (`as_tensors`, `as_ints`,
    /// `as_sym_ints`, `as_optional_tensors`, ...): each item as its scalar
    /// form is read.
    fn list_input(&mut self, a: &'w wire::Argument) -> R<Arg> {
        use wire::Argument as A;
        let tensors = |this: &mut Self, ts: &[wire::TensorArgument]| -> R<Arg> {
            Ok(Arg::List(
                ts.iter()
                    .map(|t| this.node_named(&t.name).map(Arg::Node))
                    .collect::<R<_>>()?,
            ))
        };
        Ok(match a {
            A::AsTensors(ts) => tensors(self, ts)?,
            A::AsInts(v) => Arg::List(v.iter().map(int_arg).collect()),
            A::AsFloats(v) => Arg::List(v.iter().map(|f| Arg::Float(*f)).collect()),
            A::AsBools(v) => Arg::List(v.iter().map(|b| Arg::Bool(*b)).collect()),
            A::AsStrings(v) => Arg::List(v.iter().map(|s| Arg::Str(s.clone())).collect()),
            A::AsIntLists(v) => Arg::List(
                v.iter()
                    .map(|l| Arg::Tuple(l.iter().map(int_arg).collect()))
                    .collect(),
            ),
            A::AsFloatLists(v) => Arg::List(
                v.iter()
                    .map(|l| Arg::List(l.iter().map(|f| Arg::Float(*f)).collect()))
                    .collect(),
            ),
            A::AsNestedTensors(v) => {
                let mut out = Vec::with_capacity(v.len());
                for inner in v {
                    out.push(tensors(self, inner)?);
                }
                Arg::List(out)
            }
            A::AsSymInts(v) => Arg::List(v.iter().map(|s| self.sym_int_arg(s)).collect::<R<_>>()?),
            A::AsSymFloats(v) => {
                Arg::List(v.iter().map(|s| self.sym_float_arg(s)).collect::<R<_>>()?)
            }
            A::AsSymBools(v) => {
                Arg::List(v.iter().map(|s| self.sym_bool_arg(s)).collect::<R<_>>()?)
            }
            A::AsOptionalTensors(v) => Arg::List(
                v.iter()
                    .map(|o| self.optional_tensor_arg(o))
                    .collect::<R<_>>()?,
            ),
            // deserialize_input reads every other form itself.
            other => {
                return Err(LoadFailure::unsupported(format!(
                    "argument `{}`",
                    other.tag()
                )))
            }
        })
    }

    /// An `as_graph` argument: the subgraph deserialized with its own value
    /// tables, registered as a submodule, and a `get_attr` node naming it.
    fn graph_input(&mut self, g: &'w wire::GraphArgument) -> R<Arg> {
        let saved = std::mem::replace(&mut self.cx, GraphCx::new());
        let saved_values = (
            std::mem::take(&mut self.tensor_values),
            std::mem::take(&mut self.sym_int_values),
            std::mem::take(&mut self.sym_float_values),
            std::mem::take(&mut self.sym_bool_values),
            std::mem::take(&mut self.custom_obj_values),
        );
        let result = self.deserialize_graph(&g.graph);
        let sub = std::mem::replace(&mut self.cx, saved);
        (
            self.tensor_values,
            self.sym_int_values,
            self.sym_float_values,
            self.sym_bool_values,
            self.custom_obj_values,
        ) = saved_values;
        result?;
        check_codegen(&sub.graph)?;
        let (graph, submodules) = sub.finish();
        self.cx.submodules.push(SubGraph {
            name: g.name.clone(),
            graph,
            submodules,
        });
        let id = self
            .cx
            .graph
            .create_node(Op::GetAttr, &g.name, vec![], vec![], Some(&g.name));
        Ok(Arg::Node(id))
    }

    /// An `as_operator` argument, through `deserialize_operator`: an
    /// overload the process has prints as `str(OpOverload)`
    /// (`testlib.foo.default`); one it cannot resolve stays the target
    /// string, which `_format_arg` prints as is
    /// (`torch.ops.testlib.foo.default`).
    fn operator_input(&self, op: &str) -> R<Arg> {
        let unsupported = || LoadFailure::unsupported(format!("operator argument `{op}`"));
        match ops::resolve(op, self.registrations) {
            Resolved::OpOverload(t) => match t.strip_prefix("torch.ops.") {
                Some(rest) => Ok(Arg::Torch(rest.to_string())),
                None => Err(unsupported()),
            },
            Resolved::Str(s) => Ok(Arg::Str(s)),
            _ => Err(unsupported()),
        }
    }

    fn sym_float_arg(&mut self, s: &wire::SymFloatArgument) -> R<Arg> {
        Ok(match s {
            wire::SymFloatArgument::AsFloat(f) => Arg::Float(*f),
            wire::SymFloatArgument::AsName(n) => Arg::Node(self.node_named(n)?),
        })
    }

    fn sym_bool_arg(&mut self, s: &wire::SymBoolArgument) -> R<Arg> {
        Ok(match s {
            wire::SymBoolArgument::AsBool(b) => Arg::Bool(*b),
            wire::SymBoolArgument::AsName(n) => Arg::Node(self.node_named(n)?),
        })
    }

    fn optional_tensor_arg(&mut self, o: &wire::OptionalTensorArgument) -> R<Arg> {
        Ok(match o {
            wire::OptionalTensorArgument::AsNone(_) => Arg::None,
            wire::OptionalTensorArgument::AsTensor(t) => Arg::Node(self.node_named(&t.name)?),
        })
    }

    fn sym_int_arg(&mut self, s: &wire::SymIntArgument) -> R<Arg> {
        Ok(match s {
            wire::SymIntArgument::AsInt(i) => int_arg(i),
            wire::SymIntArgument::AsName(n) => Arg::Node(self.node_named(n)?),
        })
    }

    /// `deserialize_outputs`.
    fn deserialize_outputs(&mut self, n: &'w wire::Node, id: NodeId, printed: &str) -> R<()> {
        use wire::Argument as A;
        raw_list_use(n.raw_field("outputs"), Use::Len)?;
        let outputs = &n.outputs;
        if outputs.is_empty() {
            self.cx.valueless.push(id);
            return Ok(());
        }
        // `not getattr(node, "is_hop_single_tensor_return", True)`: the
        // field always exists, so a null counts as false here.
        if outputs.len() == 1
            && n.target.contains("torch.ops.higher_order")
            && !hop_single_tensor_return(n)
            && !is_as_none(&outputs[0])
        {
            let name = match &outputs[0] {
                A::AsTensor(t) => t.name.clone(),
                A::AsSymInt(wire::SymIntArgument::AsName(s))
                | A::AsSymBool(wire::SymBoolArgument::AsName(s))
                | A::AsSymFloat(wire::SymFloatArgument::AsName(s)) => s.clone(),
                _ => {
                    return Err(LoadFailure::py("AssertionError", "arg should not be None"));
                }
            };
            self.getitem(id, 0, &name)?;
            let node_name = self.cx.graph.node(id).name.clone();
            self.cx.name_to_node.insert(node_name, id);
            return Ok(());
        }
        if outputs.len() == 1 {
            match &outputs[0] {
                A::AsTensor(t) => return self.sync(&t.name, id),
                A::AsSymInt(s) => return self.sync(&sym_int_name(s)?, id),
                A::AsSymBool(wire::SymBoolArgument::AsName(s))
                | A::AsSymFloat(wire::SymFloatArgument::AsName(s)) => return self.sync(s, id),
                A::AsSymBool(_) | A::AsSymFloat(_) => {
                    return Err(LoadFailure::unsupported("a constant symbolic output"))
                }
                a if is_as_none(a) => {
                    let candidate =
                        format!("{}_unused", fx::target_to_str(Op::CallFunction, printed));
                    self.cx.graph.rename(id, &candidate);
                    return Ok(());
                }
                _ => {}
            }
        }
        // deserialize_multiple_outputs: its metadata first.
        check_metadata(&n.metadata, self.registrations)?;
        if outputs.len() == 1 {
            match &outputs[0] {
                A::AsTensors(ts) if !ts.is_empty() => {
                    for (idx, t) in ts.iter().enumerate() {
                        self.getitem(id, idx, &t.name)?;
                    }
                }
                A::AsTensors(_) => {
                    return Err(LoadFailure::py("IndexError", "list index out of range"))
                }
                other => return Err(single_output_refusal(other)),
            }
        } else {
            self.getitems(id, outputs)?;
        }
        let node_name = self.cx.graph.node(id).name.clone();
        self.cx.name_to_node.insert(node_name, id);
        Ok(())
    }

    /// `generate_getitems` over `Argument`s.
    fn getitems(&mut self, id: NodeId, outputs: &'w [wire::Argument]) -> R<()> {
        use wire::Argument as A;
        for (idx, out) in outputs.iter().enumerate() {
            match out {
                A::AsTensor(t) => self.getitem(id, idx, &t.name)?,
                A::AsSymInt(s) => self.getitem(id, idx, &sym_int_name(s)?)?,
                A::AsSymFloat(wire::SymFloatArgument::AsName(s)) => self.getitem(id, idx, s)?,
                A::AsTensors(ts) => {
                    let list = self.cx.graph.create_node(
                        Op::CallFunction,
                        "operator.getitem",
                        vec![Arg::Node(id), Arg::Int(idx as i64)],
                        vec![],
                        None,
                    );
                    for (j, t) in ts.iter().enumerate() {
                        self.getitem(list, j, &t.name)?;
                    }
                }
                A::AsSymInts(ss) => {
                    let list = self.cx.graph.create_node(
                        Op::CallFunction,
                        "operator.getitem",
                        vec![Arg::Node(id), Arg::Int(idx as i64)],
                        vec![],
                        None,
                    );
                    for (j, s) in ss.iter().enumerate() {
                        self.getitem(list, j, &sym_int_name(s)?)?;
                    }
                }
                a if is_as_none(a) => {
                    self.cx.graph.create_node(
                        Op::CallFunction,
                        "operator.getitem",
                        vec![Arg::Node(id), Arg::Int(idx as i64)],
                        vec![],
                        Some("as_none"),
                    );
                }
                // The other lists `generate_getitems` walks: their items are
                // plain values, not `Argument`s.
                other
                    if matches!(
                        other.tag(),
                        "as_sym_floats"
                            | "as_ints"
                            | "as_floats"
                            | "as_strings"
                            | "as_bools"
                            | "as_sym_bools"
                    ) =>
                {
                    return Err(LoadFailure::unsupported(format!(
                        "a `{}` among several node outputs",
                        other.tag()
                    )))
                }
                other => {
                    let mut arg = String::new();
                    other.py_repr(&mut arg);
                    return Err(LoadFailure::py(
                        "NotImplementedError",
                        format!("Unimplemented node output type: {arg}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `generate_getitem`.
    fn getitem(&mut self, of: NodeId, idx: usize, name: &str) -> R<()> {
        let id = self.cx.graph.create_node(
            Op::CallFunction,
            "operator.getitem",
            vec![Arg::Node(of), Arg::Int(idx as i64)],
            vec![],
            Some(name),
        );
        self.sync(name, id)
    }
}

/// An `as_scalar_type`, `as_memory_format` or `as_layout` argument through
/// its table. An unknown enum value stays the raw int `_dict_to_dataclass`
/// read, so `_SERIALIZE_TO_TORCH_DTYPE[inp.as_scalar_type]` (and the memory
/// format / layout maps) raise `KeyError(99)`: the message is `99`.
fn enum_input(a: &wire::Argument) -> R<Arg> {
    let (value, name) = match a {
        wire::Argument::AsScalarType(s) => (s.value(), dtype_name(s.value())),
        wire::Argument::AsMemoryFormat(m) => (m.value(), memory_format_name(m.value())),
        wire::Argument::AsLayout(l) => (l.value(), layout_name(l.value())),
        other => {
            return Err(LoadFailure::unsupported(format!(
                "argument `{}`",
                other.tag()
            )))
        }
    };
    let name = name.ok_or_else(|| LoadFailure::py("KeyError", value.to_string()))?;
    Ok(Arg::Torch(name.into()))
}

/// `arg.type == "as_none"`: the union's tag, whatever its payload
/// (`_dict_to_dataclass` keeps `{"as_none": 1}` as it came).
fn is_as_none(a: &wire::Argument) -> bool {
    match a {
        wire::Argument::AsNone(_) => true,
        wire::Argument::Raw(r) => r.tag == "as_none",
        _ => false,
    }
}

/// `deserialize_multiple_outputs` of one output that is not
/// `as_tensors`: `isinstance(outputs[0].value, list)`, then
/// `isinstance(value[0], TensorArgument)`, each an `AssertionError` naming
/// `type(...).__name__` (an enum value `_dict_to_dataclass` kept as a raw
/// int is an `int`).
fn single_output_refusal(a: &wire::Argument) -> LoadFailure {
    use wire::Argument as A;
    let not_list = |ty: &str| LoadFailure::py("AssertionError", format!("expected list, got {ty}"));
    let first = |ty: Option<&str>| match ty {
        Some(ty) => LoadFailure::py(
            "AssertionError",
            format!("expected TensorArgument, got {ty}"),
        ),
        None => LoadFailure::py("IndexError", "list index out of range"),
    };
    let some_if = |empty: bool, ty: &'static str| (!empty).then_some(ty);
    match a {
        A::AsInt(_) => not_list("int"),
        A::AsFloat(_) => not_list("float"),
        A::AsBool(_) => not_list("bool"),
        A::AsString(_) | A::AsOperator(_) => not_list("str"),
        A::AsStringToArgument(_) => not_list("dict"),
        A::AsDevice(_) => not_list("Device"),
        A::AsComplex(_) => not_list("ComplexValue"),
        A::AsCustomObj(_) => not_list("CustomObjArgument"),
        A::AsGraph(_) => not_list("GraphArgument"),
        A::AsOptionalTensor(_) => not_list("OptionalTensorArgument"),
        A::AsScalarType(wire::ScalarType::Other(_))
        | A::AsLayout(wire::Layout::Other(_))
        | A::AsMemoryFormat(wire::MemoryFormat::Other(_)) => not_list("int"),
        A::AsScalarType(_) => not_list("ScalarType"),
        A::AsLayout(_) => not_list("Layout"),
        A::AsMemoryFormat(_) => not_list("MemoryFormat"),
        A::AsInts(v) => first(some_if(v.is_empty(), "int")),
        A::AsFloats(v) => first(some_if(v.is_empty(), "float")),
        A::AsBools(v) => first(some_if(v.is_empty(), "bool")),
        A::AsStrings(v) => first(some_if(v.is_empty(), "str")),
        A::AsSymInts(v) => first(some_if(v.is_empty(), "SymIntArgument")),
        A::AsSymBools(v) => first(some_if(v.is_empty(), "SymBoolArgument")),
        A::AsSymFloats(v) => first(some_if(v.is_empty(), "SymFloatArgument")),
        A::AsOptionalTensors(v) => first(some_if(v.is_empty(), "OptionalTensorArgument")),
        A::AsNestedTensors(v) => first(some_if(v.is_empty(), "list")),
        A::AsIntLists(v) => first(some_if(v.is_empty(), "list")),
        A::AsFloatLists(v) => first(some_if(v.is_empty(), "list")),
        A::Raw(r) => match &r.value {
            PyJson::List(_) if r.tag == "as_tensors" => LoadFailure::unsupported(
                "an `as_tensors` output whose items' fields are not of the schema's types",
            ),
            PyJson::List(items) => first(items.first().map(PyJson::type_name)),
            v => not_list(v.type_name()),
        },
        other => LoadFailure::unsupported(format!("a single `{}` node output", other.tag())),
    }
}

/// `magic_methods` of torch/fx/graph.py: the `_operator` functions
/// `CodeGen` prints as Python operators, with one `{}` per operand.
const MAGIC_METHODS: &[(&str, usize)] = &[
    ("eq", 2),
    ("ne", 2),
    ("lt", 2),
    ("gt", 2),
    ("le", 2),
    ("ge", 2),
    ("pos", 1),
    ("neg", 1),
    ("invert", 1),
    ("add", 2),
    ("sub", 2),
    ("mul", 2),
    ("floordiv", 2),
    ("truediv", 2),
    ("div", 2),
    ("mod", 2),
    ("pow", 2),
    ("lshift", 2),
    ("rshift", 2),
    ("and_", 2),
    ("or_", 2),
    ("xor", 2),
    ("getitem", 2),
    ("matmul", 2),
];

/// The part of `torch.fx.GraphModule(root, graph)`'s `recompile()` a
/// loaded graph can fail: an `_operator` call is printed as
/// `magic_methods[name].format(*args)`, and too few arguments for its
/// operands is `str.format`'s `IndexError`. (`_create_graph_module_for_export`
/// builds each subgraph's module when the subgraph is read, the root's
/// after the module call graph.)
pub fn check_codegen(g: &Graph) -> Result<(), LoadFailure> {
    for (_, n) in g.nodes() {
        if n.op != Op::CallFunction {
            continue;
        }
        let Some(name) = n.target.strip_prefix("operator.") else {
            continue;
        };
        let operands = MAGIC_METHODS.iter().find(|(m, _)| *m == name);
        if let Some(&(_, operands)) = operands {
            if n.args.len() < operands {
                return Err(LoadFailure::py(
                    "IndexError",
                    format!(
                        "Replacement index {} out of range for positional args tuple",
                        n.args.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn sym_int_name(s: &wire::SymIntArgument) -> R<String> {
    match s {
        wire::SymIntArgument::AsName(n) => Ok(n.clone()),
        wire::SymIntArgument::AsInt(_) => Err(field_not_set("as_name")),
    }
}

/// `_Union.__getattribute__` of a field other than the one set.
fn field_not_set(field: &str) -> LoadFailure {
    LoadFailure::py("AttributeError", format!("Field {field} is not set."))
}

/// `type(argument.value).__name__`: the Python class of a union payload
/// as `_dict_to_dataclass` built it (a raw payload's, as `json.loads`
/// made it). `None` for a class this does not name.
fn payload_type_name(a: &wire::Argument) -> Option<&'static str> {
    use wire::Argument as A;
    Some(match a {
        A::Raw(r) => r.value.type_name(),
        A::AsNone(_) | A::AsBool(_) => "bool",
        A::AsInt(_) => "int",
        A::AsFloat(_) => "float",
        A::AsString(_) | A::AsOperator(_) => "str",
        A::AsTensor(_) => "TensorArgument",
        A::AsCustomObj(_) => "CustomObjArgument",
        A::AsGraph(_) => "GraphArgument",
        A::AsDevice(_) => "Device",
        A::AsComplex(_) => "ComplexValue",
        A::AsOptionalTensor(_) => "OptionalTensorArgument",
        A::AsStringToArgument(_) => "dict",
        A::AsScalarType(wire::ScalarType::Other(_))
        | A::AsLayout(wire::Layout::Other(_))
        | A::AsMemoryFormat(wire::MemoryFormat::Other(_)) => "int",
        A::AsScalarType(_) => "ScalarType",
        A::AsLayout(_) => "Layout",
        A::AsMemoryFormat(_) => "MemoryFormat",
        A::AsTensors(_)
        | A::AsInts(_)
        | A::AsFloats(_)
        | A::AsBools(_)
        | A::AsStrings(_)
        | A::AsSymInts(_)
        | A::AsSymBools(_)
        | A::AsSymFloats(_)
        | A::AsOptionalTensors(_)
        | A::AsNestedTensors(_)
        | A::AsIntLists(_)
        | A::AsFloatLists(_) => "list",
        _ => return None,
    })
}

/// `serialized_node.outputs[0].value.as_name` of a symbolic op.
fn sym_output_name(n: &wire::Node) -> R<String> {
    use wire::Argument as A;
    match n.outputs.first() {
        Some(A::AsSymInt(s)) => sym_int_name(s),
        Some(A::AsSymBool(wire::SymBoolArgument::AsName(s)))
        | Some(A::AsSymFloat(wire::SymFloatArgument::AsName(s))) => Ok(s.clone()),
        Some(A::AsSymBool(_) | A::AsSymFloat(_)) => Err(field_not_set("as_name")),
        // `.as_name` of a payload that is not a symbolic union.
        Some(other) => Err(match payload_type_name(other) {
            Some(ty) => LoadFailure::py(
                "AttributeError",
                format!("'{ty}' object has no attribute 'as_name'"),
            ),
            None => {
                LoadFailure::unsupported(format!("symbolic op output of type `{}`", other.tag()))
            }
        }),
        None => Err(LoadFailure::py("IndexError", "list index out of range")),
    }
}

/// `metadata.get(key)` of the node's metadata dict (a repeated key keeps
/// its last value), when truthy.
fn meta_get<'a>(metadata: &'a [(String, String)], key: &str) -> Option<&'a str> {
    metadata
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// `metadata_split` of `deserialize_metadata`: splits at the commas
/// outside `[(`…`)]` nesting (one counter for both kinds).
fn metadata_split_len(item: &str) -> usize {
    let mut parts = 1;
    let mut depth = 0i64;
    for c in item.chars() {
        match c {
            '[' | '(' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => parts += 1,
            _ => {}
        }
    }
    parts
}

/// What `GraphModuleDeserializer.deserialize_metadata` raises on a node's
/// metadata (the values it keeps are not modelled: the report does not
/// show them).
fn check_metadata(
    metadata: &wire::Loose<Vec<(String, String)>>,
    registrations: &Registrations,
) -> R<()> {
    let raw = match metadata {
        wire::Loose::Typed(m) => return check_str_metadata(m, registrations),
        wire::Loose::Raw(raw) => raw,
    };
    // `metadata.get(key)` on what `_dict_to_dataclass` kept: a dict of raw
    // values, or something with no `.get`.
    let PyJson::Object(entries) = raw else {
        return Err(LoadFailure::py(
            "AttributeError",
            format!("'{}' object has no attribute 'get'", raw.type_name()),
        ));
    };
    let mut strs = Vec::with_capacity(entries.len());
    for key in [
        "nn_module_stack",
        "source_fn_stack",
        "torch_fn",
        "custom",
        "from_node",
    ] {
        let Some((_, v)) = entries.iter().rev().find(|(k, _)| k == key) else {
            continue;
        };
        match v {
            PyJson::Str(s) => strs.push((key.to_string(), s.clone())),
            v if !truthy(v) => {}
            // `nn_module_stack_str.split(ST_DELIMITER)`, `json.loads(custom_str)`.
            v if key == "custom" || key == "from_node" => {
                // The checks before this key run first.
                check_str_metadata(&strs, registrations)?;
                return Err(LoadFailure::py(
                    "TypeError",
                    format!(
                        "the JSON object must be str, bytes or bytearray, not {}",
                        v.type_name()
                    ),
                ));
            }
            v => {
                check_str_metadata(&strs, registrations)?;
                return Err(LoadFailure::py(
                    "AttributeError",
                    format!("'{}' object has no attribute 'split'", v.type_name()),
                ));
            }
        }
    }
    check_str_metadata(&strs, registrations)
}

/// Python's truth value of a value `json.loads` made.
/// `torch.empty_strided(..., requires_grad=...)`: a bool, or None for False.
fn requires_grad(v: &wire::load::Loose<bool>) -> R<bool> {
    match v {
        wire::load::Loose::Typed(b) => Ok(*b),
        wire::load::Loose::Raw(PyJson::Null) => Ok(false),
        wire::load::Loose::Raw(other) => Err(LoadFailure::py(
            "TypeError",
            format!(
                "empty_strided(): argument 'requires_grad' must be bool, not {}",
                other.type_name()
            ),
        )),
    }
}

fn truthy(v: &PyJson) -> bool {
    wire::load::truthy(v)
}

/// `deserialize_inputs`' `kind == ArgumentKind.POSITIONAL`: an `IntEnum`
/// equals the int, float or bool of its value; anything else (a string,
/// an unknown value) matches no kind.
fn argument_kind(kind: &wire::Loose<Option<wire::ArgumentKind>>) -> Option<wire::ArgumentKind> {
    match kind {
        wire::Loose::Typed(k) => *k,
        wire::Loose::Raw(PyJson::Bool(b)) => Some(wire::ArgumentKind::from_value(i64::from(*b))),
        wire::Loose::Raw(PyJson::Float(f)) if f.fract() == 0.0 && f.abs() < 1e15 => {
            Some(wire::ArgumentKind::from_value(*f as i64))
        }
        wire::Loose::Raw(_) => None,
    }
}

/// `getattr(serialized_node, "is_hop_single_tensor_return", True)` as a
/// truth value (the field always exists: a null is false).
fn hop_single_tensor_return(n: &wire::Node) -> bool {
    wire::load::loose_truth(&n.is_hop_single_tensor_return, |b| *b == Some(true))
}

/// `deserialize_metadata` on a `dict[str, str]`.
fn check_str_metadata(metadata: &[(String, String)], registrations: &Registrations) -> R<()> {
    if let Some(stack) = meta_get(metadata, "nn_module_stack") {
        for item in stack.split(';') {
            let n = metadata_split_len(item);
            if n != 3 {
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!("expected metadata_split to return 3 parts, got {n}"),
                ));
            }
        }
    }
    if let Some(stack) = meta_get(metadata, "source_fn_stack") {
        for item in stack.split(';') {
            // `name, target_str = source_fn_str.split(",")`
            let parts: Vec<&str> = item.split(',').collect();
            match parts.len() {
                1 => {
                    return Err(LoadFailure::py(
                        "ValueError",
                        "not enough values to unpack (expected 2, got 1)",
                    ))
                }
                2 => {}
                _ => {
                    return Err(LoadFailure::py(
                        "ValueError",
                        "too many values to unpack (expected 2)",
                    ))
                }
            }
            // `deserialize_meta_func`: a target not under `torch` goes
            // through `deserialize_operator`, which raises only for `#…`.
            let target = parts[1];
            if !target.starts_with("torch") {
                if let Resolved::Raises(exception, message) = ops::resolve(target, registrations) {
                    return Err(LoadFailure::py(exception, message));
                }
            }
        }
    }
    for key in ["custom", "from_node"] {
        if let Some(text) = meta_get(metadata, key) {
            let value = json_loads(&torchspec_pyval::pyjson::PyJson::Str(text.to_string()))?;
            if key == "from_node"
                && !matches!(
                    value,
                    torchspec_pyval::pyjson::PyJson::Null
                        | torchspec_pyval::pyjson::PyJson::List(_)
                )
            {
                return Err(LoadFailure::py(
                    "AssertionError",
                    format!("expected list, got {}", value.type_name()),
                ));
            }
        }
    }
    Ok(())
}

/// `keyword.iskeyword`.
fn is_python_keyword(s: &str) -> bool {
    matches!(
        s,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

fn constant(v: &wire::ConstantValue) -> Constant {
    match v {
        wire::ConstantValue::AsNone(_) => Constant::None,
        wire::ConstantValue::AsInt(PyInt::Small(i)) => Constant::Int(*i),
        wire::ConstantValue::AsInt(PyInt::Big(b)) => Constant::BigInt(b.to_string()),
        wire::ConstantValue::AsFloat(f) => Constant::Float(*f),
        wire::ConstantValue::AsString(s) => Constant::Str(s.clone()),
        wire::ConstantValue::AsBool(b) => Constant::Bool(*b),
    }
}

/// `deserialize_argument_spec`: non-symbolic arguments become
/// `ConstantArgument(name="", value=deserialize_input(x))`.
fn deserialize_argument_spec(x: &wire::Argument) -> R<ArgumentSpec> {
    use wire::Argument as A;
    Ok(match x {
        A::AsTensor(t) => ArgumentSpec::Tensor {
            name: t.name.clone(),
        },
        A::AsSymInt(s) => match s {
            wire::SymIntArgument::AsName(n) => ArgumentSpec::SymInt { name: n.clone() },
            wire::SymIntArgument::AsInt(_) => return Err(field_not_set("as_name")),
        },
        A::AsSymFloat(s) => match s {
            wire::SymFloatArgument::AsName(n) => ArgumentSpec::SymFloat { name: n.clone() },
            wire::SymFloatArgument::AsFloat(_) => return Err(field_not_set("as_name")),
        },
        A::AsCustomObj(c) => {
            return Err(LoadFailure::unsupported(format!(
                "custom object `{}` in a signature",
                c.name
            )))
        }
        A::AsNone(_) => const_spec(Constant::None),
        A::AsInt(PyInt::Small(i)) => const_spec(Constant::Int(*i)),
        A::AsInt(PyInt::Big(b)) => const_spec(Constant::BigInt(b.to_string())),
        A::AsFloat(f) => const_spec(Constant::Float(*f)),
        A::AsBool(b) => const_spec(Constant::Bool(*b)),
        A::AsString(s) => const_spec(Constant::Str(s.clone())),
        other => {
            return Err(LoadFailure::unsupported(format!(
                "a `{}` argument in a signature",
                other.tag()
            )))
        }
    })
}

fn const_spec(value: Constant) -> ArgumentSpec {
    ArgumentSpec::Constant {
        name: String::new(),
        value,
    }
}

fn deserialize_signature(sig: &wire::GraphSignature) -> R<ExportGraphSignature> {
    raw_list_use(sig.raw_field("input_specs"), Use::Iter("type"))?;
    let mut input_specs = Vec::with_capacity(sig.input_specs.len());
    for i in &sig.input_specs {
        use wire::InputSpec as I;
        input_specs.push(match i {
            I::UserInput(u) => InputSpec {
                kind: InputKind::UserInput,
                arg: deserialize_argument_spec(&u.arg)?,
                target: None,
                persistent: None,
            },
            I::Parameter(p) => InputSpec {
                kind: InputKind::Parameter,
                arg: ArgumentSpec::Tensor {
                    name: p.arg.name.clone(),
                },
                target: Some(p.parameter_name.clone()),
                persistent: None,
            },
            I::Buffer(b) => InputSpec {
                kind: InputKind::Buffer,
                arg: ArgumentSpec::Tensor {
                    name: b.arg.name.clone(),
                },
                target: Some(b.buffer_name.clone()),
                persistent: Some(b.persistent),
            },
            I::TensorConstant(t) => InputSpec {
                kind: InputKind::ConstantTensor,
                arg: ArgumentSpec::Tensor {
                    name: t.arg.name.clone(),
                },
                target: Some(t.tensor_constant_name.clone()),
                persistent: None,
            },
            I::CustomObj(c) => InputSpec {
                kind: InputKind::CustomObj,
                arg: ArgumentSpec::CustomObj {
                    name: c.arg.name.clone(),
                    class_fqn: c.arg.class_fqn.clone(),
                },
                target: Some(c.custom_obj_name.clone()),
                persistent: None,
            },
            I::Token(t) => InputSpec {
                kind: InputKind::Token,
                arg: ArgumentSpec::Token {
                    name: t.arg.name.clone(),
                },
                target: None,
                persistent: None,
            },
            I::ConstantInput(c) => InputSpec {
                kind: InputKind::UserInput,
                arg: ArgumentSpec::Constant {
                    name: c.name.clone(),
                    value: constant(&c.value),
                },
                target: None,
                persistent: None,
            },
        });
    }
    raw_list_use(sig.raw_field("output_specs"), Use::Iter("type"))?;
    let mut output_specs = Vec::with_capacity(sig.output_specs.len());
    for o in &sig.output_specs {
        use wire::OutputSpec as O;
        let tensor = |t: &wire::TensorArgument| ArgumentSpec::Tensor {
            name: t.name.clone(),
        };
        output_specs.push(match o {
            O::UserOutput(u) => OutputSpec {
                kind: OutputKind::UserOutput,
                arg: deserialize_argument_spec(&u.arg)?,
                target: None,
            },
            O::LossOutput(l) => OutputSpec {
                kind: OutputKind::LossOutput,
                arg: tensor(&l.arg),
                target: None,
            },
            O::BufferMutation(b) => OutputSpec {
                kind: OutputKind::BufferMutation,
                arg: tensor(&b.arg),
                target: Some(b.buffer_name.clone()),
            },
            O::ParameterMutation(p) => OutputSpec {
                kind: OutputKind::ParameterMutation,
                arg: tensor(&p.arg),
                target: Some(p.parameter_name.clone()),
            },
            O::GradientToParameter(g) => OutputSpec {
                kind: OutputKind::GradientToParameter,
                arg: tensor(&g.arg),
                target: Some(g.parameter_name.clone()),
            },
            O::GradientToUserInput(g) => OutputSpec {
                kind: OutputKind::GradientToUserInput,
                arg: tensor(&g.arg),
                target: Some(g.user_input_name.clone()),
            },
            O::UserInputMutation(u) => OutputSpec {
                kind: OutputKind::UserInputMutation,
                arg: tensor(&u.arg),
                target: Some(u.user_input_name.clone()),
            },
            O::Token(t) => OutputSpec {
                kind: OutputKind::Token,
                arg: ArgumentSpec::Token {
                    name: t.arg.name.clone(),
                },
                target: None,
            },
        });
    }
    Ok(ExportGraphSignature {
        input_specs,
        output_specs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(target: &str, nargs: usize) -> Graph {
        let mut g = Graph::new();
        let x = g.create_node(Op::Placeholder, "x", vec![], vec![], None);
        let args = vec![Arg::Node(x); nargs];
        g.create_node(Op::CallFunction, target, args, vec![], None);
        g
    }

    #[test]
    fn codegen_needs_an_operand_per_placeholder() {
        let err = |g: &Graph| match check_codegen(g) {
            Err(LoadFailure::Python { exception, message }) => Some((exception, message)),
            _ => None,
        };
        assert_eq!(
            err(&call("operator.mul", 1)),
            Some((
                "IndexError".into(),
                "Replacement index 1 out of range for positional args tuple".into()
            ))
        );
        assert!(err(&call("operator.neg", 0)).is_some_and(|(_, m)| m.contains("index 0")));
        assert_eq!(err(&call("operator.neg", 1)), None);
        // Extra arguments are ignored by `str.format`.
        assert_eq!(err(&call("operator.add", 3)), None);
        assert_eq!(err(&call("torch.ops.aten.add.Tensor", 0)), None);
    }
}
