//! What each op makes of its arguments' shapes: the output values, or
//! `None` when the op is not valid on them (or would specialize a dynamic
//! dim). `oracle/plans.py` implements the same ops; the two agree on every
//! shape by construction, and a plan PyTorch cannot run counts apart.

use super::{Dtype, Size, Val, BINARY, DIMWISE, INPLACE, MULTI, REDUCE, REDUCE_ALL, UNARY};

/// The outputs of `op` on `args` with int arguments `ints`, named
/// `v{id}` (one output) or `v{id}.k`.
pub fn apply(op: &str, id: usize, args: &[&Val], ints: &[i64]) -> Option<Vec<Val>> {
    let outs = shapes(op, args, ints)?;
    // A tuple-returning op names its outputs `.k` even when it has one.
    let n = if MULTI.contains(&op) || op == "scan" {
        usize::MAX
    } else {
        outs.len()
    };
    Some(
        outs.into_iter()
            .enumerate()
            .map(|(k, (shape, dtype))| Val {
                name: if n == 1 {
                    format!("v{id}")
                } else {
                    format!("v{id}.{k}")
                },
                shape,
                dtype,
                writable: true,
            })
            .collect(),
    )
}

type Out = Vec<(Vec<Size>, Dtype)>;

fn one(shape: Vec<Size>, dtype: Dtype) -> Option<Out> {
    Some(vec![(shape, dtype)])
}

/// `d` as a dim of a rank-`rank` value.
fn dim(ints: &[i64], k: usize, rank: usize) -> Option<usize> {
    let d = *ints.get(k)?;
    (d >= 0 && (d as usize) < rank).then_some(d as usize)
}

fn known(s: Size) -> Option<u64> {
    s.example
}

fn shapes(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = *args.first()?;
    if UNARY.contains(&op) {
        return unary(op, a);
    }
    if DIMWISE.contains(&op) {
        (a.dtype.is_float() && args.len() == 1).then_some(())?;
        dim(ints, 0, a.rank())?;
        return one(a.shape.clone(), a.dtype);
    }
    if INPLACE.contains(&op) {
        (a.dtype.is_float() && a.writable && args.len() == 1).then_some(())?;
        return one(a.shape.clone(), a.dtype);
    }
    if BINARY.contains(&op) {
        return binary(op, args);
    }
    if REDUCE.contains(&op) {
        return reduce(op, a, ints);
    }
    if REDUCE_ALL.contains(&op) {
        (a.dtype.is_float() && a.rank() >= 1).then_some(())?;
        return one(Vec::new(), a.dtype);
    }
    view(op, args, ints)
        .or_else(|| multi(op, a, ints))
        .or_else(|| special(op, args, ints))
}

fn unary(op: &str, a: &Val) -> Option<Out> {
    match op {
        "double" => one(a.shape.clone(), Dtype::Float64),
        "float" => one(a.shape.clone(), Dtype::Float32),
        _ if a.dtype.is_float() => one(a.shape.clone(), a.dtype),
        _ => None,
    }
}

/// Broadcast `b` against `a`: the same shape, `a`'s last dim alone, or a
/// 0-dim tensor.
fn broadcasts(a: &Val, b: &Val) -> bool {
    a.same_shape(b)
        || b.rank() == 0
        || (b.rank() == 1
            && a.rank() >= 1
            && b.shape[0].example.is_some()
            && b.shape[0].example == a.shape[a.rank() - 1].example)
}

fn binary(op: &str, args: &[&Val]) -> Option<Out> {
    let [a, b] = args else { return None };
    (a.dtype.is_float() && b.dtype == a.dtype && broadcasts(a, b)).then_some(())?;
    let dtype = match op {
        "eq_float" | "gt_float" | "and_float" => Dtype::Float32,
        _ => a.dtype,
    };
    one(a.shape.clone(), dtype)
}

fn reduce(op: &str, a: &Val, ints: &[i64]) -> Option<Out> {
    let d = dim(ints, 0, a.rank())?;
    a.dtype.is_float().then_some(())?;
    // Reducing an unbacked (possibly empty) dim: amax and friends raise.
    a.shape[d].example?;
    let keep = ints.get(1).copied().unwrap_or(0) == 1;
    let mut shape = a.shape.clone();
    if keep {
        shape[d] = Size::fixed(1);
    } else {
        shape.remove(d);
    }
    let dtype = match op {
        "argmax" | "argmin" => Dtype::Int64,
        "any_float" => Dtype::Float32,
        _ => a.dtype,
    };
    one(shape, dtype)
}

