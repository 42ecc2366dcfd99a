//! The pytree rows of the check: each TreeSpec of
//! `GOLDENS/pytree/treespecs.jsonl` (written by `oracle/pytree_cases.py`)
//! loaded by the reference, then printed (`str`), counted (`num_leaves`),
//! dumped, pretty-printed and unflattened, each field against PyTorch's.
//! A row diverges in the fields that differ; it is unsupported when no
//! field differs and one is not modelled.

use std::path::Path;

use serde_json::Value as Json;

use super::{AllowList, CaseReport, Divergence, Verdict};
use crate::error::{Error, Result};
use crate::pytree::{
    tree_unflatten, treespec_dumps, treespec_loads, treespec_pprint, Registry, TreeSpec,
};
use crate::pyval::{PyResult, Raise, Value};

/// The pytree golden file, relative to a golden set.
pub const TREESPECS: &str = "pytree/treespecs.jsonl";

/// One field's comparison.
enum Field {
    Agree,
    Differs(String),
    Unsupported(String),
}

/// The rows of `GOLDENS/pytree/treespecs.jsonl` (one failing row when the
/// file is missing).
pub(super) fn rows(
    root: &Path,
    goldens: &str,
    allow: &AllowList,
    out: &mut Vec<CaseReport>,
) -> Result<()> {
    let path = root.join(goldens).join(TREESPECS);
    let file = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
    let row = |id: &str, line, verdict| CaseReport {
        allowed: allow.get(id).cloned(),
        id: id.to_string(),
        kind: "pytree",
        category: "treespecs".into(),
        file: file.clone(),
        line,
        verdict,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(row(TREESPECS, 0, Verdict::MissingGolden));
            return Ok(());
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut registry = None;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let err = |m: &str| Error::new(m).on_line(i + 1).in_file(&path);
        let g: Json = serde_json::from_str(line).map_err(|e| err(&format!("invalid JSON: {e}")))?;
        if g.get("register").is_some() {
            registry = Some(registry_from(&g).map_err(|m| err(&m))?);
            continue;
        }
        let reg = registry
            .as_ref()
            .ok_or_else(|| err("no `register` header line"))?;
        let id = g
            .get("id")
            .and_then(Json::as_str)
            .ok_or_else(|| err("missing string `id`"))?;
        out.push(row(id, i + 1, verdict(&g, reg)));
    }
    Ok(())
}

/// The registry of the goldens' header line
/// `{"register": [[name, module, qualname, [fields]], ...]}`: `import torch`
/// plus the namedtuples `oracle/pytree_cases.py` registered.
pub fn registry_from(header: &Json) -> std::result::Result<Registry, String> {
    let bad = || format!("a `register` entry must be [name, module, qualname, [fields]]: {header}");
    let mut r = Registry::torch();
    for entry in header["register"].as_array().ok_or_else(bad)? {
        let parts: Option<Vec<&str>> = entry
            .as_array()
            .filter(|a| a.len() == 4)
            .and_then(|a| a[..3].iter().map(Json::as_str).collect());
        let fields: Option<Vec<&str>> = entry[3]
            .as_array()
            .and_then(|f| f.iter().map(Json::as_str).collect());
        let (Some(p), Some(fields)) = (parts, fields) else {
            return Err(bad());
        };
        r.register_namedtuple(p[0], p[1], p[2], &fields);
    }
    Ok(r)
}

/// A golden line against the reference, field by field.
fn verdict(g: &Json, reg: &Registry) -> Verdict {
    let Some(input) = g.get("input").and_then(Json::as_str) else {
        // An older torch's `tree_error` line: nothing to load.
        let keys = g
            .as_object()
            .map(|m| m.keys().filter(|k| *k != "id").cloned().collect());
        return Verdict::Diverge(Divergence::new(
            format!("PyTorch: {g}; the reference has no tree error"),
            keys.unwrap_or_default(),
        ));
    };
    let fields = match treespec_loads(input, reg) {
        Err(e) => vec![("loads", field(Err(e), g.get("error").unwrap_or(&g["str"])))],
        Ok(_) if g.get("error").is_some() => vec![("loads", field(Ok(String::new()), &g["error"]))],
        Ok(spec) => spec_fields(&spec, g),
    };
    combine(fields)
}

/// Each field of a loaded spec against the golden line.
fn spec_fields(spec: &TreeSpec, g: &Json) -> Vec<(&'static str, Field)> {
    let leaves: Vec<Value> = (0..=spec.num_leaves() as i64).map(Value::int).collect();
    let unflat = tree_unflatten(&leaves, spec).map(|v| v.repr().unwrap_or_default());
    let num_leaves = if g["num_leaves"].as_u64() == Some(spec.num_leaves() as u64) {
        Field::Agree
    } else {
        Field::Differs(format!("{} != {}", spec.num_leaves(), g["num_leaves"]))
    };
    vec![
        ("str", field(spec.to_str(), &g["str"])),
        ("num_leaves", num_leaves),
        (
            "dumps",
            field(
                treespec_dumps(spec),
                g.get("dumps").unwrap_or(&g["dumps_error"]),
            ),
        ),
        ("pprint", field(treespec_pprint(spec), &g["pprint"])),
        ("unflatten", field(unflat, &g["unflatten_error"])),
    ]
}

/// An outcome against a golden that is a string, `{"error": {...}}` or
/// `{"type", "message"}`.
fn field(got: PyResult<String>, want: &Json) -> Field {
    let want_error = want.get("error").or(want.get("type").map(|_| want));
    let agree = match (&got, want_error) {
        (Ok(s), None) => want.as_str() == Some(s.as_str()),
        (Err(Raise::Exception(e)), Some(w)) => {
            w["type"].as_str() == Some(e.type_name.as_str())
                && w["message"].as_str() == Some(e.message.as_str())
        }
        (Err(Raise::Unsupported(why)), _) => return Field::Unsupported(why.clone()),
        _ => false,
    };
    if agree {
        Field::Agree
    } else {
        Field::Differs(format!("want {want}\n  got  {got:?}"))
    }
}

/// The row's verdict: diverging in the fields that differ, else unsupported
/// in the first field not modelled, else agreeing.
fn combine(fields: Vec<(&'static str, Field)>) -> Verdict {
    let mut differs = Vec::new();
    let mut diff = String::new();
    let mut unsupported = None;
    for (name, f) in fields {
        match f {
            Field::Agree => {}
            Field::Differs(d) => {
                diff.push_str(&format!("`{name}`\n  {d}\n"));
                differs.push(name.to_string());
            }
            Field::Unsupported(why) => {
                unsupported.get_or_insert(format!("`{name}`: {why}"));
            }
        }
    }
    match (differs.is_empty(), unsupported) {
        (false, _) => Verdict::Diverge(Divergence::new(diff, differs)),
        (true, Some(why)) => Verdict::Unsupported(why),
        (true, None) => Verdict::Agree,
    }
}
