//! Mirrors torch/_export/passes/add_runtime_assertions_for_constraints_pass.py
//! `_AddRuntimeAssertionsForInlineConstraintsPass`: for each unbacked symbol
//! a node's value is (or a tensor value's dim is) that no existing
//! `_assert_scalar` already bounds, insert `ge`/`le` → `scalar_tensor` →
//! `_assert_async.msg` after it, with PyTorch's message.

use std::collections::{HashMap, HashSet};

use super::PassError;
use crate::fx::{Arg, Graph, NodeId, Op};
use crate::model::LoadedGraphModule;
use crate::ranges::Bound;
use crate::schema as wire;
use num_bigint::BigInt;
use torchspec_pyval::Raise;

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
            wire::SymInt::AsExpr(e) => Some(e.expr_text().into_owned()),
            wire::SymInt::AsInt(_) | wire::SymInt::Raw(_) => None,
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

/// The graph of each module in `gm.modules()` order (the top graph, then
/// the submodules depth first in registration order), with the serialized
/// graph its nodes' values are named in.
fn module_graphs<'a>(
    gm: &'a mut LoadedGraphModule,
    values: &'a wire::Graph,
) -> Vec<(&'a mut Graph, &'a wire::Graph)> {
    fn subgraph<'w>(values: &'w wire::Graph, name: &str) -> Option<&'w wire::Graph> {
        values
            .nodes
            .iter()
            .flat_map(|n| &n.inputs)
            .find_map(|a| match &a.arg {
                wire::Argument::AsGraph(g) if g.name == name => Some(&g.graph),
                _ => None,
            })
    }
    fn walk<'a>(
        subs: &'a mut [crate::model::SubGraph],
        values: &'a wire::Graph,
        out: &mut Vec<(&'a mut Graph, &'a wire::Graph)>,
    ) {
        for s in subs {
            let v = subgraph(values, &s.name).unwrap_or(values);
            out.push((&mut s.graph, v));
            walk(&mut s.submodules, v, out);
        }
    }
    let mut out = vec![(&mut gm.graph, values)];
    walk(&mut gm.submodules, values, &mut out);
    out
}

/// The unbacked symbol each symbolic node of `graph` is.
fn node_symbols(graph: &Graph, values: &wire::Graph) -> HashMap<NodeId, String> {
    let mut node_sym = HashMap::new();
    for (id, n) in graph.nodes() {
        if let Some(v) = &n.meta.val {
            if let Some(s) = sym_expr(values, v).and_then(|e| unbacked_symbol(&e)) {
                node_sym.insert(id, s);
            }
        }
    }
    node_sym
}

pub(super) fn run(gm: &mut LoadedGraphModule, values: &wire::Graph) -> Result<bool, PassError> {
    let ranges = gm.range_constraints.clone();
    let mut graphs = module_graphs(gm, values);
    let mut existing = HashSet::new();
    for (g, v) in &graphs {
        existing.extend(self::existing(g, &node_symbols(g, v)));
    }
    let mut generated: HashSet<String> = HashSet::new();
    let mut counter = 0usize;
    for (graph, values) in graphs.iter_mut() {
        let cx = Seen {
            existing: &existing,
            ranges: &ranges,
        };
        assert_graph(graph, values, &cx, &mut generated, &mut counter)?;
    }
    Ok(counter > 0)
}

/// What every module's pass shares: the symbols asserted before it ran,
/// and the range constraints.
struct Seen<'a> {
    existing: &'a HashSet<String>,
    ranges: &'a crate::ranges::RangeConstraints,
}

/// The pass over one module's graph: `add_assertions(node.meta["val"])`
/// of each call_function node, then its callbacks.
fn assert_graph(
    graph: &mut Graph,
    values: &wire::Graph,
    cx: &Seen<'_>,
    generated: &mut HashSet<String>,
    counter: &mut usize,
) -> Result<(), PassError> {
    let node_sym = node_symbols(graph, values);
    let ids: Vec<NodeId> = graph.node_ids().to_vec();
    for id in ids {
        let node = graph.node(id);
        if node.op != Op::CallFunction {
            continue;
        }
        let Some(val) = node.meta.val.clone() else {
            continue;
        };
        let node_name = node.name.clone();
        for (dim, sym) in wanted_symbols(id, &val, &node_sym, values) {
            if cx.existing.contains(&sym) || generated.contains(&sym) {
                continue;
            }
            let Some(range) = cx.ranges.get(&sym) else {
                return Err(Raise::new("KeyError", sym));
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
                Some(i) => (
                    sym_size_node(graph, id, i),
                    format!(
                        "{node_name}.shape[{i}] is outside of inline constraint [{}, {}].",
                        lower.text(),
                        upper.text()
                    ),
                ),
            };
            *counter += assert_range_constraint(graph, target, &lower, &upper, &msg);
        }
    }
    Ok(())
}

