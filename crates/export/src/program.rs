//! The program as a Rust user reads it, on top of the PyTorch-mirroring
//! [`ExportedProgram`]: its inputs and outputs with dtypes and dims (a dim
//! is static, a symbol with its range, or a derived expression), the graph
//! and its subgraphs as iterators of nodes, the range constraints as a map,
//! and the weights by name as zero-copy views. Nothing here needs the
//! schema's wire types or sympy's `srepr` text.
//!
//! ```
//! # fn main() -> torchspec_export::Result<()> {
//! let program = torchspec_export::open("../../corpus/programs/mlp-dynamic.pt2")?;
//! for input in program.inputs() {
//!     println!("{}: {}", input.name, input.ty); // x: torch.float32[s77, 4]
//! }
//! let calls = program.graph().nodes().filter(|n| n.op() == torchspec_export::Op::CallFunction);
//! assert!(calls.count() > 0);
//! for (symbol, range) in program.ranges() {
//!     println!("{symbol}: {range}"); // s77: [2, 64]
//! }
//! for name in program.names() {
//!     let t = program.tensor(name)?;
//!     println!("{name} {} {:?}", t.dtype(), t.shape());
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use crate::fx::{self, Arg, NodeId, Op};
use crate::model::{ExportedProgram, SubGraph};
use crate::ranges::{Bound, ValueRanges};
use crate::schema as wire;
use crate::signature::{ArgumentSpec, Constant, InputKind, OutputKind};
use crate::srepr::{read_expr, ReadExpr};
use crate::weights::{Detached, Dtype, TensorView};
use torchspec_pyval::pyjson::PyInt;
use torchspec_pyval::{Error, ErrorKind, Result};

/// Opens a `.pt2` archive or a program JSON file as `torch.export.load`
/// reads it ([`ExportedProgram::open`]), ready to read as a [`Program`].
///
/// ```
/// let program = torchspec_export::open("../../corpus/programs/cond.pt2")?;
/// assert_eq!(program.inputs().len(), 1);
///
/// let e = torchspec_export::open("no-such-file.pt2").unwrap_err();
/// assert_eq!(e.kind(), torchspec_export::ErrorKind::Io);
/// # Ok::<(), torchspec_export::Error>(())
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<Program> {
    Ok(Program::new(ExportedProgram::open(path)?))
}

/// A range of values a symbol may take, both ends included; `None` at an
/// end is unbounded (`-int_oo` / `int_oo`, or an end past `i64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Range {
    /// The smallest value, if bounded below.
    pub min: Option<i64>,
    /// The largest value, if bounded above.
    pub max: Option<i64>,
}

impl Range {
    fn of(vr: &ValueRanges) -> Range {
        let end = |b: &Bound| match b {
            Bound::Int(i) => i64::try_from(i).ok(),
            Bound::IntOo | Bound::NegIntOo => None,
        };
        Range {
            min: end(&vr.lower),
            max: end(&vr.upper),
        }
    }

    /// Whether `v` is in the range.
    pub fn contains(&self, v: i64) -> bool {
        self.min.is_none_or(|m| v >= m) && self.max.is_none_or(|m| v <= m)
    }
}

impl fmt::Display for Range {
    /// `[2, 64]`, `[0, inf]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.min {
            Some(m) => write!(f, "[{m}, ")?,
            None => f.write_str("[-inf, ")?,
        }
        match self.max {
            Some(m) => write!(f, "{m}]"),
            None => f.write_str("inf]"),
        }
    }
}

/// A symbolic expression: its text as `str()` prints it (`2*s77 + 1`)
/// and the symbols it uses, in order of first appearance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    /// `str(expr)`.
    pub text: String,
    /// The names of its free symbols.
    pub symbols: Vec<String>,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One dim of a tensor's shape (or a symbolic int's value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A size fixed at export.
    Static(i64),
    /// A dynamic size: a symbol with its range (unbounded where the program
    /// records none, as for some unbacked symbols).
    Symbol {
        /// The symbol's name (`s77`).
        name: String,
        /// Its range constraint.
        range: Range,
    },
    /// A size derived from symbols (`2*s77`, `s77 + 1`), with its range
    /// when the program records one for the expression.
    Derived {
        /// The expression.
        expr: Expr,
        /// Its range constraint, if recorded.
        range: Option<Range>,
    },
}