fn product(dims: &[Size]) -> Size {
    let mut n = Some(1u64);
    for s in dims {
        n = n.zip(s.example).and_then(|(a, b)| a.checked_mul(b));
    }
    Size {
        example: n,
        dynamic: dims.iter().any(|s| s.dynamic) || n.is_none(),
    }
}

fn view(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let mut s = a.shape.clone();
    match op {
        "transpose" => {
            let (d1, d2) = (dim(ints, 0, r)?, dim(ints, 1, r)?);
            s.swap(d1, d2);
        }
        "permute_rev" => s.reverse(),
        "unsqueeze" => {
            let d = *ints.first()?;
            (d >= 0 && d as usize <= r).then_some(())?;
            s.insert(d as usize, Size::fixed(1));
        }
        "squeeze" => {
            let d = dim(ints, 0, r)?;
            (s[d] == Size::fixed(1)).then_some(())?;
            s.remove(d);
        }
        "flatten" if r >= 1 => s = vec![product(&s)],
        "flatten1" | "size_reshape" if r >= 2 && s[0].example.is_some() => {
            s = vec![s[0], product(&s[1..])]
        }
        "reshape_last" if r >= 2 && s[r - 1].example.is_some() => {
            s = vec![product(&s[..r - 1]), s[r - 1]]
        }
        "t" if r == 2 => s.reverse(),
        "narrow" => {
            let d = dim(ints, 0, r)?;
            (known(s[d])? >= 1).then_some(())?;
            s[d] = Size::fixed(1);
        }
        "select" => {
            let d = dim(ints, 0, r)?;
            (known(s[d])? >= 1).then_some(())?;
            s.remove(d);
        }
        "slice_from1" => {
            let d = dim(ints, 0, r)?;
            (s[d].is_static() && known(s[d])? >= 2).then_some(())?;
            s[d] = Size::fixed(known(s[d])? - 1);
        }
        "slice_step" => {
            let d = dim(ints, 0, r)?;
            s[d].is_static().then_some(())?;
            s[d] = Size::fixed(known(s[d])?.div_ceil(2));
        }
        "expand_as" => {
            let b = *args.get(1)?;
            (b.rank() >= r && expandable(a, b)).then_some(())?;
            s = b.shape.clone();
        }
        "repeat" if r >= 1 => {
            s[0] = Size {
                example: known(s[0])?.checked_mul(2),
                dynamic: s[0].dynamic,
            }
        }
        "getitem0" if r >= 1 && known(s[0])? >= 1 => {
            s.remove(0);
        }
        _ => return None,
    }
    (op == "expand_as" || args.len() == 1).then_some(())?;
    one(s, a.dtype)
}

/// Whether `a` expands to `b`: right-aligned, each dim 1 or equal.
fn expandable(a: &Val, b: &Val) -> bool {
    let off = b.rank() - a.rank();
    a.shape.iter().enumerate().all(|(i, s)| {
        *s == Size::fixed(1) || (s.example.is_some() && s.example == b.shape[i + off].example)
    }) && a.dtype == b.dtype
}

fn multi(op: &str, a: &Val, ints: &[i64]) -> Option<Out> {
    let r = a.rank();
    let d = dim(ints, 0, r)?;
    let n = known(a.shape[d])?;
    let with = |size: Size| {
        let mut s = a.shape.clone();
        s[d] = size;
        s
    };
    let without = || {
        let mut s = a.shape.clone();
        s.remove(d);
        s
    };
    let pair = |x: Vec<Size>, dx: Dtype, y: Vec<Size>, dy: Dtype| Some(vec![(x, dx), (y, dy)]);
    let float = a.dtype.is_float();
    match op {
        "split2" | "chunk2" if a.shape[d].is_static() && (2..=8).contains(&n) => {
            let sizes: Vec<u64> = if op == "split2" {
                (0..n.div_ceil(2)).map(|k| 2.min(n - 2 * k)).collect()
            } else {
                vec![n.div_ceil(2), n - n.div_ceil(2)]
            };
            Some(
                sizes
                    .into_iter()
                    .map(|k| (with(Size::fixed(k)), a.dtype))
                    .collect(),
            )
        }
        "unbind" if a.shape[d].is_static() && (1..=4).contains(&n) => {
            Some((0..n).map(|_| (without(), a.dtype)).collect())
        }
        "topk1" if float && n >= 1 => pair(
            with(Size::fixed(1)),
            a.dtype,
            with(Size::fixed(1)),
            Dtype::Int64,
        ),
        "sort" | "cummax" if float => pair(a.shape.clone(), a.dtype, a.shape.clone(), Dtype::Int64),
        "max_dim" | "min_dim" if float && n >= 1 => {
            pair(without(), a.dtype, without(), Dtype::Int64)
        }
        "var_mean" | "std_mean" | "aminmax" if float && n >= 1 => {
            pair(without(), a.dtype, without(), a.dtype)
        }
        _ => None,
    }
}

