//! `cargo xtask design-metrics [DIR]`: the figures the design issue asks
//! for, measured from a checkout's text alone (nothing is built or run):
//!
//! - import cycles: Rust modules of one crate that reach each other through
//!   `use` and `crate::`/`super::`/`self::`/child-module paths, and
//!   `oracle/*.py` modules through `import` (also inside functions,
//!   `__import__` and `importlib.import_module` of a literal name);
//! - hand-written source files over 1,500 lines;
//! - hand-written Rust functions over 100 lines (outside `#[cfg(test)]`);
//! - in how many files each pass name and case kind of `oracle/names.json`
//!   is written in quotes (the declaration files included);
//! - runnable doc examples: fenced blocks in `///` and `//!` comments that
//!   are neither `ignore`, `no_run`, `compile_fail` nor another language,
//!   in crates whose doctests run.
//!
//! A generated file is one whose first lines say `generated` or `do not
//! edit`; it counts for none of the figures.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod lexer;
mod rust_graph;

pub use lexer::{doc_examples, function_lengths};

/// Folders never walked: build output, data, and other people's code.
const SKIP_DIRS: [&str; 9] = [
    "target",
    ".git",
    "corpus",
    "docs",
    "snapshots",
    ".oracle",
    "node_modules",
    "artifacts",
    "coverage",
];

/// The crates measured: (name, source root, whether its doctests run).
fn crates(root: &Path) -> Vec<(String, PathBuf, bool)> {
    let mut out = Vec::new();
    for (name, dir) in [
        ("torchspec", "."),
        ("torchspec-pyval", "crates/pyval"),
        ("torchspec-export", "crates/export"),
        ("torchspec-spec", "crates/spec"),
        ("torchspec-spec-export", "crates/spec-export"),
        ("xtask", "xtask"),
    ] {
        let manifest =
            std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap_or_default();
        let doctest = !manifest.contains("doctest = false");
        out.push((name.to_string(), root.join(dir).join("src"), doctest));
    }
    out
}

/// Every file under `dir` (skipping [`SKIP_DIRS`] and dot folders) whose
/// name ends in one of `exts`, sorted.
pub fn walk(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if exts.iter().any(|x| name.ends_with(x)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Whether a file's first lines say it is generated.
pub fn is_generated(text: &str) -> bool {
    text.lines().take(6).any(|l| {
        let l = l.to_ascii_lowercase();
        (l.starts_with("//") || l.starts_with('#'))
            && (l.contains("generated") || l.contains("do not edit"))
    })
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Strongly connected components of more than one node (Tarjan, iterative).
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = edges.keys().collect();
    let ix: HashMap<&String, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|m| ix.get(m).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    scc.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    out.push(scc);
                }
            }
        }
    }
    out.sort();
    out
}

/// The import graph of `oracle/*.py`: module -> the oracle modules it imports.
pub fn python_graph(oracle: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = walk(oracle, &[".py"]);
    let names: BTreeSet<String> = files
        .iter()
        .filter(|p| p.parent() == Some(oracle))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().to_string()))
        .collect();
    let mut edges = BTreeMap::new();
    for p in files.iter().filter(|p| p.parent() == Some(oracle)) {
        let me = p
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let mut to = BTreeSet::new();
        for line in text.lines() {
            let t = line.trim_start();
            let mut found: Vec<&str> = Vec::new();
            if let Some(rest) = t.strip_prefix("import ") {
                found.extend(rest.split(['#', ';']).next().unwrap_or("").split(','));
            } else if let Some(rest) = t.strip_prefix("from ") {
                found.push(rest.split_whitespace().next().unwrap_or(""));
            }
            for call in ["__import__(", "import_module("] {
                if let Some(i) = t.find(call) {
                    let arg = &t[i + call.len()..];
                    if let Some(q) = arg.strip_prefix('"').or_else(|| arg.strip_prefix('\'')) {
                        found.push(q.split(['"', '\'']).next().unwrap_or(""));
                    }
                }
            }
            for m in found {
                let m = m
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .split('.')
                    .next()
                    .unwrap_or("");
                if names.contains(m) && m != me {
                    to.insert(m.to_string());
                }
            }
        }
        edges.insert(me, to);
    }
    edges
}

/// The whole report, as text; `verbose` adds the arrows inside each cycle.
pub fn report(root: &Path, verbose: bool) -> String {
    let mut out = String::new();
    let mut total_cycles = 0;
    let _ = writeln!(out, "## import cycles");
    for (name, src, _) in crates(root) {
        let sources: Vec<PathBuf> = walk(&src, &[".rs"]);
        let graph = rust_graph::module_graph(&src, &sources);
        for scc in cycles(&graph) {
            total_cycles += 1;
            let files: Vec<String> = scc.iter().map(|f| rel(root, &src.join(f))).collect();
            let _ = writeln!(out, "- {name}: {} files: {}", files.len(), files.join(", "));
            if verbose {
                for from in &scc {
                    let to: Vec<&String> = graph[from].iter().filter(|t| scc.contains(t)).collect();
                    let _ = writeln!(out, "    {from} -> {to:?}");
                }
            }
        }
    }
    for scc in cycles(&python_graph(&root.join("oracle"))) {
        total_cycles += 1;
        let _ = writeln!(out, "- oracle: {} modules: {}", scc.len(), scc.join(", "));
    }
    let _ = writeln!(out, "import cycles: {total_cycles}\n");
    long_files(root, &mut out);
    long_functions(root, &mut out);
    name_places(root, &mut out);
    examples(root, &mut out);
    out
}

