//! Mirrors torch/_export/passes/add_runtime_assertions_for_constraints_pass.py
//! `_AddRuntimeAssertionsForInlineConstraintsPass`: for each unbacked symbol
//! a node's value is (or a tensor value's dim is) that no existing
//! `_assert_scalar` already bounds, insert `ge`/`le` → `scalar_tensor` →
//! `_assert_async.msg` after it, with PyTorch's message.

use std::collections::{HashMap, HashSet};

use super::PassError;
use crate::fx::{Arg, Graph, NodeId, Op};
use crate::load::LoadedGraphModule;
use crate::ranges::Bound;
use crate::schema as wire;
use num_bigint::BigInt;

/// A bound as `_convert_to_int` makes it: an int or ±inf.
#[derive(Clone, Debug, PartialEq)]
enum End {
    Int(BigInt),
    Inf,
    NegInf,
}

impl End {
    fn text(&self) -> String {
        match self {
            End::Int(i) => i.to_string(),
            End::Inf => "inf".into(),
            End::NegInf => "-inf".into(),
        }
    }
}

fn end(b: &Bound) -> End {
    match b {
        Bound::Int(i) => End::Int(i.clone()),
        Bound::IntOo => End::Inf,
        Bound::NegIntOo => End::NegInf,
    }
}

/// `free_unbacked_symbols` of a plain symbol: `u…` ints and `zuf…` floats.
fn unbacked_symbol(srepr: &str) -> Option<String> {
    let name = crate::srepr::bare_symbol(srepr)?;
    let unbacked = name
        .strip_prefix('u')
        .or_else(|| name.strip_prefix("zuf"))
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    unbacked.then_some(name)
}

fn sym_expr(values: &wire::Graph, name: &str) -> Option<String> {
    values
        .sym_int_values
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| match v {
            wire::SymInt::AsExpr(e) => Some(e.expr_str.clone()),
            wire::SymInt::AsInt(_) => None,
        })
}

/// `_get_existing_inline_assertions`: symbols already bounded by an
/// `_assert_scalar(sym >= c)` / `(sym <= c)`.
fn existing(graph: &Graph, node_sym: &HashMap<NodeId, String>) -> HashSet<String> {
    let mut out = HashSet::new();
    for (_, n) in graph.nodes() {
        if !n.is_call_to("torch.ops.aten._assert_scalar.default") {
            continue;
        }
        let Some(Arg::Node(cmp)) = n.args.first() else {
            continue;
        };
        let c = graph.node(*cmp);
        if !(c.is_call_to("operator.le") || c.is_call_to("operator.ge")) || c.args.len() != 2 {
            continue;
        }
        let side = |a: &Arg| match a {
            Arg::Node(id) => node_sym.get(id).cloned().map(Ok),
            Arg::Int(_) | Arg::BigInt(_) => Some(Err(())),
            _ => None,
        };
        match (side(&c.args[0]), side(&c.args[1])) {
            (Some(Ok(s)), Some(Err(()))) | (Some(Err(())), Some(Ok(s))) => {
                out.insert(s);
            }
            _ => {}
        }
    }
    out
}

pub(super) fn run(gm: &mut LoadedGraphModule, values: &wire::Graph) -> Result<bool, PassError> {
    // The unbacked symbol each symbolic node is.
    let mut node_sym: HashMap<NodeId, String> = HashMap::new();
    for (id, n) in gm.graph.nodes() {
        if let Some(v) = &n.meta.val {
            if let Some(s) = sym_expr(values, v).and_then(|e| unbacked_symbol(&e)) {
                node_sym.insert(id, s);
            }
        }
    }
    let existing = existing(&gm.graph, &node_sym);
    let mut generated: HashSet<String> = HashSet::new();
    let mut counter = 0usize;
    let ids: Vec<NodeId> = gm.graph.node_ids().to_vec();
    for id in ids {
        let node = gm.graph.node(id);
        if node.op != Op::CallFunction {
            continue;
        }
        let Some(val) = node.meta.val.clone() else {
            continue;
        };
        let node_name = node.name.clone();
        // (dim, symbol) pairs needing a check: the node itself (dim None)
        // or each dim of its tensor value.
        let mut wanted: Vec<(Option<usize>, String)> = Vec::new();
        if let Some(s) = node_sym.get(&id) {
            wanted.push((None, s.clone()));
        } else if let Some((_, t)) = values.tensor_values.iter().find(|(k, _)| *k == val) {
            for (i, size) in t.sizes.iter().enumerate() {
                if let wire::SymInt::AsExpr(e) = size {
                    if let Some(s) = unbacked_symbol(&e.expr_str) {
                        wanted.push((Some(i), s));
                    }
                }
            }
        }
        for (dim, sym) in wanted {
            if existing.contains(&sym) || generated.contains(&sym) {
                continue;
            }
            let Some(range) = gm.range_constraints.get(&sym) else {
                return Err(PassError::Python(torchspec_pyval::PyException {
                    type_name: "KeyError".into(),
                    message: sym,
                }));
            };
            let (lower, upper) = (end(&range.lower), end(&range.upper));
            generated.insert(sym);
            let (target, msg) = match dim {
                None => (
                    id,
                    format!(
                        "{node_name} is outside of inline constraint [{}, {}].",
                        lower.text(),
                        upper.text()
                    ),
                ),
                Some(i) => {
                    let size = gm.graph.create_node_after(
                        id,
                        Op::CallFunction,
                        "torch.ops.aten.sym_size.int",
                        vec![Arg::Node(id), Arg::Int(i as i64)],
                        vec![],
                        None,
                    );
                    // `create_size_node` copies `val.size(dim)` when the tensor has a val.
                    gm.graph.node_mut(size).meta.has_val = true;
                    (
                        size,
                        format!(
                            "{node_name}.shape[{i}] is outside of inline constraint [{}, {}].",
                            lower.text(),
                            upper.text()
                        ),
                    )
                }
            };
            let mut last = target;
            for (op, bound) in [("operator.ge", &lower), ("operator.le", &upper)] {
                let bound = match (op, bound) {
                    ("operator.ge", End::NegInf) | ("operator.le", End::Inf) => continue,
                    (_, End::Int(i)) => match i64::try_from(i.clone()) {
                        Ok(v) => Arg::Int(v),
                        Err(_) => Arg::BigInt(Box::new(i.clone())),
                    },
                    (_, End::Inf) => Arg::Float(f64::INFINITY),
                    (_, End::NegInf) => Arg::Float(f64::NEG_INFINITY),
                };
                counter += 1;
                let cmp = gm.graph.create_node_after(
                    last,
                    Op::CallFunction,
                    op,
                    vec![Arg::Node(target), bound],
                    vec![],
                    None,
                );
                let t = gm.graph.create_node_after(
                    cmp,
                    Op::CallFunction,
                    "torch.ops.aten.scalar_tensor.default",
                    vec![Arg::Node(cmp)],
                    vec![],
                    None,
                );
                last = gm.graph.create_node_after(
                    t,
                    Op::CallFunction,
                    "torch.ops.aten._assert_async.msg",
                    vec![Arg::Node(t), Arg::Str(msg.clone())],
                    vec![],
                    None,
                );
                // `_assert_async.msg` returns nothing: the verifier accepts it.
                gm.graph.node_mut(last).meta.has_val = true;
            }
        }
    }
    Ok(counter > 0)
}