fn last_static(a: &Val) -> Option<u64> {
    let s = *a.shape.last()?;
    s.is_static().then_some(s.example?)
}

fn shape_of(xs: &[u64]) -> Vec<Size> {
    xs.iter().map(|&n| Size::fixed(n)).collect()
}

fn special(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    match op {
        "linear" | "matmul" | "bmm" | "addmm" => products(op, args, ints),
        "conv1d"
        | "conv2d"
        | "max_pool1d"
        | "avg_pool1d"
        | "max_pool2d"
        | "adaptive_avg_pool1d" => convolutions(op, args, ints),
        "layer_norm" | "group_norm" | "batch_norm" => norms(op, args, ints),
        _ => joins(op, args, ints),
    }
}

/// Whether `v` has exactly the static shape `want`.
fn shape_is(v: &Val, want: &[u64]) -> bool {
    v.same_shape(&Val {
        shape: shape_of(want),
        ..v.clone()
    })
}

/// The matrix products: `linear`, `matmul`, `bmm`, `addmm`.
fn products(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let float = a.dtype.is_float();
    match (op, args.len()) {
        ("linear", 2 | 3) if float && r >= 1 => {
            let w = args[1];
            let (&[out, inp], Some(k)) = (&dims(w)?[..], last_static(a)) else {
                return None;
            };
            (inp == k && w.dtype == a.dtype).then_some(())?;
            if let Some(b) = args.get(2) {
                shape_is(b, &[out]).then_some(())?;
            }
            let mut s = a.shape.clone();
            s[r - 1] = Size::fixed(out);
            one(s, a.dtype)
        }
        ("matmul", 2) if float && r >= 2 => {
            let w = args[1];
            let &[k, n] = &dims(w)?[..] else { return None };
            (last_static(a)? == k && w.dtype == a.dtype).then_some(())?;
            let mut s = a.shape.clone();
            s[r - 1] = Size::fixed(n);
            one(s, a.dtype)
        }
        ("bmm", 2) if float && r == 3 && a.shape[0].is_static() && a.shape[2].is_static() => {
            let &[bb, k, n] = &dims(args[1])?[..] else {
                return None;
            };
            (Some(bb) == a.shape[0].example && Some(k) == a.shape[2].example).then_some(())?;
            one(vec![a.shape[0], a.shape[1], Size::fixed(n)], a.dtype)
        }
        ("addmm", 3) if float && r == 2 => {
            let (w, bias) = (args[1], args[2]);
            let &[k, n] = &dims(w)?[..] else { return None };
            (last_static(a)? == k && shape_is(bias, &[n])).then_some(())?;
            one(vec![a.shape[0], Size::fixed(n)], a.dtype)
        }
        _ => data_dependent(op, args, ints),
    }
}

/// Convolutions and pooling over the trailing dims.
fn convolutions(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let float = a.dtype.is_float();
    match (op, args.len()) {
        ("conv1d", 2) | ("conv2d", 2) if float && r == if op == "conv1d" { 3 } else { 4 } => {
            let w = dims(args[1])?;
            (a.shape[1].is_static() && w.len() == r && Some(w[1]) == a.shape[1].example)
                .then_some(())?;
            a.shape[2..]
                .iter()
                .all(|s| s.example.is_some())
                .then_some(())?;
            let mut s = a.shape.clone();
            s[1] = Size::fixed(w[0]);
            one(s, a.dtype)
        }
        ("max_pool1d" | "avg_pool1d", 1) if float && r == 3 => pooled(a, &[2]),
        ("max_pool2d", 1) if float && r == 4 => pooled(a, &[2, 3]),
        ("adaptive_avg_pool1d", 1) if float && r == 3 && known(a.shape[2])? >= 1 => {
            one(vec![a.shape[0], a.shape[1], Size::fixed(1)], a.dtype)
        }
        _ => data_dependent(op, args, ints),
    }
}