impl Dim {
    /// The size, when static.
    pub fn as_static(&self) -> Option<i64> {
        match self {
            Dim::Static(n) => Some(*n),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    /// `4`, `s77`, `2*s77`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Symbol { name, .. } => f.write_str(name),
            Dim::Derived { expr, .. } => write!(f, "{expr}"),
        }
    }
}

/// A value known at export or a symbolic expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Sym<T> {
    /// The value.
    Known(T),
    /// The expression it is.
    Expr(Expr),
}

impl<T: fmt::Display> fmt::Display for Sym<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sym::Known(v) => write!(f, "{v}"),
            Sym::Expr(e) => write!(f, "{e}"),
        }
    }
}

/// A tensor's dtype and dims.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorType {
    /// `t.dtype`.
    pub dtype: Dtype,
    /// `t.shape`, one [`Dim`] per dimension.
    pub dims: Vec<Dim>,
}

impl fmt::Display for TensorType {
    /// `torch.float32[s77, 4]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// What kind of value an input, output or node holds, with its type.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueType {
    /// A tensor.
    Tensor(TensorType),
    /// An int (`SymInt`): static or symbolic.
    Int(Dim),
    /// A float (`SymFloat`).
    Float(Sym<f64>),
    /// A bool (`SymBool`).
    Bool(Sym<bool>),
    /// A Python constant passed or returned as is.
    Constant(Constant),
    /// A script object of this class (`torch.ScriptObject`).
    Object {
        /// Its class, fully qualified.
        class: String,
    },
    /// An effect token.
    Token,
    /// What the program does not describe (no metadata, or metadata this
    /// reader cannot type).
    Unknown,
}

impl ValueType {
    /// The tensor type, for a tensor.
    pub fn as_tensor(&self) -> Option<&TensorType> {
        match self {
            ValueType::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Tensor(t) => write!(f, "{t}"),
            ValueType::Int(d) => write!(f, "int {d}"),
            ValueType::Float(x) => write!(f, "float {x}"),
            ValueType::Bool(b) => write!(f, "bool {b}"),
            ValueType::Constant(c) => write!(f, "constant {c}"),
            ValueType::Object { class } => write!(f, "object {class}"),
            ValueType::Token => f.write_str("token"),
            ValueType::Unknown => f.write_str("unknown"),
        }
    }
}

/// One input of the program's graph, as its signature says.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The placeholder's name (`x`, `p_fc1_weight`).
    pub name: String,
    /// What it stands for: a user input, a parameter, a buffer, a
    /// constant tensor, a script object or an effect token.
    pub kind: InputKind,
    /// The parameter's, buffer's or constant's name in the state dict or
    /// constants (`fc1.weight`).
    pub target: Option<String>,
    /// Its type.
    pub ty: ValueType,
}

/// One output of the program's graph, as its signature says.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The node's name.
    pub name: String,
    /// What it is: a user output, a mutation, a gradient, a token.
    pub kind: OutputKind,
    /// The mutated buffer, parameter or input, where there is one.
    pub target: Option<String>,
    /// Its type.
    pub ty: ValueType,
}

/// Which value table of a serialized graph holds a name.
#[derive(Clone, Copy, Debug)]
enum Table {
    Tensor,
    SymInt,
    SymFloat,
    SymBool,
    Object,
}

/// One graph (the program's or a subgraph) with its value index.
#[derive(Debug)]
struct GraphEntry {
    /// `""` for the program's graph, else the `get_attr` path (`true_graph_0`,
    /// `body_graph_0.true_graph_0`).
    name: String,
    /// Indices through `submodules` from the root.
    sub_path: Vec<usize>,
    /// (node, input) indices through the serialized graphs' `as_graph`
    /// arguments from the root, when found.
    wire_path: Option<Vec<(usize, usize)>>,
    /// Serialized value name → its table and index there.
    values: HashMap<String, (Table, usize)>,
}

