//! torch.compile without a spec over later calls: automatic dynamic
//! shapes (`torch/_dynamo/pgo.py` `process_automatic_dynamic`, dynamo's
//! `FrameStateSizeEntry`). The first compile is static; a call that no
//! cached entry accepts recompiles, and every tensor dim whose size ever
//! differed from the recorded one becomes dynamic: a backed symbol of its
//! own (two dynamic dims of one size are not tied: a later call may give
//! them different sizes), a size 0 or 1 specialized (`create_symbol`),
//! guarded `2 <= s` (`produce_guards`). Only `recompiled` is answered; ints or
//! other leaves that change, and a change of rank or dtype, are
//! `unsupported`.

use torchspec_pyval::{PyResult, Raise, Value};

use crate::keys;
use crate::leaves::body_leaves;
use crate::{Call, LaterOutcome};

/// One input leaf as the guards see it.
enum Seen {
    Tensor(String, Vec<i64>),
    Other(Value),
}

/// A cached entry's guard on one tensor dim.
enum DimGuard {
    Static(i64),
    /// A backed symbol: `2 <= s`.
    Dynamic,
}

/// A compiled entry: per leaf, its dtype and dim guards, or the value it
/// is specialized to.
struct Entry {
    leaves: Vec<(String, EntryLeaf)>,
}

enum EntryLeaf {
    Tensor(String, Vec<DimGuard>),
    Other(Value),
}

/// Each later call's outcome, the first call's entry being static.
pub(crate) fn later_calls(call: &Call) -> PyResult<Vec<LaterOutcome>> {
    let first = seen(call, &call.args, &call.kwargs)?;
    // The frame state: per tensor leaf, each dim's recorded size (`None`
    // once it changed: dynamic from then on).
    let mut state: Vec<Vec<Option<i64>>> = first
        .iter()
        .map(|(_, s)| match s {
            Seen::Tensor(_, dims) => dims.iter().map(|d| Some(*d)).collect(),
            Seen::Other(_) => Vec::new(),
        })
        .collect();
    let mut entries = vec![entry(&first, &state)];
    let mut out = Vec::new();
    for later in &call.calls {
        let now = seen(call, &later.args, &later.kwargs)?;
        same_structure(&first, &now)?;
        if entries.iter().any(|e| accepts(e, &now)) {
            out.push(LaterOutcome::Recompiled(false));
            continue;
        }
        update_state(&mut state, &now);
        entries.push(entry(&now, &state));
        out.push(LaterOutcome::Recompiled(true));
    }
    Ok(out)
}

/// The leaves the body reads, by source name.
fn seen(call: &Call, args: &[Value], kwargs: &[(Value, Value)]) -> PyResult<Vec<(String, Seen)>> {
    Ok(body_leaves(call, args, kwargs)?
        .into_iter()
        .map(|l| {
            let s = match keys::tensor(&l.value) {
                Some(t) => Seen::Tensor(t.dtype.clone(), t.shape.clone()),
                None => Seen::Other(l.value.clone()),
            };
            (l.name, s)
        })
        .collect())
}

/// What the model follows: the same leaves, tensors of the same rank and
/// dtype, every other leaf unchanged.
fn same_structure(first: &[(String, Seen)], now: &[(String, Seen)]) -> PyResult<()> {
    let same = first.len() == now.len()
        && first.iter().zip(now).all(|((a, x), (b, y))| {
            a == b
                && match (x, y) {
                    (Seen::Tensor(d, s), Seen::Tensor(e, t)) => d == e && s.len() == t.len(),
                    (Seen::Other(v), Seen::Other(w)) => {
                        torchspec_export::pytree::value_eq(v, w) && v.type_name() == w.type_name()
                    }
                    _ => false,
                }
        });
    if same {
        Ok(())
    } else {
        Err(Raise::unsupported(
            "automatic dynamic shapes for a change other than a tensor's sizes",
        ))
    }
}

/// `process_automatic_dynamic`: a dim whose size differs from the
/// recorded one is dynamic from then on.
fn update_state(state: &mut [Vec<Option<i64>>], now: &[(String, Seen)]) {
    for (dims, (_, s)) in state.iter_mut().zip(now) {
        if let Seen::Tensor(_, sizes) = s {
            for (d, v) in dims.iter_mut().zip(sizes) {
                if *d != Some(*v) {
                    *d = None;
                }
            }
        }
    }
}

/// The entry compiled for these inputs under this frame state: a dynamic
/// dim of size 0 or 1 is specialized.
fn entry(now: &[(String, Seen)], state: &[Vec<Option<i64>>]) -> Entry {
    let leaves = now
        .iter()
        .zip(state)
        .map(|((name, s), dims)| {
            let leaf = match s {
                Seen::Tensor(dtype, sizes) => EntryLeaf::Tensor(
                    dtype.clone(),
                    sizes
                        .iter()
                        .zip(dims)
                        .map(|(v, d)| match d {
                            Some(_) => DimGuard::Static(*v),
                            None if *v < 2 => DimGuard::Static(*v),
                            None => DimGuard::Dynamic,
                        })
                        .collect(),
                ),
                Seen::Other(v) => EntryLeaf::Other(v.clone()),
            };
            (name.clone(), leaf)
        })
        .collect();
    Entry { leaves }
}

/// Whether an entry's guards pass on these inputs.
fn accepts(e: &Entry, now: &[(String, Seen)]) -> bool {
    e.leaves.len() == now.len()
        && e.leaves.iter().zip(now).all(|((a, g), (b, s))| {
            a == b
                && match (g, s) {
                    (EntryLeaf::Tensor(d, dims), Seen::Tensor(e, sizes)) => {
                        d == e
                            && dims.len() == sizes.len()
                            && dims.iter().zip(sizes).all(|(g, v)| dim_ok(g, *v))
                    }
                    (EntryLeaf::Other(v), Seen::Other(w)) => {
                        torchspec_export::pytree::value_eq(v, w) && v.type_name() == w.type_name()
                    }
                    _ => false,
                }
        })
}

fn dim_ok(g: &DimGuard, v: i64) -> bool {
    match g {
        DimGuard::Static(s) => *s == v,
        DimGuard::Dynamic => v >= 2,
    }
}
