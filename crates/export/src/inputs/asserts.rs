//! The graph's runtime assertions on its inputs: the leading run of
//! `torch.ops.aten._assert_scalar.default` nodes of the top-level graph,
//! with the `aten.sym_size.int` and `operator.*` / `torch.sym_*` nodes that
//! feed them. A program exported with a ShapesSpec opens with them (a
//! spec's bounds, derived dims and assumptions:
//! `Runtime assertion failed for expression Eq(u1, 2*u0 + 1) on node
//! 'eq_1'`). `ep.module()` runs them after `_guards_fn` and before the
//! first kernel; they compute on the inputs' sizes and ints with Python
//! `int` semantics.
//!
//! The run ends at the first node that is none of these (a kernel), as the
//! oracle's pre-kernel marker does (`capture.py`'s `_is_input_assert_node`).
//! Nodes are evaluated in graph order; the first node this does not model
//! exactly makes the probe `unsupported` (Python might raise there).

use std::collections::HashMap;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use super::pyexpr::{EvalStop, GVal};
use crate::schema::{Argument, Graph, SymBoolArgument, SymIntArgument};
use torchspec_pyval::Raise;

const ASSERT: &str = "torch.ops.aten._assert_scalar.default";
const SYM_SIZE: &str = "torch.ops.aten.sym_size.int";
const SYM_FNS: [&str; 6] = [
    "torch.sym_not",
    "torch.sym_max",
    "torch.sym_min",
    "torch.sym_float",
    "torch.sym_int",
    "torch.sym_ite",
];

/// A value of the run: a Python `int` or `bool`.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Int(BigInt),
    Bool(bool),
}

/// An operand: a constant or the name of a node's output or of an input.
#[derive(Clone, Debug)]
enum Operand {
    Const(Val),
    Name(String),
}

#[derive(Clone, Debug)]
enum Step {
    /// `aten.sym_size.int(input, dim)`: `out` is the size.
    Size { out: String, input: usize, dim: i64 },
    /// `operator.OP(args...)` or `torch.sym_*`.
    Op {
        out: String,
        op: String,
        args: Vec<Operand>,
    },
    /// `_assert_scalar(cond, msg)`.
    Assert { cond: Operand, message: String },
    /// A node of the run this does not model.
    Unsupported(String),
}

/// The leading assertion run of one program, built once.
#[derive(Clone, Debug, Default)]
pub struct InputAsserts {
    steps: Vec<Step>,
    /// Input placeholder names -> their index among the unlifted module's
    /// placeholders.
    inputs: Vec<(String, usize)>,
}

/// Is `target` a node of the assertion run (as capture.py's marker skips)?
fn in_run(target: &str) -> bool {
    target == ASSERT
        || target == SYM_SIZE
        || target.starts_with("_operator.")
        || target.starts_with("operator.")
        || SYM_FNS.contains(&target)
}

fn operand(arg: &Argument) -> Result<Operand, String> {
    Ok(match arg {
        Argument::AsInt(i) => Operand::Const(Val::Int(i.to_bigint())),
        Argument::AsBool(b) => Operand::Const(Val::Bool(*b)),
        Argument::AsSymInt(SymIntArgument::AsInt(i)) => Operand::Const(Val::Int(i.to_bigint())),
        Argument::AsSymInt(SymIntArgument::AsName(n)) => Operand::Name(n.clone()),
        Argument::AsSymBool(SymBoolArgument::AsBool(b)) => Operand::Const(Val::Bool(*b)),
        Argument::AsSymBool(SymBoolArgument::AsName(n)) => Operand::Name(n.clone()),
        other => return Err(format!("an argument of kind `{}`", other.tag())),
    })
}

fn out_name(outputs: &[Argument]) -> Result<String, String> {
    match outputs {
        [Argument::AsSymInt(SymIntArgument::AsName(n))]
        | [Argument::AsSymBool(SymBoolArgument::AsName(n))] => Ok(n.clone()),
        _ => Err("a node whose output is not one named SymInt or SymBool".into()),
    }
}

