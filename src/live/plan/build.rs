//! Drawing a plan from an [`Rng`], and replaying one (checking every op on
//! its arguments' shapes) for shrinking.

use std::collections::{BTreeMap, BTreeSet};

use super::rules::apply;
use super::{
    Dtype, Input, InputLayout, Mutation, Op, OutputLayout, Outputs, Plan, Rng, Size, Symbol,
    Tensor, Val, BINARY, DIMWISE, INPLACE, MULTI, REDUCE, REDUCE_ALL, SPECIAL, UNARY, VIEW,
};

/// Static example sizes; a dynamic symbol's is one of `SYMBOL_SIZES` that
/// no other symbol has, so equal sizes mean equal dims.
const STATIC_SIZES: &[u64] = &[1, 2, 3, 4, 6, 8];
const SYMBOL_SIZES: &[u64] = &[5, 7, 9, 11, 13, 10, 12, 14, 15, 17];

/// A plan being drawn: the plan so far and the values it defines.
struct Draft {
    plan: Plan,
    vals: Vec<Val>,
    /// Example size of each symbol.
    sizes: Vec<u64>,
}

pub(super) fn generate(rng: &mut Rng) -> Plan {
    let mut d = Draft {
        plan: Plan {
            inputs: Vec::new(),
            symbols: Vec::new(),
            layout: *rng.pick(&[
                InputLayout::Args,
                InputLayout::Args,
                InputLayout::Nested,
                InputLayout::Dict,
                InputLayout::Kwargs,
            ]),
            params: Vec::new(),
            buffers: Vec::new(),
            constants: Vec::new(),
            ops: Vec::new(),
            mutations: Vec::new(),
            outputs: Outputs {
                layout: OutputLayout::Single,
                refs: Vec::new(),
                none: false,
                constant: false,
            },
            strict: rng.chance(20),
            decompose: rng.chance(30),
        },
        vals: Vec::new(),
        sizes: Vec::new(),
    };
    for _ in 0..1 + rng.below(3) {
        add_input(&mut d, rng);
    }
    generate_into(&mut d.plan, &mut d.vals, rng);
    d.plan
}

fn add_input(d: &mut Draft, rng: &mut Rng) {
    let rank = *rng.pick(&[1, 2, 2, 3, 3, 3, 4]);
    let dtype = *rng.pick(&[
        Dtype::Float32,
        Dtype::Float32,
        Dtype::Float32,
        Dtype::Float32,
        Dtype::Float32,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Int64,
    ]);
    let mut input = Input {
        shape: Vec::new(),
        dtype,
        dims: Vec::new(),
    };
    for _ in 0..rank {
        let (n, sym) = if rng.chance(35) {
            dynamic_dim(d, rng)
        } else {
            (*rng.pick(STATIC_SIZES), None)
        };
        input.shape.push(n);
        input.dims.push(sym);
    }
    d.vals.push(input_val(d.plan.inputs.len(), &input));
    d.plan.inputs.push(input);
}

/// A dynamic dim: an existing symbol, a new one, or one derived from one.
fn dynamic_dim(d: &mut Draft, rng: &mut Rng) -> (u64, Option<usize>) {
    let roots: Vec<usize> = (0..d.plan.symbols.len())
        .filter(|&s| matches!(d.plan.symbols[s], Symbol::Dim { .. }))
        .collect();
    if !d.plan.symbols.is_empty() && rng.chance(30) {
        let s = rng.below(d.plan.symbols.len());
        // Dim.AUTO and Dim.DYNAMIC are one per use.
        if !matches!(d.plan.symbols[s], Symbol::Auto | Symbol::Dynamic) {
            return (d.sizes[s], Some(s));
        }
    }
    if !roots.is_empty() && rng.chance(25) {
        let of = *rng.pick(&roots);
        let (mul, add) = *rng.pick(&[(2, 0), (1, 1), (2, 1), (3, 0)]);
        let n = mul * d.sizes[of] + add;
        if !d.sizes.contains(&n) && !STATIC_SIZES.contains(&n) {
            return (n, Some(push_symbol(d, Symbol::Derived { of, mul, add }, n)));
        }
    }
    let Some(&n) = SYMBOL_SIZES.iter().find(|n| !d.sizes.contains(n)) else {
        return (*rng.pick(STATIC_SIZES), None);
    };
    let symbol = match rng.below(10) {
        0 => Symbol::Auto,
        1 => Symbol::Dynamic,
        k => {
            let name = format!("s{}", d.plan.symbols.len());
            Symbol::Dim {
                name,
                min: (k % 3 != 0).then_some(2),
                max: (k % 2 == 0).then_some(64),
            }
        }
    };
    (n, Some(push_symbol(d, symbol, n)))
}

