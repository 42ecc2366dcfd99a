//! The module graph of one crate, read from its files: an arrow from a file
//! to the module file a path in it names (`use` trees, and `crate::`,
//! `super::`, `self::` or child-module paths in code), `#[cfg(test)]`
//! modules left out. A path resolves to the longest module prefix it has.
//! A path to one of the file's own enclosing modules (`super::X` in a
//! child, `crate::Value` anywhere) draws no arrow: a module's ancestors
//! are its scope, as Rust's privacy has it, so the cycles left are between
//! modules neither of which encloses the other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::lexer::{mask, without_tests};

type Module = Vec<String>;

/// The module a file under `src` is: `lib.rs` the root, `a/mod.rs` and
/// `a.rs` the module `a`. `main.rs` beside a `lib.rs` is another crate.
fn module_of(rel: &str) -> Option<Module> {
    let no_ext = rel.strip_suffix(".rs")?;
    let mut parts: Module = no_ext.split('/').map(str::to_string).collect();
    match parts.last().map(String::as_str) {
        Some("lib") if parts.len() == 1 => parts.clear(),
        Some("main") if parts.len() == 1 => return None,
        Some("mod") => {
            parts.pop();
        }
        _ => {}
    }
    Some(parts)
}

/// File (relative to `src`) -> the files of the same crate it imports;
/// `sources` are the crate's `.rs` files under `src`.
pub fn module_graph(src: &Path, sources: &[PathBuf]) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: BTreeMap<Module, String> = BTreeMap::new();
    for p in sources {
        let rel = p
            .strip_prefix(src)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        if let Some(m) = module_of(&rel) {
            files.insert(m, rel);
        }
    }
    let mut edges = BTreeMap::new();
    for (module, rel) in &files {
        let text = std::fs::read_to_string(src.join(rel)).unwrap_or_default();
        let code = without_tests(&mask(&text));
        let mut to = BTreeSet::new();
        for path in paths(&code) {
            if let Some(target) = resolve(&path, module, &files) {
                if !module.starts_with(&target) {
                    to.insert(files[&target].clone());
                }
            }
        }
        edges.insert(rel.clone(), to);
    }
    edges
}

/// The module a path names: the longest prefix of it that is a module of
/// the crate, or `None` for a path out of the crate.
fn resolve(path: &[String], here: &Module, files: &BTreeMap<Module, String>) -> Option<Module> {
    let mut base: Module = here.clone();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = here.clone();
            child.push(first.to_string());
            if !files.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    let mut best = None;
    let mut cur = base.clone();
    if files.contains_key(&cur) {
        best = Some(cur.clone());
    }
    for seg in rest {
        cur.push(seg.clone());
        if files.contains_key(&cur) {
            best = Some(cur.clone());
        } else {
            break;
        }
    }
    best
}

/// Every path (`a::b::c`, and each leaf of a `use` tree's braces) in
/// masked code that starts at an identifier not preceded by `::` or `.`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let starts = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric()
                    || b[i - 1] == b'_'
                    || b[i - 1] == b':'
                    || b[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        let (prefix, end) = segments(b, i);
        if code[end..].starts_with("::{") {
            let close = super::lexer::matching_brace(b, end + 2);
            tree(code, end + 3, close - 1, &prefix, &mut out);
            i = close;
        } else {
            if prefix.len() > 1 || code[end..].starts_with("::") {
                out.push(prefix);
            }
            i = end.max(i + 1);
        }
    }
    out
}

/// `a::b::c` from `at`: its segments and where it ends.
fn segments(b: &[u8], mut at: usize) -> (Vec<String>, usize) {
    let mut segs = Vec::new();
    loop {
        let start = at;
        while at < b.len() && (b[at].is_ascii_alphanumeric() || b[at] == b'_') {
            at += 1;
        }
        if at == start {
            break;
        }
        segs.push(String::from_utf8_lossy(&b[start..at]).into_owned());
        if b[at..].starts_with(b"::")
            && b.get(at + 2)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            at += 2;
        } else {
            break;
        }
    }
    (segs, at)
}

/// The leaves of the `use` group between `from` and `to` (exclusive), each
/// prefixed by `prefix`.
fn tree(code: &str, from: usize, to: usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let b = code.as_bytes();
    let mut i = from;
    while i < to {
        if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
            i += 1;
            continue;
        }
        let (segs, end) = segments(b, i);
        let mut full = prefix.to_vec();
        full.extend(segs.into_iter().filter(|s| s != "self"));
        if code[end..].starts_with("::{") {
            let close = super::lexer::matching_brace(b, end + 2);
            tree(code, end + 3, close - 1, &full, out);
            i = close;
        } else {
            out.push(full);
            // Skip an `as NAME` rename and move to the next item.
            i = code[end..to].find(',').map_or(to, |k| end + k + 1);
        }
    }
}
