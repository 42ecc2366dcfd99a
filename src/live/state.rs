//! The resume state of a live run (`--state FILE`, `--resume`): where the
//! shard's sequence stopped, the totals so far and the signatures seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seed: u64,
    /// `k/n`.
    pub shard: String,
    /// The shard-local position to resume from: every case before it is done.
    pub next: u64,
    pub cases: u64,
    pub agree: u64,
    pub unsupported: u64,
    /// Items PyTorch could not make (plans it cannot export).
    #[serde(default)]
    pub skipped: u64,
    pub oracle_failures: u64,
    pub divergences_raw: u64,
    pub signatures: BTreeSet<String>,
    pub kept: Vec<String>,
    pub oracle_secs: f64,
    pub rust_secs: f64,
    pub wall_secs: f64,
    /// Per-label counts a target reports (e.g. mutants by class and verdict).
    #[serde(default)]
    pub tallies: BTreeMap<String, u64>,
}

impl State {
    pub fn load(path: &Path) -> Result<State> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::new(format!("not a live-run state: {e}")).in_file(path))
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let tmp = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).expect("state serializes");
        std::fs::write(&tmp, text + "\n").map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }
}
