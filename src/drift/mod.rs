//! The drift report: what changed between two golden sets (two torch
//! versions), classified, counted, with one minimal example per class and
//! a `python -c` one-liner (`crate::repro`) that shows the change with
//! stock torch.
//!
//! Data flow: golden set A × golden set B (`set.rs`) ──pair lines by file
//! and id──▶ changed lines ──`classify.rs`──▶ classes with their lines ──
//! shortest line per class──▶ `DriftReport` ──`render.rs`──▶ markdown, HTML
//! or JSON (the JSON feeds `oracle/check-drift-examples.py`).
//!
//! Invariant: the report is read from goldens only (never from the
//! reference), and is deterministic: files and ids in golden order,
//! classes in `Class` order.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_json::Value as Json;

use crate::case::wire::Case;
use crate::error::Result;

pub mod classify;
mod render;
pub mod set;

pub use classify::Class;
pub use set::{GoldenSet, Section};

/// One changed line.
#[derive(Clone, Debug)]
pub struct Change {
    /// The golden file, relative to the set (`build-vars.jsonl`, `programs/cond.jsonl`).
    pub file: String,
    pub id: String,
    /// The golden line in A and in B (`None`: absent from that set).
    pub a: Option<Json>,
    pub b: Option<Json>,
}

/// A class of change, its lines and its minimal example.
#[derive(Clone, Debug)]
pub struct ClassRow {
    pub class: Class,
    pub changes: Vec<Change>,
    pub example: Example,
}

/// The minimal example of a class.
#[derive(Clone, Debug)]
pub struct Example {
    pub file: String,
    pub id: String,
    /// The case line, probe line or pytree input it was chosen by (shortest).
    pub input: Option<String>,
    /// What the example shows in A and in B (the moved part).
    pub shown_a: String,
    pub shown_b: String,
    /// The Python one-liner, and why there is none when there is none.
    pub python: std::result::Result<String, String>,
    /// The report key a program one-liner prints.
    pub key: Option<String>,
}

/// Two golden sets compared.
#[derive(Clone, Debug)]
pub struct DriftReport {
    pub a: String,
    pub b: String,
    pub files: usize,
    pub lines: usize,
    pub changed: usize,
    pub rows: Vec<ClassRow>,
    /// Golden files only one set has (`(version that lacks it, file)`): the
    /// oracle was not run on that input under that version (a golden file
    /// is per input; an API a version lacks is recorded line by line), so
    /// their lines are coverage to capture, not drift.
    pub not_captured: Vec<(String, String)>,
}

/// Compare the golden sets of versions `a` and `b` under `root`.
pub fn compare(root: &Path, a: &str, b: &str) -> Result<DriftReport> {
    let sa = GoldenSet::open(root, a)?;
    let sb = GoldenSet::open(root, b)?;
    Ok(compare_sets(root, &sa, &sb))
}

/// Compare two loaded golden sets; `root` is where case files and programs
/// are found for the examples.
pub fn compare_sets(root: &Path, sa: &GoldenSet, sb: &GoldenSet) -> DriftReport {
    let mut not_captured = Vec::new();
    for f in sa.files.keys().filter(|f| !sb.files.contains_key(*f)) {
        not_captured.push((sb.version.clone(), f.clone()));
    }
    for f in sb.files.keys().filter(|f| !sa.files.contains_key(*f)) {
        not_captured.push((sa.version.clone(), f.clone()));
    }
    let files: Vec<&String> = sa
        .files
        .keys()
        .filter(|f| sb.files.contains_key(*f))
        .collect();
    let mut by_class: BTreeMap<Class, Vec<Change>> = BTreeMap::new();
    let (mut lines, mut changed) = (0, 0);
    for rel in &files {
        let section = Section::of(rel);
        let fa = sa.files.get(*rel);
        let fb = sb.files.get(*rel);
        let mut ids: Vec<&str> = fa
            .map(|f| f.lines.iter().map(|l| l.id.as_str()).collect())
            .unwrap_or_default();
        if let Some(fb) = fb {
            for l in &fb.lines {
                if fa.and_then(|f| f.get(&l.id)).is_none() {
                    ids.push(&l.id);
                }
            }
        }
        for id in ids {
            if id == "(register)" {
                continue;
            }
            lines += 1;
            let la = fa.and_then(|f| f.get(id));
            let lb = fb.and_then(|f| f.get(id));
            let classes = match (la, lb) {
                (Some(x), Some(y)) if x.text == y.text => continue,
                (Some(x), Some(y)) => classify::classify(section, &x.json, &y.json),
                _ => vec![Class::KindMissing(section)],
            };
            if classes.is_empty() {
                continue;
            }
            changed += 1;
            let change = Change {
                file: rel.to_string(),
                id: id.to_string(),
                a: la.map(|l| l.json.clone()),
                b: lb.map(|l| l.json.clone()),
            };
            for c in classes {
                by_class.entry(c).or_default().push(change.clone());
            }
        }
    }
    let mut inputs = Inputs::new(root);
    let rows = by_class
        .into_iter()
        .map(|(class, changes)| {
            let example = example(&class, &changes, &mut inputs);
            ClassRow {
                class,
                changes,
                example,
            }
        })
        .collect();
    DriftReport {
        a: sa.version.clone(),
        b: sb.version.clone(),
        files: files.len(),
        lines,
        changed,
        rows,
        not_captured,
    }
}

