//! Smaller plans, for shrinking a divergence: each candidate removes one
//! thing (an op and what reads it, an output, a mutation, an input, a
//! module tensor) or simplifies one (a dynamic dim made static, the export
//! mode, the layouts), and replays valid.

use std::collections::BTreeSet;

use super::{InputLayout, OutputLayout, Plan};

impl Plan {
    /// The one-step-smaller plans, most reducing first.
    pub fn shrink_candidates(&self) -> Vec<Plan> {
        let mut out = Vec::new();
        for k in (0..self.ops.len()).rev() {
            out.push(self.bypassing_op(k));
            out.push(self.without_op(k));
        }
        for k in 0..self.outputs.refs.len() {
            if self.outputs.refs.len() > 1 {
                let mut p = self.clone();
                p.outputs.refs.remove(k);
                out.push(p);
            }
        }
        for k in 0..self.mutations.len() {
            let mut p = self.clone();
            p.mutations.remove(k);
            out.push(p);
        }
        for k in 0..self.inputs.len() {
            if self.inputs.len() > 1 {
                out.push(self.without_input(k));
            }
        }
        out.extend(self.simpler());
        for kind in ['p', 'b', 'c'] {
            if let Some(p) = self.without_unused(kind) {
                out.push(p);
            }
        }
        out.retain(|p| p != self && p.is_valid());
        out
    }

    fn is_valid(&self) -> bool {
        !self.outputs.refs.is_empty() && super::replay(self).is_ok()
    }

    /// Flags, layouts and dims, one at a time.
    fn simpler(&self) -> Vec<Plan> {
        let mut out = Vec::new();
        let mut with = |f: &dyn Fn(&mut Plan)| {
            let mut p = self.clone();
            f(&mut p);
            out.push(p);
        };
        with(&|p| p.strict = false);
        with(&|p| p.decompose = false);
        with(&|p| p.layout = InputLayout::Args);
        with(&|p| p.outputs.none = false);
        with(&|p| p.outputs.constant = false);
        with(&|p| {
            p.outputs.layout = if p.outputs.refs.len() == 1 {
                OutputLayout::Single
            } else {
                OutputLayout::Tuple
            }
        });
        for (i, x) in self.inputs.iter().enumerate() {
            for d in 0..x.dims.len() {
                if x.dims[d].is_some() {
                    let mut p = self.clone();
                    p.inputs[i].dims[d] = None;
                    out.push(p);
                }
            }
        }
        out
    }

    /// Without op `k` and everything that reads its outputs.
    fn without_op(&self, k: usize) -> Plan {
        let mut p = self.clone();
        let op = p.ops.remove(k);
        p.drop_readers(BTreeSet::from([op.id]), &BTreeSet::new());
        p
    }

    /// Without op `k`, its readers reading its first argument instead.
    fn bypassing_op(&self, k: usize) -> Plan {
        let mut p = self.clone();
        let op = p.ops.remove(k);
        let Some(arg) = op.args.first().cloned() else {
            return p;
        };
        let mine = |a: &str| {
            a.strip_prefix('v')
                .and_then(|n| n.split('.').next()?.parse::<usize>().ok())
                == Some(op.id)
        };
        p.rename(|name| {
            if mine(name) {
                arg.clone()
            } else {
                name.to_string()
            }
        });
        p.outputs.refs.dedup();
        p
    }

    /// Without input `k`: what reads it goes, later inputs move down.
    fn without_input(&self, k: usize) -> Plan {
        let mut p = self.clone();
        p.inputs.remove(k);
        p.drop_readers(BTreeSet::new(), &BTreeSet::from([format!("x{k}")]));
        p.rename(
            |name| match name.strip_prefix('x').and_then(|n| n.parse::<usize>().ok()) {
                Some(j) if j > k => format!("x{}", j - 1),
                _ => name.to_string(),
            },
        );
        p
    }

    /// Without the module tensors of `kind` that nothing reads.
    fn without_unused(&self, kind: char) -> Option<Plan> {
        let read: BTreeSet<&str> = self
            .ops
            .iter()
            .flat_map(|o| o.args.iter())
            .chain(self.outputs.refs.iter())
            .chain(self.mutations.iter().flat_map(|m| [&m.target, &m.src]))
            .map(String::as_str)
            .collect();
        let mut p = self.clone();
        let list = match kind {
            'p' => &mut p.params,
            'b' => &mut p.buffers,
            _ => &mut p.constants,
        };
        let keep: Vec<usize> = (0..list.len())
            .filter(|k| read.contains(format!("{kind}{k}").as_str()))
            .collect();
        if keep.len() == list.len() {
            return None;
        }
        *list = keep.iter().map(|&k| list[k].clone()).collect();
        p.rename(|name| {
            let old = name
                .strip_prefix(kind)
                .and_then(|n| n.parse::<usize>().ok());
            match old.and_then(|o| keep.iter().position(|&k| k == o)) {
                Some(new) => format!("{kind}{new}"),
                None => name.to_string(),
            }
        });
        Some(p)
    }

    /// Drop, transitively, every op reading an output of `ops` or a value
    /// in `names`, and the outputs and mutations that read them.
    fn drop_readers(&mut self, mut ops: BTreeSet<usize>, names: &BTreeSet<String>) {
        let gone = |a: &str, ops: &BTreeSet<usize>| {
            names.contains(a)
                || a.strip_prefix('v')
                    .and_then(|n| n.split('.').next()?.parse::<usize>().ok())
                    .is_some_and(|id| ops.contains(&id))
        };
        let mut kept = Vec::new();
        for op in std::mem::take(&mut self.ops) {
            if op.args.iter().any(|a| gone(a, &ops)) {
                ops.insert(op.id);
            } else {
                kept.push(op);
            }
        }
        self.ops = kept;
        self.outputs.refs.retain(|r| !gone(r, &ops));
        self.mutations
            .retain(|m| !gone(&m.target, &ops) && !gone(&m.src, &ops));
    }

    fn rename(&mut self, f: impl Fn(&str) -> String) {
        for op in &mut self.ops {
            for a in &mut op.args {
                *a = f(a);
            }
        }
        for r in &mut self.outputs.refs {
            *r = f(r);
        }
        for m in &mut self.mutations {
            m.target = f(&m.target);
            m.src = f(&m.src);
        }
    }
}