/// An exported program, read for a Rust user. Built from the
/// PyTorch-mirroring [`ExportedProgram`] ([`Program::exported`]).
#[derive(Debug)]
pub struct Program {
    ep: ExportedProgram,
    inputs: Vec<Input>,
    outputs: Vec<Output>,
    ranges: BTreeMap<String, Range>,
    /// The tensors of the state dict then the constants, or why they
    /// cannot be read.
    weights: std::result::Result<Vec<Detached>, (ErrorKind, String)>,
    by_name: HashMap<String, usize>,
    graphs: OnceLock<Vec<GraphEntry>>,
}

impl Program {
    /// Opens a `.pt2` archive or program JSON file: [`open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Program> {
        open(path)
    }

    /// The program read from a loaded [`ExportedProgram`]. The weights
    /// configs are read once here; a program whose tensors cannot be read
    /// (a pickled tensor subclass) still has its graph, inputs and ranges.
    pub fn new(ep: ExportedProgram) -> Program {
        let ranges = ep
            .graph_module
            .range_constraints
            .0
            .iter()
            .map(|(s, vr)| (s.clone(), Range::of(vr)))
            .collect();
        // A program JSON has no tensors; a pre-2.8 archive's are pickled.
        let pickled = ep.state_dict.as_ref().is_some_and(|s| !s.is_empty());
        let weights = match (&ep.archive, ep.tensors()) {
            (Some(bytes), Ok(t)) => {
                let mut all = Detached::all(&t.state_dict, bytes);
                all.extend(Detached::all(&t.constants, bytes));
                Ok(all)
            }
            (None, _) if !pickled => Ok(Vec::new()),
            (_, Err(e)) => Err((e.kind(), e.to_string())),
            (None, Ok(_)) => Ok(Vec::new()),
        };
        let mut by_name = HashMap::new();
        if let Ok(w) = &weights {
            for (i, d) in w.iter().enumerate() {
                by_name.entry(d.name().to_string()).or_insert(i);
            }
        }
        let mut program = Program {
            ep,
            inputs: Vec::new(),
            outputs: Vec::new(),
            ranges,
            weights,
            by_name,
            graphs: OnceLock::new(),
        };
        program.inputs = program.signature_inputs();
        program.outputs = program.signature_outputs();
        program
    }

    /// The PyTorch-mirroring program (graph module, signature, state dict,
    /// the serialized program as read, the report).
    pub fn exported(&self) -> &ExportedProgram {
        &self.ep
    }

    /// The PyTorch-mirroring program, taken back.
    pub fn into_exported(self) -> ExportedProgram {
        self.ep
    }

    /// The inputs a caller passes (`USER_INPUT`), in order.
    ///
    /// ```
    /// use torchspec_export::{Dim, ValueType};
    /// let program = torchspec_export::open("../../corpus/programs/derived-dims.pt2")?;
    /// let names: Vec<&str> = program.inputs().map(|i| i.name.as_str()).collect();
    /// assert_eq!(names, ["x", "y", "z"]);
    /// let ValueType::Tensor(y) = &program.input("y").unwrap().ty else { panic!() };
    /// let Dim::Derived { expr, range } = &y.dims[0] else { panic!() };
    /// assert_eq!(expr.text, "2*s77");
    /// assert_eq!(expr.symbols, ["s77"]);
    /// assert_eq!(range.unwrap().to_string(), "[4, 64]");
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn inputs(&self) -> impl ExactSizeIterator<Item = &Input> + '_ {
        let users: Vec<&Input> = self
            .inputs
            .iter()
            .filter(|i| i.kind == InputKind::UserInput)
            .collect();
        users.into_iter()
    }

    /// The user input named `name`.
    pub fn input(&self, name: &str) -> Option<&Input> {
        self.inputs().find(|i| i.name == name)
    }

    /// Every input of the graph, as the signature lists them: parameters,
    /// buffers, constants, tokens and user inputs.
    ///
    /// ```
    /// use torchspec_export::InputKind;
    /// let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
    /// let params: Vec<&str> = program
    ///     .all_inputs()
    ///     .iter()
    ///     .filter(|i| i.kind == InputKind::Parameter)
    ///     .filter_map(|i| i.target.as_deref())
    ///     .collect();
    /// assert_eq!(params, ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn all_inputs(&self) -> &[Input] {
        &self.inputs
    }

    /// The outputs a caller gets (`USER_OUTPUT`, `LOSS_OUTPUT`), in order.
    ///
    /// ```
    /// let program = torchspec_export::open("../../corpus/programs/multi-output.pt2")?;
    /// for out in program.outputs() {
    ///     println!("{}: {}", out.name, out.ty);
    /// }
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn outputs(&self) -> impl ExactSizeIterator<Item = &Output> + '_ {
        let users: Vec<&Output> = self
            .outputs
            .iter()
            .filter(|o| matches!(o.kind, OutputKind::UserOutput | OutputKind::LossOutput))
            .collect();
        users.into_iter()
    }

    /// Every output of the graph, as the signature lists them (mutations
    /// and tokens too).
    pub fn all_outputs(&self) -> &[Output] {
        &self.outputs
    }

    /// The range constraints: symbol (or derived expression) → range.
    ///
    /// ```
    /// let program = torchspec_export::open("../../corpus/programs/derived-dims.pt2")?;
    /// let s = program.ranges()["s77"];
    /// assert_eq!((s.min, s.max), (Some(2), Some(32)));
    /// assert_eq!(program.ranges()["s77 + 1"].to_string(), "[3, 33]");
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn ranges(&self) -> &BTreeMap<String, Range> {
        &self.ranges
    }

    /// The program's graph (`ep.graph`).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let program = torchspec_export::open("../../corpus/programs/mlp-dynamic.pt2")?;
    /// let mut histogram = BTreeMap::new();
    /// for node in program.graph().nodes().filter(|n| n.op() == torchspec_export::Op::CallFunction) {
    ///     *histogram.entry(node.target()).or_insert(0) += 1;
    /// }
    /// assert_eq!(histogram["torch.ops.aten.linear.default"], 1);
    /// let linear = program.graph().find("linear").unwrap();
    /// assert_eq!(linear.value().unwrap().to_string(), "torch.float32[s77, 3]");
    /// let args: Vec<&str> = linear.inputs().map(|n| n.name()).collect();
    /// assert_eq!(args, ["x", "p_fc_weight", "p_fc_bias"]);
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn graph(&self) -> Graph<'_> {
        self.graph_at(0)
    }

    /// The program's graph then every subgraph (`cond` branches, loop
    /// bodies), depth first.
    ///
    /// ```
    /// let program = torchspec_export::open("../../corpus/programs/cond.pt2")?;
    /// let names: Vec<String> = program.graphs().map(|g| g.name().to_string()).collect();
    /// assert_eq!(names, ["", "true_graph_0", "false_graph_0"]);
    /// let nodes: usize = program.graphs().map(|g| g.nodes().count()).sum();
    /// assert!(nodes > program.graph().nodes().count());
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn graphs(&self) -> impl Iterator<Item = Graph<'_>> + '_ {
        (0..self.entries().len()).map(move |i| self.graph_at(i))
    }

    /// The names of the tensors of the state dict then the constants (those
    /// [`Program::tensor`] reads), in the weights configs' order. Empty for
    /// a program read from its JSON alone.
    ///
    /// ```
    /// let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
    /// assert_eq!(program.names().collect::<Vec<_>>(), ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]);
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.weights
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(Detached::name)
    }

    /// The tensor `name` of the state dict or the constants: a view over
    /// the archive's bytes, nothing copied. An error of kind
    /// [`ErrorKind::NotFound`] when there is none, or the error that kept
    /// the tensors from being read.
    ///
    /// ```
    /// use torchspec_export::{Dtype, ErrorKind};
    /// let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
    /// let b = program.tensor("fc1.bias")?;
    /// assert_eq!((b.dtype(), b.shape()), (Dtype::Float32, &[8][..]));
    /// let values: Vec<f32> = b.to_vec()?;
    /// assert_eq!(values.len(), 8);
    /// assert_eq!(program.tensor("nope").unwrap_err().kind(), ErrorKind::NotFound);
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn tensor(&self, name: &str) -> Result<TensorView<'_>> {
        let weights = self
            .weights
            .as_ref()
            .map_err(|(kind, m)| Error::new(m.clone()).of_kind(*kind))?;
        let i = self.by_name.get(name).ok_or_else(|| {
            Error::new(format!(
                "no tensor `{name}` in the program's state dict or constants"
            ))
            .of_kind(ErrorKind::NotFound)
        })?;
        Ok(weights[*i].attach(self.archive_bytes()))
    }

    /// Every tensor of the state dict then the constants, as views.
    ///
    /// ```
    /// let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
    /// for t in program.tensors()?.filter(|t| t.is_param()) {
    ///     let first: Vec<String> = t.values().take(3).map(|v| v.to_string()).collect();
    ///     println!("{} {} {:?} {}", t.name(), t.dtype(), t.shape(), first.join(", "));
    /// }
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn tensors(&self) -> Result<impl Iterator<Item = TensorView<'_>> + '_> {
        let weights = self
            .weights
            .as_ref()
            .map_err(|(kind, m)| Error::new(m.clone()).of_kind(*kind))?;
        let base = self.archive_bytes();
        Ok(weights.iter().map(move |d| d.attach(base)))
    }

    fn archive_bytes(&self) -> &[u8] {
        self.ep.archive.as_deref().map_or(&[], |b| &b[..])
    }

    fn signature_inputs(&self) -> Vec<Input> {
        let sig = &self.ep.graph_module.signature;
        sig.input_specs
            .iter()
            .map(|s| Input {
                name: s.arg.name().to_string(),
                kind: s.kind,
                target: s.target.clone(),
                ty: self.arg_type(&s.arg),
            })
            .collect()
    }

    fn signature_outputs(&self) -> Vec<Output> {
        let sig = &self.ep.graph_module.signature;
        sig.output_specs
            .iter()
            .map(|s| Output {
                name: s.arg.name().to_string(),
                kind: s.kind,
                target: s.target.clone(),
                ty: self.arg_type(&s.arg),
            })
            .collect()
    }

    /// The type of a signature entry, from the root graph's value tables.
    fn arg_type(&self, arg: &ArgumentSpec) -> ValueType {
        match arg {
            ArgumentSpec::Constant { value, .. } => ValueType::Constant(value.clone()),
            ArgumentSpec::Token { .. } => ValueType::Token,
            ArgumentSpec::CustomObj { class_fqn, .. } => ValueType::Object {
                class: class_fqn.clone(),
            },
            other => {
                let g = &self.ep.graph_module.graph;
                let val = g
                    .find_by_name(other.name())
                    .and_then(|id| g.node(id).meta.val.as_deref())
                    .unwrap_or(other.name());
                self.graph().value_of(val)
            }
        }
    }

    fn entries(&self) -> &[GraphEntry] {
        self.graphs.get_or_init(|| {
            let mut out = Vec::new();
            let root = &self.ep.serialized.graph_module.graph;
            collect_graphs(
                "",
                &self.ep.graph_module.submodules,
                Vec::new(),
                Some((root, Vec::new())),
                &mut out,
            );
            // (The root's fx graph comes first.)
            out
        })
    }

    fn graph_at(&self, i: usize) -> Graph<'_> {
        let entry = &self.entries()[i];
        let gm = &self.ep.graph_module;
        let (mut fx, mut subs) = (&gm.graph, &gm.submodules[..]);
        for &k in &entry.sub_path {
            fx = &subs[k].graph;
            subs = &subs[k].submodules;
        }
        let wire = entry.wire_path.as_ref().and_then(|p| {
            let mut g = &self.ep.serialized.graph_module.graph;
            for &(n, a) in p {
                match &g.nodes.get(n)?.inputs.get(a)?.arg {
                    wire::Argument::AsGraph(sub) => g = &sub.graph,
                    _ => return None,
                }
            }
            Some(g)
        });
        Graph {
            program: self,
            entry,
            fx,
            subs,
            wire,
        }
    }

    fn sym_int(&self, s: &wire::SymInt) -> Dim {
        match s {
            wire::SymInt::AsInt(PyInt::Small(n)) => Dim::Static(*n),
            wire::SymInt::AsInt(PyInt::Big(b)) => Dim::Derived {
                expr: Expr {
                    text: b.to_string(),
                    symbols: Vec::new(),
                },
                range: None,
            },
            wire::SymInt::AsExpr(e) => self.dim_of_text(&e.expr_text()),
            wire::SymInt::Raw(r) => Dim::Derived {
                expr: Expr {
                    text: r.tag.to_string(),
                    symbols: Vec::new(),
                },
                range: None,
            },
        }
    }

    fn dim_of_text(&self, text: &str) -> Dim {
        match read_expr(text) {
            Some(ReadExpr::Int(n)) => match n.parse() {
                Ok(n) => Dim::Static(n),
                Err(_) => Dim::Derived {
                    expr: Expr {
                        text: n,
                        symbols: Vec::new(),
                    },
                    range: None,
                },
            },
            Some(ReadExpr::Symbol(name)) => Dim::Symbol {
                range: self.ranges.get(&name).copied().unwrap_or_default(),
                name,
            },
            Some(ReadExpr::Expr(text, symbols)) => Dim::Derived {
                range: self.ranges.get(&text).copied(),
                expr: Expr { text, symbols },
            },
            None => Dim::Derived {
                expr: Expr {
                    text: text.to_string(),
                    symbols: Vec::new(),
                },
                range: None,
            },
        }
    }

    fn expr_of(&self, e: &wire::SymExpr) -> Expr {
        match self.dim_of_text(&e.expr_text()) {
            Dim::Static(n) => Expr {
                text: n.to_string(),
                symbols: Vec::new(),
            },
            Dim::Symbol { name, .. } => Expr {
                text: name.clone(),
                symbols: vec![name],
            },
            Dim::Derived { expr, .. } => expr,
        }
    }

    fn tensor_type(&self, t: &wire::TensorMeta) -> ValueType {
        let dtype = t
            .dtype
            .enum_key(|d| d.value())
            .ok()
            .and_then(Dtype::from_scalar_type);
        match (dtype, t.sizes.typed()) {
            (Some(dtype), Some(sizes)) => ValueType::Tensor(TensorType {
                dtype,
                dims: sizes.iter().map(|s| self.sym_int(s)).collect(),
            }),
            _ => ValueType::Unknown,
        }
    }
}