/// Case and probe lines by file and id, read on demand.
struct Inputs<'a> {
    root: &'a Path,
    files: HashMap<String, HashMap<String, String>>,
}

impl<'a> Inputs<'a> {
    fn new(root: &'a Path) -> Inputs<'a> {
        Inputs {
            root,
            files: HashMap::new(),
        }
    }

    /// The input line of golden `file`'s `id`: the case line of
    /// `corpus/cases/FILE`, or the probe line of `corpus/programs/NAME.probes.jsonl`.
    fn line(&mut self, file: &str, id: &str) -> Option<String> {
        let path = match Section::of(file) {
            Section::Cases => format!("corpus/cases/{file}"),
            Section::Probes => format!("corpus/{file}"),
            _ => return None,
        };
        let map = self.files.entry(path.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(self.root.join(&path)).unwrap_or_default();
            text.lines()
                .filter_map(|l| {
                    let v: Json = serde_json::from_str(l).ok()?;
                    Some((v.get("id")?.as_str()?.to_string(), l.to_string()))
                })
                .collect()
        });
        map.get(id).cloned()
    }
}

/// The program name of a `programs/NAME.jsonl`, `programs/NAME.probes.jsonl`
/// or `programs/NAME.serialized.jsonl` file.
fn program_name(file: &str) -> &str {
    let base = file.strip_prefix("programs/").unwrap_or(file);
    let base = base.strip_suffix(".jsonl").unwrap_or(base);
    let base = base.strip_suffix(".probes").unwrap_or(base);
    base.strip_suffix(".serialized").unwrap_or(base)
}

/// The pass names of a program or serialized golden line.
fn passes_of(c: &Change) -> Vec<String> {
    c.a.as_ref()
        .or(c.b.as_ref())
        .and_then(|j| j.get("passes"))
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The part of a golden line a class is about, as text.
fn shown(class: &Class, line: Option<&Json>) -> String {
    let Some(line) = line else {
        return "(no such line in this golden set)".into();
    };
    let text = |v: Option<&Json>| match v {
        Some(Json::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "(absent)".into(),
    };
    match class {
        Class::ProgramKey(k) => text(line.get("report").and_then(|r| r.get(k))),
        Class::SchemaMajor | Class::SchemaMinor => {
            text(line.get("report").and_then(|r| r.get("schema_version")))
        }
        Class::ProgramError => match line.get("report").and_then(|r| r.get("error")) {
            Some(e) => format!("error: {e}"),
            None => "a report (no error)".into(),
        },
        Class::PytreeKey(k) => text(line.get(k)),
        Class::SerializedBytes => match line.get("serialized") {
            // The full text (when the oracle kept it) is in the golden file.
            Some(Json::Object(o)) => {
                let mut o = o.clone();
                o.shift_remove("text");
                Json::Object(o).to_string()
            }
            other => text(other),
        },
        _ => {
            let mut m = line.clone();
            if let Json::Object(o) = &mut m {
                o.shift_remove("id");
            }
            m.to_string()
        }
    }
}

fn example(class: &Class, changes: &[Change], inputs: &mut Inputs<'_>) -> Example {
    let section = changes
        .first()
        .map(|c| Section::of(&c.file))
        .unwrap_or(Section::Cases);
    // The shortest input wins; ties keep corpus order.
    let score = |c: &Change, inputs: &mut Inputs<'_>| -> (usize, usize, usize) {
        let own = |v: &Option<Json>| v.as_ref().map(|j| shown(class, Some(j)).len()).unwrap_or(0);
        match section {
            Section::Cases | Section::Probes => (
                inputs
                    .line(&c.file, &c.id)
                    .map(|l| l.len())
                    .unwrap_or(usize::MAX / 2),
                0,
                own(&c.a) + own(&c.b),
            ),
            Section::Programs | Section::Serialized => {
                (passes_of(c).len(), own(&c.a) + own(&c.b), 0)
            }
            Section::Pytree => {
                let input = pytree_input(c).unwrap_or_default();
                (
                    usize::from(needs_registration(&input)),
                    input.len(),
                    own(&c.a) + own(&c.b),
                )
            }
        }
    };
    // The shortest line that has a one-liner (else the shortest).
    let mut order: Vec<((usize, usize, usize), usize)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        order.push((score(c, inputs), i));
    }
    order.sort();
    let pick = |i: usize, inputs: &mut Inputs<'_>| {
        let c = &changes[i];
        let input = match section {
            Section::Cases | Section::Probes => inputs.line(&c.file, &c.id),
            Section::Pytree => pytree_input(c),
            Section::Programs | Section::Serialized => None,
        };
        let (python, key) = one_liner(class, section, c, input.as_deref());
        (c, input, python, key)
    };
    let mut chosen = None;
    for &(_, i) in &order {
        let candidate = pick(i, inputs);
        if candidate.2.is_ok() {
            chosen = Some(candidate);
            break;
        }
    }
    let (c, input, python, key) = match chosen {
        Some(c) => c,
        None => pick(order.first().map(|o| o.1).unwrap_or(0), inputs),
    };
    Example {
        file: c.file.clone(),
        id: c.id.clone(),
        input,
        shown_a: shown(class, c.a.as_ref()),
        shown_b: shown(class, c.b.as_ref()),
        python,
        key,
    }
}