fn push_symbol(d: &mut Draft, symbol: Symbol, n: u64) -> usize {
    d.plan.symbols.push(symbol);
    d.sizes.push(n);
    d.plan.symbols.len() - 1
}

/// Draw the ops, mutations and outputs of `plan` over `vals` (its inputs).
pub fn generate_into(plan: &mut Plan, vals: &mut Vec<Val>, rng: &mut Rng) {
    let n_ops = 1 + rng.below(8);
    for id in 0..n_ops {
        for _ in 0..30 {
            if let Some(outs) = try_op(plan, vals, id, rng) {
                vals.extend(outs);
                break;
            }
        }
    }
    mutations(plan, vals, rng);
    outputs(plan, vals, rng);
}

fn family(rng: &mut Rng) -> &'static [&'static str] {
    let families: [(&[&str], usize); 9] = [
        (UNARY, 20),
        (DIMWISE, 6),
        (INPLACE, 5),
        (BINARY, 14),
        (REDUCE, 10),
        (REDUCE_ALL, 3),
        (VIEW, 14),
        (MULTI, 8),
        (SPECIAL, 20),
    ];
    let total: usize = families.iter().map(|f| f.1).sum();
    let mut k = rng.below(total);
    for (f, w) in families {
        if k < w {
            return f;
        }
        k -= w;
    }
    UNARY
}

/// One attempt at op `id`: an op, its arguments (creating the module
/// tensors it needs) and its outputs, or `None` (nothing added).
fn try_op(plan: &mut Plan, vals: &[Val], id: usize, rng: &mut Rng) -> Option<Vec<Val>> {
    let fam = family(rng);
    let op = *rng.pick(fam);
    // Lean on recent values: a chain is more interesting than a fan.
    let pick = |rng: &mut Rng| {
        if rng.chance(60) {
            &vals[vals.len() - 1 - rng.below(vals.len().min(3))]
        } else {
            &vals[rng.below(vals.len())]
        }
    };
    let a = pick(rng).clone();
    let r = a.shape.len() as i64;
    let d = if r > 0 {
        rng.below(r as usize) as i64
    } else {
        0
    };
    let mut ints = Vec::new();
    let mut args = vec![a.clone()];
    let mut new = Module::default();
    match op {
        _ if DIMWISE.contains(&op) || MULTI.contains(&op) => ints.push(d),
        _ if REDUCE.contains(&op) => ints.extend([d, rng.below(2) as i64]),
        "transpose" => ints.extend([d, rng.below(r.max(1) as usize) as i64]),
        "unsqueeze" | "stack" => ints.push(rng.below(r as usize + 1) as i64),
        "squeeze" | "narrow" | "select" | "slice_from1" | "slice_step" | "cat" | "index_select"
        | "size_full" | "new_ones_size" => ints.push(d),
        _ => {}
    }
    match op {
        _ if BINARY.contains(&op) || op == "cat" || op == "stack" || op == "expand_as" => {
            let partner = vals
                .iter()
                .filter(|v| v.dtype == a.dtype)
                .filter(|v| rng.chance(50) || v.same_shape(&a))
                .last()
                .unwrap_or(&a)
                .clone();
            args.push(partner);
        }
        _ => module_args(op, &a, plan, rng, &mut new, &mut args)?,
    }
    let refs: Vec<&Val> = args.iter().collect();
    let outs = apply(op, id, &refs, &ints)?;
    new.commit(plan);
    plan.ops.push(Op {
        id,
        op: op.to_string(),
        args: args.iter().map(|v| v.name.clone()).collect(),
        ints,
    });
    Some(outs)
}