impl InputAsserts {
    /// The run of `graph`; `inputs` names the unlifted module's placeholders
    /// (tensor and sym-int names) with their index.
    pub fn new(graph: &Graph, inputs: Vec<(String, usize)>) -> InputAsserts {
        let mut steps = Vec::new();
        for node in &graph.nodes {
            if !in_run(&node.target) {
                break;
            }
            let step = (|| -> Result<Step, String> {
                let args = &node.inputs;
                if node.target == ASSERT {
                    let (Some(cond), Some(Argument::AsString(message))) =
                        (args.first(), args.get(1).map(|a| &a.arg))
                    else {
                        return Err("an _assert_scalar node without (cond, message)".into());
                    };
                    return Ok(Step::Assert {
                        cond: operand(&cond.arg)?,
                        message: message.clone(),
                    });
                }
                let out = out_name(&node.outputs)?;
                if node.target == SYM_SIZE {
                    let (Some(Argument::AsTensor(t)), Some(Argument::AsInt(d)), 2) = (
                        args.first().map(|a| &a.arg),
                        args.get(1).map(|a| &a.arg),
                        args.len(),
                    ) else {
                        return Err("a sym_size.int node not on (tensor, int)".into());
                    };
                    let Some(&(_, input)) = inputs.iter().find(|(n, _)| *n == t.name) else {
                        return Err(format!("sym_size.int of `{}`, not a user input", t.name));
                    };
                    let dim = d
                        .to_bigint()
                        .to_i64()
                        .ok_or("a sym_size.int dim out of range")?;
                    return Ok(Step::Size { out, input, dim });
                }
                let op = node
                    .target
                    .rsplit('.')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let args = args
                    .iter()
                    .map(|a| operand(&a.arg))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Step::Op { out, op, args })
            })();
            steps.push(step.unwrap_or_else(|w| Step::Unsupported(format!("{}: {w}", node.target))));
        }
        // Nothing to run without an assert.
        let last_assert = steps
            .iter()
            .rposition(|s| matches!(s, Step::Assert { .. }))
            .map_or(0, |i| i + 1);
        steps.truncate(last_assert);
        InputAsserts { steps, inputs }
    }

    /// No assertion to run.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Runs the steps on the placeholders' values (`args`, in placeholder
    /// order): `RuntimeError` with the first failing assert's message.
    pub fn check(&self, args: &[GVal]) -> Result<(), EvalStop> {
        let mut env: HashMap<&str, Val> = HashMap::new();
        let unsupported = |w: String| Raise::Unsupported(format!("runtime assertions: {w}"));
        for step in &self.steps {
            match step {
                Step::Unsupported(w) => return Err(unsupported(w.clone())),
                Step::Size { out, input, dim } => {
                    let Some(GVal::Tensor(shape)) = args.get(*input) else {
                        return Err(unsupported("sym_size.int of a non-tensor input".into()));
                    };
                    let rank = shape.len() as i64;
                    let d = if *dim < 0 { dim + rank } else { *dim };
                    if d < 0 || d >= rank {
                        return Err(unsupported("sym_size.int past the input's rank".into()));
                    }
                    env.insert(out, Val::Int(BigInt::from(shape[d as usize])));
                }
                Step::Op { out, op, args: ops } => {
                    let vals = ops
                        .iter()
                        .map(|o| self.value(o, &env, args))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(unsupported)?;
                    let v = apply(op, &vals).map_err(unsupported)?;
                    env.insert(out, v);
                }
                Step::Assert { cond, message } => {
                    let ok = match self.value(cond, &env, args).map_err(unsupported)? {
                        Val::Bool(b) => b,
                        Val::Int(i) => !i.is_zero(),
                    };
                    if !ok {
                        return Err(Raise::new("RuntimeError", message.clone()));
                    }
                }
            }
        }
        Ok(())
    }

    fn value(&self, o: &Operand, env: &HashMap<&str, Val>, args: &[GVal]) -> Result<Val, String> {
        match o {
            Operand::Const(v) => Ok(v.clone()),
            Operand::Name(n) => {
                if let Some(v) = env.get(n.as_str()) {
                    return Ok(v.clone());
                }
                let Some(&(_, i)) = self.inputs.iter().find(|(name, _)| name == n) else {
                    return Err(format!("an operand `{n}` computed outside the run"));
                };
                match args.get(i) {
                    Some(GVal::Int(v)) => Ok(Val::Int(v.clone())),
                    _ => Err(format!("the input `{n}` is not an int")),
                }
            }
        }
    }
}

/// `operator.OP` / `torch.sym_OP` on Python ints and bools, where exact.
fn apply(op: &str, vals: &[Val]) -> Result<Val, String> {
    use Val::{Bool, Int};
    let unsupported = || {
        let kinds: Vec<&str> = vals
            .iter()
            .map(|v| match v {
                Int(_) => "int",
                Bool(_) => "bool",
            })
            .collect();
        Err(format!("`{op}` on ({})", kinds.join(", ")))
    };
    Ok(match (op, vals) {
        ("add", [Int(a), Int(b)]) => Int(a + b),
        ("sub", [Int(a), Int(b)]) => Int(a - b),
        ("mul", [Int(a), Int(b)]) => Int(a * b),
        ("floordiv", [Int(a), Int(b)]) if !b.is_zero() => Int(a.div_floor(b)),
        ("mod", [Int(a), Int(b)]) if !b.is_zero() => Int(a.mod_floor(b)),
        ("neg", [Int(a)]) => Int(-a),
        ("pos", [Int(a)]) => Int(a.clone()),
        ("abs", [Int(a)]) => Int(a.abs()),
        ("eq", [a, b]) if same_kind(a, b) => Bool(a == b),
        ("ne", [a, b]) if same_kind(a, b) => Bool(a != b),
        ("lt", [Int(a), Int(b)]) => Bool(a < b),
        ("le", [Int(a), Int(b)]) => Bool(a <= b),
        ("gt", [Int(a), Int(b)]) => Bool(a > b),
        ("ge", [Int(a), Int(b)]) => Bool(a >= b),
        ("and_", [Bool(a), Bool(b)]) => Bool(*a && *b),
        ("or_", [Bool(a), Bool(b)]) => Bool(*a || *b),
        ("not_" | "sym_not", [Bool(a)]) => Bool(!a),
        ("sym_max", [Int(a), Int(b)]) => Int(a.max(b).clone()),
        ("sym_min", [Int(a), Int(b)]) => Int(a.min(b).clone()),
        _ => return unsupported(),
    })
}

fn same_kind(a: &Val, b: &Val) -> bool {
    matches!(
        (a, b),
        (Val::Int(_), Val::Int(_)) | (Val::Bool(_), Val::Bool(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> Val {
        Val::Int(BigInt::from(v))
    }

    #[test]
    fn python_int_semantics() {
        assert_eq!(apply("floordiv", &[i(-7), i(2)]), Ok(i(-4)));
        assert_eq!(apply("mod", &[i(-7), i(2)]), Ok(i(1)));
        assert_eq!(apply("mod", &[i(7), i(-2)]), Ok(i(-1)));
        assert!(apply("floordiv", &[i(1), i(0)]).is_err());
        assert_eq!(apply("ge", &[i(1), i(2)]), Ok(Val::Bool(false)));
        assert!(apply("truediv", &[i(1), i(2)]).is_err());
    }
}