fn pytree_input(c: &Change) -> Option<String> {
    [&c.a, &c.b]
        .into_iter()
        .flatten()
        .find_map(|j| j.get("input").and_then(Json::as_str).map(str::to_string))
}

/// A pytree input naming the namedtuples `oracle/pytree_cases.py` registers.
fn needs_registration(input: &str) -> bool {
    input.contains("my.models.") || input.contains("other.Empty")
}

type OneLiner = (std::result::Result<String, String>, Option<String>);

fn one_liner(class: &Class, section: Section, c: &Change, input: Option<&str>) -> OneLiner {
    match section {
        Section::Cases => {
            let Some(line) = input else {
                return (
                    Err(format!("no case `{}` in corpus/cases/{}", c.id, c.file)),
                    None,
                );
            };
            let py = Case::parse(line)
                .and_then(|case| crate::repro::python_one_liner(&case))
                .map_err(|e| e.to_string());
            (py, None)
        }
        Section::Programs | Section::Probes => {
            let name = program_name(&c.file);
            let pt2 = format!("corpus/programs/{name}.pt2");
            if section == Section::Probes && !matches!(class, Class::KindMissing(_)) {
                let py = input
                    .ok_or_else(|| format!("no probe `{}`", c.id))
                    .and_then(|line| {
                        crate::repro::probe_one_liner(&pt2, line).map_err(|e| e.to_string())
                    });
                return (py, None);
            }
            let key = match class {
                Class::ProgramKey(k) => k.clone(),
                Class::SchemaMajor | Class::SchemaMinor => "schema_version".into(),
                _ => "graph".into(),
            };
            let passes = passes_of(c);
            let py =
                crate::repro::program_one_liner(&pt2, &passes, &key).map_err(|e| e.to_string());
            (py, Some(key))
        }
        Section::Serialized => {
            let pt2 = format!("corpus/programs/{}.pt2", program_name(&c.file));
            let py =
                crate::repro::serialized_one_liner(&pt2, &passes_of(c)).map_err(|e| e.to_string());
            (py, None)
        }
        Section::Pytree => match input {
            Some(i) => (Ok(crate::repro::pytree_one_liner(i)), None),
            None => (
                Err("the tree has no serialized form in either version".into()),
                None,
            ),
        },
    }
}

impl DriftReport {
    /// The report as markdown.
    pub fn markdown(&self) -> String {
        render::markdown(self)
    }

    /// The report as a standalone HTML page.
    pub fn html(&self) -> String {
        render::html(self)
    }

    /// The report as JSON: counts and each example with its one-liner
    /// (what `oracle/check-drift-examples.py` runs).
    pub fn to_json(&self) -> Json {
        render::json(self)
    }
}