/// Module tensors an attempt creates (added to the plan only if it holds).
#[derive(Default)]
struct Module {
    params: Vec<Tensor>,
    buffers: Vec<Tensor>,
    constants: Vec<Tensor>,
}

impl Module {
    fn commit(self, plan: &mut Plan) {
        plan.params.extend(self.params);
        plan.buffers.extend(self.buffers);
        plan.constants.extend(self.constants);
    }
    fn tensor(&mut self, plan: &Plan, kind: char, shape: Vec<u64>, dtype: Dtype) -> Val {
        let t = Tensor {
            shape: shape.clone(),
            dtype,
            persistent: true,
        };
        let (list, base) = match kind {
            'p' => (&mut self.params, plan.params.len()),
            'b' => (&mut self.buffers, plan.buffers.len()),
            _ => (&mut self.constants, plan.constants.len()),
        };
        list.push(t);
        Val {
            name: format!("{kind}{}", base + list.len() - 1),
            shape: shape.into_iter().map(Size::fixed).collect(),
            dtype,
            writable: false,
        }
    }
}

fn module_args(
    op: &str,
    a: &Val,
    plan: &Plan,
    rng: &mut Rng,
    new: &mut Module,
    args: &mut Vec<Val>,
) -> Option<()> {
    let last = a
        .shape
        .last()
        .and_then(|s| (!s.dynamic).then_some(s.example?));
    let ch = a
        .shape
        .get(1)
        .and_then(|s| (!s.dynamic).then_some(s.example?));
    let out = *rng.pick(&[2u64, 3, 4, 6]);
    let dt = a.dtype;
    match op {
        "linear" => {
            args.push(new.tensor(plan, 'p', vec![out, last?], dt));
            if rng.chance(50) {
                args.push(new.tensor(plan, 'p', vec![out], dt));
            }
        }
        "matmul" => args.push(new.tensor(plan, 'p', vec![last?, out], dt)),
        "bmm" => {
            let b = a.shape.first()?.example?;
            args.push(new.tensor(plan, 'p', vec![b, last?, out], dt));
        }
        "addmm" => {
            args.push(new.tensor(plan, 'p', vec![last?, out], dt));
            args.push(new.tensor(plan, 'p', vec![out], dt));
        }
        "conv1d" => args.push(new.tensor(plan, 'p', vec![out, ch?, 3], dt)),
        "conv2d" => args.push(new.tensor(plan, 'p', vec![out, ch?, 3, 3], dt)),
        "layer_norm" => {
            args.push(new.tensor(plan, 'p', vec![last?], dt));
            args.push(new.tensor(plan, 'p', vec![last?], dt));
        }
        "group_norm" => {
            args.push(new.tensor(plan, 'p', vec![ch?], dt));
            args.push(new.tensor(plan, 'p', vec![ch?], dt));
        }
        "batch_norm" => {
            args.push(new.tensor(plan, 'b', vec![ch?], dt));
            args.push(new.tensor(plan, 'b', vec![ch?], dt));
        }
        "embedding" => args.push(new.tensor(plan, 'p', vec![6, out], Dtype::Float32)),
        "add_buffer" => {
            let mut b = new.tensor(plan, 'b', vec![last.unwrap_or(1)], dt);
            if last.is_none() {
                b.shape.clear();
                new.buffers.last_mut()?.shape.clear();
            }
            new.buffers.last_mut()?.persistent = rng.chance(60);
            args.push(b);
        }
        "add_constant" => {
            let mut c = new.tensor(plan, 'c', vec![last.unwrap_or(1)], dt);
            if last.is_none() {
                c.shape.clear();
                new.constants.last_mut()?.shape.clear();
            }
            args.push(c);
        }
        _ => {}
    }
    Some(())
}