fn long_files(root: &Path, out: &mut String) {
    let _ = writeln!(out, "## hand-written files over 1,500 lines");
    let mut n = 0;
    for p in walk(root, &[".rs", ".py", ".sh"]) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let lines = text.lines().count();
        if lines > 1500 && !is_generated(&text) {
            n += 1;
            let _ = writeln!(out, "- {} {lines}", rel(root, &p));
        }
    }
    let _ = writeln!(out, "files over 1,500 lines: {n}\n");
}

fn long_functions(root: &Path, out: &mut String) {
    let _ = writeln!(
        out,
        "## hand-written Rust functions over 100 lines (outside #[cfg(test)])"
    );
    let mut long = Vec::new();
    let mut all = Vec::new();
    for (_, src, _) in crates(root) {
        for p in walk(&src, &[".rs"]) {
            if p.starts_with(root.join("crates")) && src == root.join("src") {
                continue; // the root crate's walk must not enter the other crates
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if is_generated(&text) {
                continue;
            }
            for (name, len) in function_lengths(&text) {
                all.push(len);
                if len > 100 {
                    long.push((len, format!("{}:{name}", rel(root, &p))));
                }
            }
        }
    }
    long.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (len, at) in &long {
        let _ = writeln!(out, "- {at} {len}");
    }
    all.sort_unstable();
    let median = all.get(all.len() / 2).copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "functions over 100 lines: {} (of {}, median {median} lines)\n",
        long.len(),
        all.len()
    );
}

/// The quoted names of one list in `oracle/names.json` (`"passes"`, or the
/// `"name"` of each `"case_kinds"` entry), read as plain text.
fn names_of(json: &str, key: &str) -> Vec<String> {
    let Some(at) = json.find(&format!("\"{key}\"")) else {
        return Vec::new();
    };
    let body = &json[at..];
    let end = body.find(']').unwrap_or(body.len());
    let body = if key == "case_kinds" {
        &body[..body.find("\n  ]").unwrap_or(body.len())]
    } else {
        &body[..end]
    };
    let mut out = Vec::new();
    if key == "case_kinds" {
        for part in body.split("\"name\": \"").skip(1) {
            out.push(part.split('"').next().unwrap_or("").to_string());
        }
    } else {
        out.extend(body.split('"').skip(3).step_by(2).map(str::to_string));
    }
    out
}

fn name_places(root: &Path, out: &mut String) {
    let json = std::fs::read_to_string(root.join("oracle/names.json")).unwrap_or_default();
    let files: Vec<(String, String)> = walk(root, &[".rs", ".py", ".sh", ".toml"])
        .into_iter()
        .map(|p| {
            (
                rel(root, &p),
                std::fs::read_to_string(&p).unwrap_or_default(),
            )
        })
        .filter(|(_, t)| !is_generated(t))
        .collect();
    for (key, what) in [("passes", "pass name"), ("case_kinds", "case kind")] {
        let _ = writeln!(
            out,
            "## files that write a {what} in quotes (names.json excluded)"
        );
        let mut most = 0;
        for name in names_of(&json, key) {
            let (dq, sq) = (format!("\"{name}\""), format!("'{name}'"));
            let at: Vec<&str> = files
                .iter()
                .filter(|(_, t)| t.contains(&dq) || t.contains(&sq))
                .map(|(f, _)| f.as_str())
                .collect();
            most = most.max(at.len());
            let _ = writeln!(out, "- {name}: {} ({})", at.len(), at.join(", "));
        }
        let _ = writeln!(out, "most files for one {what}: {most}\n");
    }
}

fn examples(root: &Path, out: &mut String) {
    let _ = writeln!(out, "## runnable doc examples (crates whose doctests run)");
    let mut total = 0;
    for (name, src, doctest) in crates(root) {
        let mut n = 0;
        for p in walk(&src, &[".rs"]) {
            if src == root.join("src") && p.starts_with(root.join("crates")) {
                continue;
            }
            n += doc_examples(&std::fs::read_to_string(&p).unwrap_or_default());
        }
        let counted = if doctest { n } else { 0 };
        total += counted;
        let note = if doctest {
            String::new()
        } else {
            format!(" (doctest = false: {n} written, none run)")
        };
        let _ = writeln!(out, "- {name}: {counted}{note}");
    }
    let _ = writeln!(out, "runnable doc examples: {total}");
}