/// The symbols `add_assertions(val)` asserts: the node's own (dim `None`),
/// or, for a tensor value, the unbacked symbol of each dim that is one.
fn wanted_symbols(
    id: NodeId,
    val: &str,
    node_sym: &HashMap<NodeId, String>,
    values: &wire::Graph,
) -> Vec<(Option<usize>, String)> {
    let mut wanted = Vec::new();
    if let Some(s) = node_sym.get(&id) {
        wanted.push((None, s.clone()));
    } else if let Some((_, t)) = values.tensor_values.iter().find(|(k, _)| *k == val) {
        for (i, size) in t.sizes.items().iter().enumerate() {
            if let wire::SymInt::AsExpr(e) = size {
                if let Some(s) = unbacked_symbol(&e.expr_text()) {
                    wanted.push((Some(i), s));
                }
            }
        }
    }
    wanted
}

/// `sym_size_cb`: `aten.sym_size.int(node, dim)`, inserted after the node.
fn sym_size_node(graph: &mut Graph, of: NodeId, dim: usize) -> NodeId {
    let size = graph.create_node_after(
        of,
        Op::CallFunction,
        "torch.ops.aten.sym_size.int",
        vec![Arg::Node(of), Arg::Int(dim as i64)],
        vec![],
        None,
    );
    // `create_size_node` copies `val.size(dim)` when the tensor has a val.
    graph.node_mut(size).meta.has_val = true;
    size
}

/// `_assert_range_constraint`: `target >= lower` unless `lower` is `-oo`,
/// then `target <= upper` unless `upper` is `oo`, each through
/// `_insert_assert_async`; the number of asserts inserted.
fn assert_range_constraint(
    graph: &mut Graph,
    target: NodeId,
    lower: &End,
    upper: &End,
    msg: &str,
) -> usize {
    let mut last = target;
    let mut inserted = 0;
    for (op, bound) in [("operator.ge", lower), ("operator.le", upper)] {
        let bound = match (op, bound) {
            ("operator.ge", End::NegInf) | ("operator.le", End::Inf) => continue,
            (_, End::Int(i)) => match i64::try_from(i.clone()) {
                Ok(v) => Arg::Int(v),
                Err(_) => Arg::BigInt(Box::new(i.clone())),
            },
            (_, End::Inf) => Arg::Float(f64::INFINITY),
            (_, End::NegInf) => Arg::Float(f64::NEG_INFINITY),
        };
        inserted += 1;
        last = insert_assert_async(graph, last, op, target, bound, msg);
    }
    inserted
}

/// `_insert_assert_async`: `op(target, bound)`, `aten.scalar_tensor` of it
/// and `aten._assert_async.msg`, inserted after `last`; the assert node.
fn insert_assert_async(
    graph: &mut Graph,
    last: NodeId,
    op: &str,
    target: NodeId,
    bound: Arg,
    msg: &str,
) -> NodeId {
    let cmp = graph.create_node_after(
        last,
        Op::CallFunction,
        op,
        vec![Arg::Node(target), bound],
        vec![],
        None,
    );
    let t = graph.create_node_after(
        cmp,
        Op::CallFunction,
        "torch.ops.aten.scalar_tensor.default",
        vec![Arg::Node(cmp)],
        vec![],
        None,
    );
    let assert = graph.create_node_after(
        t,
        Op::CallFunction,
        "torch.ops.aten._assert_async.msg",
        vec![Arg::Node(t), Arg::Str(msg.to_string())],
        vec![],
        None,
    );
    // `_assert_async.msg` returns nothing: the verifier accepts it.
    graph.node_mut(assert).meta.has_val = true;
    assert
}