/// The normalizations, whose weight and bias have the channel count.
fn norms(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let float = a.dtype.is_float();
    match (op, args.len()) {
        ("layer_norm", 3) if float => {
            let k = last_static(a)?;
            (shape_is(args[1], &[k]) && shape_is(args[2], &[k])).then_some(())?;
            one(a.shape.clone(), a.dtype)
        }
        ("group_norm", 3) if float && r >= 2 && a.shape[1].is_static() => {
            let c = a.shape[1].example?;
            (shape_is(args[1], &[c]) && shape_is(args[2], &[c]) && a.all_known()).then_some(())?;
            one(a.shape.clone(), a.dtype)
        }
        ("batch_norm", 3) if float && (r == 2 || r == 3) && a.shape[1].is_static() => {
            let c = a.shape[1].example?;
            // Training batch norm wants more than one value per channel.
            let per_channel = product(&a.shape).example? / c.max(1);
            (per_channel > 1 && shape_is(args[1], &[c]) && shape_is(args[2], &[c])).then_some(())?;
            one(a.shape.clone(), a.dtype)
        }
        _ => data_dependent(op, args, ints),
    }
}

/// `embedding`, the buffer and constant adds, `cat` and `stack`.
fn joins(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let float = a.dtype.is_float();
    match (op, args.len()) {
        ("embedding", 2) if a.dtype == Dtype::Int64 => {
            let &[_, d] = &dims(args[1])?[..] else {
                return None;
            };
            let mut s = a.shape.clone();
            s.push(Size::fixed(d));
            one(s, Dtype::Float32)
        }
        ("add_buffer" | "add_constant", 2) if float && broadcasts(a, args[1]) => {
            (args[1].dtype == a.dtype).then_some(())?;
            one(a.shape.clone(), a.dtype)
        }
        ("cat", 2) => {
            let d = dim(ints, 0, r)?;
            let b = args[1];
            (b.rank() == r && b.dtype == a.dtype).then_some(())?;
            let others = (0..r)
                .filter(|&i| i != d)
                .all(|i| a.shape[i].example.is_some() && a.shape[i].example == b.shape[i].example);
            others.then_some(())?;
            let mut s = a.shape.clone();
            s[d] = Size {
                example: a.shape[d]
                    .example
                    .zip(b.shape[d].example)
                    .map(|(x, y)| x + y),
                dynamic: a.shape[d].dynamic || b.shape[d].dynamic || s[d].example.is_none(),
            };
            one(s, a.dtype)
        }
        ("stack", 2) => {
            let d = *ints.first()?;
            (d >= 0 && d as usize <= r && a.same_shape(args[1]) && args[1].dtype == a.dtype)
                .then_some(())?;
            let mut s = a.shape.clone();
            s.insert(d as usize, Size::fixed(2));
            one(s, a.dtype)
        }
        _ => data_dependent(op, args, ints),
    }
}

/// A module tensor's static dims (module tensors are always static).
fn dims(v: &Val) -> Option<Vec<u64>> {
    v.shape
        .iter()
        .map(|s| s.is_static().then_some(s.example?))
        .collect()
}

fn pooled(a: &Val, which: &[usize]) -> Option<Out> {
    let mut s = a.shape.clone();
    for &d in which {
        (s[d].is_static() && known(s[d])? >= 2).then_some(())?;
        s[d] = Size::fixed(known(s[d])? / 2);
    }
    one(s, a.dtype)
}

fn data_dependent(op: &str, args: &[&Val], ints: &[i64]) -> Option<Out> {
    let a = args[0];
    let r = a.rank();
    let float = a.dtype.is_float();
    let unbacked = Size {
        example: None,
        dynamic: true,
    };
    (args.len() == 1).then_some(())?;
    match op {
        "index_select" => {
            let d = dim(ints, 0, r)?;
            (known(a.shape[d])? >= 1).then_some(())?;
            let mut s = a.shape.clone();
            s[d] = Size::fixed(1);
            one(s, a.dtype)
        }
        "masked_fill" if float => one(a.shape.clone(), a.dtype),
        "masked_select" if float => one(vec![unbacked], a.dtype),
        "nonzero" if float && r >= 1 => one(vec![unbacked, Size::fixed(r as u64)], Dtype::Int64),
        "item_zeros" if float => one(vec![unbacked], a.dtype),
        "size_full" => {
            let n = a.shape[dim(ints, 0, r)?];
            let size = Size {
                example: n.example.map(|n| 2 * n + 1),
                dynamic: n.dynamic,
            };
            one(vec![size], Dtype::Float32)
        }
        "new_ones_size" => {
            let n = a.shape[dim(ints, 0, r)?];
            one(vec![n, Size::fixed(2)], a.dtype)
        }
        "cond" if float => one(a.shape.clone(), a.dtype),
        "map" | "while_loop" if float && r >= 1 && known(a.shape[0])? >= 1 => {
            one(a.shape.clone(), a.dtype)
        }
        "scan" if float && r >= 1 && known(a.shape[0])? >= 1 => Some(vec![
            (a.shape[1..].to_vec(), a.dtype),
            (a.shape.clone(), a.dtype),
        ]),
        _ => None,
    }
}
