//! Mirrors torch/fx/graph.py `_Namespace.create_name`: how FX turns a
//! candidate into a unique, legal node name (`sum` → `sum_1`, `a.b` → `a_b`).

use std::collections::{HashMap, HashSet};

use super::illegal_names::ILLEGAL_NAMES;

/// `torch.fx.graph._Namespace`: the names a graph has handed out, and the
/// next suffix for each base.
#[derive(Clone, Debug, Default)]
pub struct Namespace {
    used_names: HashSet<String>,
    base_count: HashMap<String, u64>,
}

impl Namespace {
    /// `create_name(candidate, None)`.
    pub fn create_name(&mut self, candidate: &str) -> String {
        let mut candidate = if is_name(candidate) {
            candidate.to_string()
        } else {
            sanitize(candidate)
        };
        let (base, num) = split_base(&candidate);
        let base = base.to_string();
        let mut num = match num {
            Some(n) if !self.used_names.contains(&candidate) => n,
            _ => {
                let mut n = self.base_count.get(&base).copied().unwrap_or(0);
                if is_illegal(&candidate) {
                    n += 1;
                    candidate = format!("{base}_{n}");
                }
                n
            }
        };
        while self.used_names.contains(&candidate) {
            num += 1;
            candidate = format!("{base}_{num}");
        }
        self.used_names.insert(candidate.clone());
        self.base_count.insert(base, num);
        candidate
    }
}

fn is_illegal(name: &str) -> bool {
    ILLEGAL_NAMES.binary_search(&name).is_ok()
}

/// `_name_regex` matches: `[a-zA-Z_][0-9a-zA-Z_]*`.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `_illegal_char_regex.sub("_", candidate)`, then `_unnamed` for an empty
/// result and a `_` before a leading digit.
fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    if out.is_empty() {
        out.push_str("_unnamed");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// The groups of `^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$` on a legal name:
/// the shortest base such that the rest is empty or `_` and digits.
fn split_base(name: &str) -> (&str, Option<u64>) {
    if let Some(pos) = name.rfind('_') {
        let digits = &name[pos + 1..];
        if pos > 0 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            // Python's int() takes any number of digits; a count past u64
            // cannot occur in a name a program carries.
            if let Ok(n) = digits.parse::<u64>() {
                return (&name[..pos], Some(n));
            }
        }
    }
    (name, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_fx_gives_them() {
        let mut ns = Namespace::default();
        assert_eq!(ns.create_name("getitem"), "getitem");
        assert_eq!(ns.create_name("getitem"), "getitem_1");
        assert_eq!(ns.create_name("getitem"), "getitem_2");
        assert_eq!(ns.create_name("sum"), "sum_1");
        assert_eq!(ns.create_name("add.Tensor"), "add_Tensor");
        assert_eq!(ns.create_name("1x"), "_1x");
        assert_eq!(ns.create_name(""), "_unnamed");
        assert_eq!(ns.create_name("x_3"), "x_3");
        assert_eq!(ns.create_name("x_3"), "x_4");
        assert_eq!(ns.create_name("x"), "x");
    }
}