fn mutations(plan: &mut Plan, vals: &[Val], rng: &mut Rng) {
    let floats: Vec<&Val> = vals.iter().filter(|v| v.dtype.is_float()).collect();
    if floats.is_empty() {
        return;
    }
    let src = rng.pick(&floats).name.clone();
    if rng.chance(15) {
        let target = match plan.buffers.iter().position(|b| b.persistent) {
            Some(k) if rng.chance(50) => format!("b{k}"),
            _ => {
                plan.buffers.push(Tensor {
                    shape: vec![2],
                    dtype: Dtype::Float32,
                    persistent: true,
                });
                format!("b{}", plan.buffers.len() - 1)
            }
        };
        plan.mutations.push(Mutation {
            target,
            src: src.clone(),
        });
    }
    let inputs: Vec<usize> = (0..plan.inputs.len())
        .filter(|&k| plan.inputs[k].dtype.is_float())
        .collect();
    if !inputs.is_empty() && rng.chance(10) {
        plan.mutations.push(Mutation {
            target: format!("x{}", rng.pick(&inputs)),
            src,
        });
    }
}

fn outputs(plan: &mut Plan, vals: &[Val], rng: &mut Rng) {
    let n = 1 + rng.below(3);
    let mut refs = BTreeSet::new();
    if let Some(last) = vals.last() {
        refs.insert(last.name.clone());
    }
    for _ in 1..n {
        refs.insert(rng.pick(vals).name.clone());
    }
    plan.outputs = Outputs {
        layout: *rng.pick(&[
            OutputLayout::Single,
            OutputLayout::Tuple,
            OutputLayout::Tuple,
            OutputLayout::List,
            OutputLayout::Dict,
            OutputLayout::Nested,
        ]),
        refs: refs.into_iter().collect(),
        none: rng.chance(15),
        constant: rng.chance(10),
    };
    if plan.outputs.layout == OutputLayout::Single && plan.outputs.refs.len() > 1 {
        plan.outputs.layout = OutputLayout::Tuple;
    }
}

/// Input `k` as a value: its example sizes, dynamic where it has a symbol.
fn input_val(k: usize, x: &Input) -> Val {
    Val {
        name: format!("x{k}"),
        shape: x
            .shape
            .iter()
            .zip(&x.dims)
            .map(|(&n, s)| Size {
                example: Some(n),
                dynamic: s.is_some(),
            })
            .collect(),
        dtype: x.dtype,
        writable: false,
    }
}

/// The values `plan` defines, every op checked on its arguments: `Err`
/// names the first op that is not valid (or reads an unknown value).
pub fn replay(plan: &Plan) -> Result<Vec<Val>, String> {
    let mut env: BTreeMap<String, Val> = BTreeMap::new();
    let mut order = Vec::new();
    let mut put = |env: &mut BTreeMap<String, Val>, v: Val| {
        order.push(v.name.clone());
        env.insert(v.name.clone(), v);
    };
    for (k, x) in plan.inputs.iter().enumerate() {
        put(&mut env, input_val(k, x));
    }
    for (kind, list) in [
        ('p', &plan.params),
        ('b', &plan.buffers),
        ('c', &plan.constants),
    ] {
        for (k, t) in list.iter().enumerate() {
            let v = Val {
                name: format!("{kind}{k}"),
                shape: t.shape.iter().map(|&n| Size::fixed(n)).collect(),
                dtype: t.dtype,
                writable: false,
            };
            put(&mut env, v);
        }
    }
    for op in &plan.ops {
        let args: Vec<&Val> = op
            .args
            .iter()
            .map(|a| {
                env.get(a)
                    .ok_or_else(|| format!("op {} reads unknown `{a}`", op.id))
            })
            .collect::<Result<_, _>>()?;
        let outs = apply(&op.op, op.id, &args, &op.ints)
            .ok_or_else(|| format!("op {} (`{}`) is not valid on its arguments", op.id, op.op))?;
        for v in outs {
            put(&mut env, v);
        }
    }
    for name in plan
        .outputs
        .refs
        .iter()
        .chain(plan.mutations.iter().flat_map(|m| [&m.target, &m.src]))
    {
        env.get(name)
            .ok_or_else(|| format!("`{name}` is not defined"))?;
    }
    Ok(order.into_iter().filter_map(|n| env.remove(&n)).collect())
}
