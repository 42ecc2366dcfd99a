//! Model plans (`torchspec fuzz --live --programs`): a small DAG of torch
//! operations over typed, shaped values, which `oracle/plans.py` builds into
//! an `nn.Module`, exports and saves.
//!
//! The plan is all the choices: the Python side interprets it and decides
//! nothing. Shapes are tracked here on the example sizes (every dynamic
//! symbol has a size no other dim has, so two dims of equal size are equal
//! for export too), so every op of a plan is valid on its inputs; an op that
//! would specialize a dynamic dim (split, unbind, a static reshape) is only
//! drawn over static dims.
//!
//! Values are named: `x0` inputs, `p0` parameters, `b0` buffers, `c0` lifted
//! constants, `v3` the output of op 3 (`v3.1` its second output). Names are
//! stable when an op is removed, so shrinking removes an op and everything
//! that reads it.
//!
//! ```
//! use torchspec::live::plan::Plan;
//! let plan = Plan::generate(0, 7);
//! assert!(!plan.ops.is_empty() || !plan.outputs.refs.is_empty());
//! assert_eq!(Plan::generate(0, 7), plan); // (seed, index) alone decide it
//! ```

use serde::{Deserialize, Serialize};

/// A dtype a plan value can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Float32,
    Float64,
    Int64,
    Bool,
}

impl Dtype {
    fn is_float(self) -> bool {
        matches!(self, Dtype::Float32 | Dtype::Float64)
    }
}

/// One dim of a value: its size on the example inputs (`None`: unbacked, a
/// size only the data decides) and whether export sees it as symbolic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub example: Option<u64>,
    pub dynamic: bool,
}

impl Size {
    fn fixed(n: u64) -> Size {
        Size {
            example: Some(n),
            dynamic: false,
        }
    }
    fn is_static(self) -> bool {
        !self.dynamic && self.example.is_some()
    }
}

/// A dynamic symbol of the inputs, as `dynamic_shapes` spells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Symbol {
    /// `Dim(name, min=, max=)` (either bound may be left out).
    Dim {
        name: String,
        min: Option<u64>,
        max: Option<u64>,
    },
    /// `mul * of + add`, a derived dim of symbol `of`.
    Derived { of: usize, mul: u64, add: u64 },
    /// `Dim.AUTO`.
    Auto,
    /// `Dim.DYNAMIC`.
    Dynamic,
}

/// A tensor input: its name (in the forward's signature), shape, dtype, and
/// per dim the index of its symbol in [`Plan::symbols`] (`None`: static).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub shape: Vec<u64>,
    pub dtype: Dtype,
    pub dims: Vec<Option<usize>>,
}

/// A module tensor: a parameter, buffer or lifted constant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    pub shape: Vec<u64>,
    pub dtype: Dtype,
    /// Buffers only: registered with `persistent=`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub persistent: bool,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// One op: `op(*args, *ints)`, its outputs named `v{id}` (`v{id}.k`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    pub id: usize,
    pub op: String,
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ints: Vec<i64>,
}

/// An in-place update at the end of `forward`: buffer or user input
/// `target` gets `add_(src.mean())`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutation {
    pub target: String,
    pub src: String,
}

/// How the inputs reach `forward`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputLayout {
    /// `forward(self, x0, x1, ...)`.
    Args,
    /// `forward(self, xs)` with `xs = (x0, [x1, ...])`.
    Nested,
    /// `forward(self, d)` with `d = {"a": x0, "b": x1, ...}`.
    Dict,
    /// `forward(self, x0, *, x1=None, ...)`, the rest as kwargs.
    Kwargs,
}

/// How the outputs leave `forward`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputLayout {
    Single,
    Tuple,
    List,
    Dict,
    /// `(first, [rest...], {"n": None-or-constant})`.
    Nested,
}

/// The outputs: value names, their layout, and a `None` and a constant `3`
/// among them when asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outputs {
    pub layout: OutputLayout,
    pub refs: Vec<String>,
    #[serde(default)]
    pub none: bool,
    #[serde(default)]
    pub constant: bool,
}

/// A whole model plan: what `oracle/plans.py` builds, exports and saves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub inputs: Vec<Input>,
    pub symbols: Vec<Symbol>,
    pub layout: InputLayout,
    pub params: Vec<Tensor>,
    pub buffers: Vec<Tensor>,
    pub constants: Vec<Tensor>,
    pub ops: Vec<Op>,
    pub mutations: Vec<Mutation>,
    pub outputs: Outputs,
    /// `torch.export.export(strict=True)`.
    pub strict: bool,
    /// `ep.run_decompositions()` after export.
    pub decompose: bool,
}

