//! A golden set on disk: `corpus/goldens/torch-X/` read whole, each file's
//! lines keyed by id (case files, `programs/NAME.jsonl`,
//! `programs/NAME.probes.jsonl`, `pytree/treespecs.jsonl`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::error::{Error, Result};

/// Where golden sets live, relative to the repository root.
pub const GOLDENS_ROOT: &str = "corpus/goldens";

/// What a golden file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// `NAME.jsonl`: result lines of `corpus/cases/NAME.jsonl`.
    Cases,
    /// `programs/NAME.jsonl`: program reports, one line per pass pipeline.
    Programs,
    /// `programs/NAME.probes.jsonl`: input probes through `ep.module()`.
    Probes,
    /// `programs/NAME.serialized.jsonl`: the `models/model.json` that
    /// `torch.export.save` writes after each pass pipeline.
    Serialized,
    /// `pytree/*.jsonl`: TreeSpecs of `oracle/pytree_cases.py`.
    Pytree,
}

impl Section {
    pub fn of(rel: &str) -> Section {
        if let Some(rest) = rel.strip_prefix("programs/") {
            if rest.ends_with(".probes.jsonl") {
                Section::Probes
            } else if rest.ends_with(".serialized.jsonl") {
                Section::Serialized
            } else {
                Section::Programs
            }
        } else if rel.starts_with("pytree/") {
            Section::Pytree
        } else {
            Section::Cases
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Section::Cases => "case",
            Section::Programs => "program",
            Section::Probes => "probe",
            Section::Serialized => "serialized",
            Section::Pytree => "pytree",
        }
    }
}

/// One golden line.
#[derive(Clone, Debug)]
pub struct GoldenLine {
    pub id: String,
    /// 1-based line number in its file.
    pub line: usize,
    /// The line as the oracle wrote it.
    pub text: String,
    pub json: Json,
}

/// One golden file: its lines in order, and where each id is.
#[derive(Clone, Debug, Default)]
pub struct GoldenFile {
    pub lines: Vec<GoldenLine>,
    index: HashMap<String, usize>,
}

impl GoldenFile {
    pub fn get(&self, id: &str) -> Option<&GoldenLine> {
        self.index.get(id).map(|&i| &self.lines[i])
    }
}

/// Every golden file of one torch version.
#[derive(Clone, Debug)]
pub struct GoldenSet {
    pub version: String,
    pub dir: PathBuf,
    /// Files by path relative to `dir` (`build-vars.jsonl`, `programs/cond.jsonl`).
    pub files: BTreeMap<String, GoldenFile>,
}

impl GoldenSet {
    /// The directory of version `version` under `root`.
    pub fn dir_of(root: &Path, version: &str) -> PathBuf {
        root.join(GOLDENS_ROOT).join(format!("torch-{version}"))
    }

    /// Read `corpus/goldens/torch-VERSION/` under `root`. A missing set is
    /// an error that says how to make it.
    pub fn open(root: &Path, version: &str) -> Result<GoldenSet> {
        if version.is_empty()
            || !version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'))
        {
            return Err(Error::new(format!(
                "`{version}` is not a torch version (like 2.14.1)"
            )));
        }
        let dir = Self::dir_of(root, version);
        if !dir.is_dir() {
            return Err(Error::new(format!(
                "no golden set for torch {version}: {} is not a directory (run `oracle/regen-goldens.sh --torch {version}`)",
                dir.display()
            )));
        }
        let mut files = BTreeMap::new();
        for sub in ["", "programs", "pytree", "regressions"] {
            let d = if sub.is_empty() {
                dir.clone()
            } else {
                dir.join(sub)
            };
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !sub.is_empty() => continue,
                Err(e) => return Err(Error::io(&d, e)),
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".jsonl"))
                .collect();
            names.sort();
            for name in names {
                let rel = if sub.is_empty() {
                    name.clone()
                } else {
                    format!("{sub}/{name}")
                };
                let file = read_file(&d.join(&name))?;
                files.insert(rel, file);
            }
        }
        Ok(GoldenSet {
            version: version.to_string(),
            dir,
            files,
        })
    }

    /// The golden line `id` of file `rel`.
    pub fn get(&self, rel: &str, id: &str) -> Option<&GoldenLine> {
        self.files.get(rel).and_then(|f| f.get(id))
    }
}

fn read_file(path: &Path) -> Result<GoldenFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = GoldenFile::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |m: String| Error::new(m).on_line(i + 1).in_file(path);
        let json: Json =
            serde_json::from_str(line).map_err(|e| err(format!("invalid JSON: {e}")))?;
        let id = match (json.get("id"), json.get("register")) {
            (Some(Json::String(id)), _) => id.clone(),
            // The first line of the pytree goldens: the registered namedtuples.
            (None, Some(_)) => "(register)".to_string(),
            _ => return Err(err("a golden line needs a string `id`".into())),
        };
        if out.index.insert(id.clone(), out.lines.len()).is_some() {
            return Err(err(format!("duplicate id `{id}`")));
        }
        out.lines.push(GoldenLine {
            id,
            line: i + 1,
            text: line.to_string(),
            json,
        });
    }
    Ok(out)
}
