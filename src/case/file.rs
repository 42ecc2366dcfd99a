//! Case and result files: JSON Lines, one object per line, with errors that
//! name the file and line.

use std::path::Path;

use super::result::ResultLine;
use super::wire::Case;
use crate::error::{Error, Result};

/// The non-blank lines of a JSON Lines text, numbered from 1. Blank lines
/// are allowed only at the end.
fn lines(text: &str) -> Result<Vec<(usize, &str)>> {
    let all: Vec<&str> = text.lines().collect();
    let last = all
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut out = Vec::with_capacity(last);
    for (i, line) in all[..last].iter().enumerate() {
        if line.trim().is_empty() {
            return Err(Error::new("blank line in the middle of the file").on_line(i + 1));
        }
        out.push((i + 1, *line));
    }
    Ok(out)
}

/// Parse a case file's text; the first malformed line is the error.
pub fn parse_cases(text: &str) -> Result<Vec<(usize, Case)>> {
    let mut seen = std::collections::HashSet::new();
    lines(text)?
        .into_iter()
        .map(|(n, line)| {
            let case = Case::parse(line).map_err(|e| e.on_line(n))?;
            if !seen.insert(case.id.clone()) {
                return Err(Error::at("$.id", format!("duplicate id `{}`", case.id)).on_line(n));
            }
            Ok((n, case))
        })
        .collect()
}

pub fn read_cases(path: &Path) -> Result<Vec<(usize, Case)>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_cases(&text).map_err(|e| e.in_file(path))
}

/// Parse a result file's text.
pub fn parse_results(text: &str) -> Result<Vec<ResultLine>> {
    lines(text)?
        .into_iter()
        .map(|(n, line)| {
            let json: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| Error::new(format!("invalid JSON: {e}")).on_line(n))?;
            ResultLine::from_json(&json).map_err(|e| e.on_line(n))
        })
        .collect()
}

pub fn read_results(path: &Path) -> Result<Vec<ResultLine>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_results(&text).map_err(|e| e.in_file(path))
}