/// The op families and their members (`oracle/plans.py` implements each).
pub const UNARY: &[&str] = &[
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "abs",
    "neg",
    "sin",
    "cos",
    "gelu",
    "silu",
    "softplus",
    "leaky_relu",
    "elu",
    "hardtanh",
    "hardswish",
    "mish",
    "logsigmoid",
    "erf",
    "floor",
    "ceil",
    "round",
    "sign",
    "square",
    "rsqrt1",
    "log1p_abs",
    "sqrt_abs",
    "clamp",
    "add_scalar",
    "mul_scalar",
    "rsub_scalar",
    "clone",
    "contiguous",
    "dropout",
    "double",
    "float",
];
/// Same shape, one dim argument.
pub const DIMWISE: &[&str] = &["softmax", "log_softmax", "cumsum", "flip", "roll"];
/// In place on an op's output.
pub const INPLACE: &[&str] = &["relu_", "add_", "mul_", "clamp_", "sigmoid_"];
/// Two operands of one shape (or the second broadcast).
pub const BINARY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "atan2",
    "where_gt",
    "lerp",
    "eq_float",
    "gt_float",
    "and_float",
    "copysign",
    "hypot",
];
/// Over one dim (ints: dim, keepdim).
pub const REDUCE: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "prod",
    "var",
    "std",
    "logsumexp",
    "norm",
    "argmax",
    "argmin",
    "any_float",
];
/// Over everything, to a 0-dim tensor.
pub const REDUCE_ALL: &[&str] = &["sum_all", "mean_all", "max_all"];
/// Views and reshapes.
pub const VIEW: &[&str] = &[
    "transpose",
    "permute_rev",
    "unsqueeze",
    "squeeze",
    "flatten",
    "flatten1",
    "reshape_last",
    "t",
    "narrow",
    "select",
    "slice_from1",
    "slice_step",
    "expand_as",
    "repeat",
    "getitem0",
];
/// Several outputs (ints: dim).
pub const MULTI: &[&str] = &[
    "split2", "chunk2", "unbind", "topk1", "sort", "max_dim", "min_dim", "var_mean", "std_mean",
    "aminmax", "cummax",
];
/// Ops with a module tensor or a shape rule of their own.
pub const SPECIAL: &[&str] = &[
    "linear",
    "matmul",
    "bmm",
    "addmm",
    "conv1d",
    "conv2d",
    "max_pool1d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "max_pool2d",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "embedding",
    "add_buffer",
    "add_constant",
    "cat",
    "stack",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "item_zeros",
    "size_full",
    "size_reshape",
    "new_ones_size",
    "cond",
    "map",
    "while_loop",
    "scan",
];

/// Every op name a plan may hold.
pub fn all_ops() -> Vec<&'static str> {
    [
        UNARY, DIMWISE, INPLACE, BINARY, REDUCE, REDUCE_ALL, VIEW, MULTI, SPECIAL,
    ]
    .concat()
}

/// SplitMix64: the plan's only source of choices.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next_u64();
        r
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// A value while a plan is built or replayed: its name, shape, dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Val {
    pub name: String,
    pub shape: Vec<Size>,
    pub dtype: Dtype,
    /// Whether an in-place op may write it (op outputs only).
    pub writable: bool,
}

impl Val {
    fn rank(&self) -> usize {
        self.shape.len()
    }
    fn same_shape(&self, other: &Val) -> bool {
        self.shape.len() == other.shape.len()
            && self
                .shape
                .iter()
                .zip(&other.shape)
                .all(|(a, b)| a.example.is_some() && a.example == b.example)
    }
    fn all_known(&self) -> bool {
        self.shape.iter().all(|s| s.example.is_some())
    }
}

mod build;
mod rules;
mod shrink;

pub use build::{generate_into, replay};
pub use rules::apply;

impl Plan {
    /// Plan `index` of `seed`.
    pub fn generate(seed: u64, index: u64) -> Plan {
        build::generate(&mut Rng::new(seed, index))
    }

    /// The plan as the oracle's request carries it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A short text for signatures and packets: op names in order.
    pub fn summary(&self) -> String {
        let ops: Vec<&str> = self.ops.iter().map(|o| o.op.as_str()).collect();
        format!(
            "{} inputs, {} ops [{}], {} outputs{}{}",
            self.inputs.len(),
            self.ops.len(),
            ops.join(" "),
            self.outputs.refs.len(),
            if self.strict { ", strict" } else { "" },
            if self.decompose { ", decomposed" } else { "" }
        )
    }
}