/// Depth first: the graph `name`, then its subgraphs.
fn collect_graphs(
    name: &str,
    subs: &[SubGraph],
    sub_path: Vec<usize>,
    wire: Option<(&wire::Graph, Vec<(usize, usize)>)>,
    out: &mut Vec<GraphEntry>,
) {
    let mut values = HashMap::new();
    if let Some((g, _)) = &wire {
        let tables: [(Table, Vec<&String>); 5] = [
            (
                Table::Tensor,
                g.tensor_values.iter().map(|(n, _)| n).collect(),
            ),
            (
                Table::SymInt,
                g.sym_int_values.iter().map(|(n, _)| n).collect(),
            ),
            (
                Table::SymFloat,
                g.sym_float_values.iter().map(|(n, _)| n).collect(),
            ),
            (
                Table::SymBool,
                g.sym_bool_values.iter().map(|(n, _)| n).collect(),
            ),
            (
                Table::Object,
                g.custom_obj_values.iter().map(|(n, _)| n).collect(),
            ),
        ];
        for (table, names) in tables {
            for (i, n) in names.into_iter().enumerate() {
                values.entry(n.clone()).or_insert((table, i));
            }
        }
    }
    out.push(GraphEntry {
        name: name.to_string(),
        sub_path: sub_path.clone(),
        wire_path: wire.as_ref().map(|(_, p)| p.clone()),
        values,
    });
    for (k, sub) in subs.iter().enumerate() {
        // The serialized subgraph: the `as_graph` argument of that name.
        let found = wire.as_ref().and_then(|(g, p)| {
            g.nodes.iter().enumerate().find_map(|(n, node)| {
                node.inputs
                    .iter()
                    .enumerate()
                    .find_map(|(a, input)| match &input.arg {
                        wire::Argument::AsGraph(ga) if ga.name == sub.name => {
                            let mut path = p.clone();
                            path.push((n, a));
                            Some((&ga.graph, path))
                        }
                        _ => None,
                    })
            })
        });
        let full = if name.is_empty() {
            sub.name.clone()
        } else {
            format!("{name}.{}", sub.name)
        };
        let mut path = sub_path.clone();
        path.push(k);
        collect_graphs(&full, &sub.submodules, path, found, out);
    }
}

/// A graph of the program: its nodes in program order and its subgraphs.
#[derive(Clone, Copy)]
pub struct Graph<'p> {
    program: &'p Program,
    entry: &'p GraphEntry,
    fx: &'p fx::Graph,
    subs: &'p [SubGraph],
    wire: Option<&'p wire::Graph>,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("name", &self.entry.name)
            .field("nodes", &self.fx.len())
            .finish()
    }
}

impl<'p> Graph<'p> {
    /// `""` for the program's graph; a subgraph's `get_attr` path
    /// (`true_graph_0`, `body_graph_0.cond_fn_0`).
    pub fn name(&self) -> &'p str {
        &self.entry.name
    }

    /// Its nodes in program order.
    pub fn nodes(self) -> impl DoubleEndedIterator<Item = Node<'p>> + 'p {
        self.fx.nodes().map(move |(id, node)| Node {
            graph: self,
            id,
            node,
        })
    }

    /// The node `id` (an [`Arg::Node`] of this graph's nodes).
    pub fn node(self, id: NodeId) -> Option<Node<'p>> {
        self.fx.get(id).map(|node| Node {
            graph: self,
            id,
            node,
        })
    }

    /// The node named `name`.
    pub fn find(self, name: &str) -> Option<Node<'p>> {
        let id = self.fx.find_by_name(name)?;
        self.node(id)
    }

    /// How many nodes it has.
    pub fn len(&self) -> usize {
        self.fx.len()
    }

    /// Whether it has no nodes.
    pub fn is_empty(&self) -> bool {
        self.fx.is_empty()
    }

    /// The subgraphs its nodes register (not theirs: see [`Program::graphs`]).
    pub fn subgraphs(self) -> impl Iterator<Item = Graph<'p>> + 'p {
        let program = self.program;
        let prefix = self.entry.name.clone();
        self.subs.iter().filter_map(move |s| {
            let full = if prefix.is_empty() {
                s.name.clone()
            } else {
                format!("{prefix}.{}", s.name)
            };
            let i = program.entries().iter().position(|e| e.name == full)?;
            Some(program.graph_at(i))
        })
    }

    /// The PyTorch-mirroring graph (`torch.fx.Graph`).
    pub fn fx(&self) -> &'p fx::Graph {
        self.fx
    }

    /// The type of serialized value `name` of this graph.
    fn value_of(&self, name: &str) -> ValueType {
        let (Some(g), Some(&(table, i))) = (self.wire, self.entry.values.get(name)) else {
            return ValueType::Unknown;
        };
        let p = self.program;
        match table {
            Table::Tensor => g
                .tensor_values
                .get(i)
                .map_or(ValueType::Unknown, |(_, t)| p.tensor_type(t)),
            Table::SymInt => g
                .sym_int_values
                .get(i)
                .map_or(ValueType::Unknown, |(_, s)| ValueType::Int(p.sym_int(s))),
            Table::SymFloat => match g.sym_float_values.get(i) {
                Some((_, wire::SymFloat::AsFloat(f))) => ValueType::Float(Sym::Known(*f)),
                Some((_, wire::SymFloat::AsExpr(e))) => ValueType::Float(Sym::Expr(p.expr_of(e))),
                _ => ValueType::Unknown,
            },
            Table::SymBool => match g.sym_bool_values.get(i) {
                Some((_, wire::SymBool::AsBool(b))) => ValueType::Bool(Sym::Known(*b)),
                Some((_, wire::SymBool::AsExpr(e))) => ValueType::Bool(Sym::Expr(p.expr_of(e))),
                _ => ValueType::Unknown,
            },
            Table::Object => g
                .custom_obj_values
                .get(i)
                .map_or(ValueType::Unknown, |(_, o)| ValueType::Object {
                    class: o.class_fqn.clone(),
                }),
        }
    }
}

/// A node of a [`Graph`]: op, target, arguments and the type of its value.
#[derive(Clone, Copy)]
pub struct Node<'p> {
    graph: Graph<'p>,
    id: NodeId,
    node: &'p fx::Node,
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.node.name)
            .field("op", &self.node.op)
            .field("target", &self.node.target)
            .finish()
    }
}

impl<'p> Node<'p> {
    /// Its id in its graph (what an [`Arg::Node`] names).
    pub fn id(&self) -> NodeId {
        self.id
    }
    /// `node.name`.
    pub fn name(&self) -> &'p str {
        &self.node.name
    }
    /// `node.op`.
    pub fn op(&self) -> Op {
        self.node.op
    }
    /// `node.target`: the operator's qualified name
    /// (`torch.ops.aten.add.Tensor`, `operator.getitem`), a placeholder's
    /// or `get_attr`'s target.
    pub fn target(&self) -> &'p str {
        &self.node.target
    }
    /// `node.args`.
    pub fn args(&self) -> &'p [Arg] {
        &self.node.args
    }
    /// `node.kwargs`, in order.
    pub fn kwargs(&self) -> &'p [(String, Arg)] {
        &self.node.kwargs
    }
    /// The nodes its arguments name, in order (repeats kept).
    pub fn inputs(&self) -> impl Iterator<Item = Node<'p>> + 'p {
        let graph = self.graph;
        self.node
            .inputs()
            .into_iter()
            .filter_map(move |id| graph.node(id))
    }
    /// The nodes that use it.
    pub fn users(&self) -> impl Iterator<Item = Node<'p>> + 'p {
        let graph = self.graph;
        self.node
            .users()
            .iter()
            .filter_map(move |&id| graph.node(id))
    }
    /// The type of its value (`node.meta["val"]`): a tensor's dtype and
    /// dims, a symbolic int; `None` for nodes without one (`output`, an
    /// operator returning nothing or several values).
    pub fn value(&self) -> Option<ValueType> {
        let val = self.node.meta.val.as_deref()?;
        Some(self.graph.value_of(val))
    }
    /// The graph it is in.
    pub fn graph(&self) -> Graph<'p> {
        self.graph
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::Scalar;

    fn corpus(name: &str) -> Program {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(name);
        open(path).expect("corpus archive opens")
    }

    #[test]
    fn values_walk_views_as_to_vec_copies_them() {
        for name in [
            "corpus/weights/weights-shared-storage.pt2",
            "corpus/weights/weights-dtypes.pt2",
        ] {
            let p = corpus(name);
            let mut n = 0;
            for t in p.tensors().expect("tensors") {
                assert_eq!(t.values().count(), t.numel(), "{}", t.name());
                let mut streamed = Vec::new();
                t.for_each_chunk(|c| streamed.extend_from_slice(c)).unwrap();
                assert_eq!(
                    t.chunks().unwrap().collect::<Vec<_>>().concat(),
                    streamed,
                    "{}",
                    t.name()
                );
                if t.dtype() == Dtype::Float32 {
                    let copied: Vec<Scalar> = t
                        .to_vec::<f32>()
                        .expect("f32")
                        .into_iter()
                        .map(|x| Scalar::Float(f64::from(x)))
                        .collect();
                    // (As text: NaN is one of the values.)
                    assert_eq!(
                        format!("{:?}", t.values().collect::<Vec<_>>()),
                        format!("{copied:?}"),
                        "{}",
                        t.name()
                    );
                    let e = t.to_vec::<i32>().unwrap_err();
                    assert_eq!(e.kind(), ErrorKind::DtypeMismatch);
                    n += 1;
                }
                assert!(p.names().any(|m| m == t.name()));
            }
            assert!(n > 0, "{name}: no float32 tensor");
        }
    }

    #[test]
    fn a_program_json_has_no_tensors_and_every_node_a_type_or_none() {
        let p = corpus("corpus/programs/cond.pt2");
        let json = p.exported().to_json().expect("json");
        let q =
            Program::new(ExportedProgram::load_json(json.as_bytes(), wire::Mode::Default).unwrap());
        assert_eq!(q.names().count(), 0);
        assert_eq!(q.tensor("w").unwrap_err().kind(), ErrorKind::NotFound);
        for g in p.graphs() {
            for n in g.nodes() {
                if n.op() == Op::Placeholder {
                    assert!(n.value().is_some_and(|v| v != ValueType::Unknown), "{n:?}");
                }
            }
        }
    }
}
