//! Case and result files: JSON Lines, one object per line, read one line at
//! a time (memory stays bounded as a file grows), with errors that name the
//! file and line.

use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::io::{BufRead, Write};
use std::path::Path;

use super::deep::{with_stack_for, SHALLOW};
use super::eval::eval_case_into;
use super::read::{openers, MAX_DEPTH};
use super::result::ResultLine;
use super::wire::Case;
use crate::error::{Error, Result};

/// Calls `f` with each non-blank line of a JSON Lines text and its number
/// (from 1). Blank lines are allowed only at the end; a line that is not
/// UTF-8 is an error.
fn each_line(mut reader: impl BufRead, mut f: impl FnMut(usize, &str) -> Result<()>) -> Result<()> {
    let mut buf = Vec::new();
    let mut n = 0;
    let mut blank = None;
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::new(format!("cannot read: {e}")))?
            == 0
        {
            return Ok(());
        }
        n += 1;
        let line = std::str::from_utf8(&buf)
            .map_err(|e| Error::new(format!("not valid UTF-8: {e}")).on_line(n))?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            blank.get_or_insert(n);
            continue;
        }
        if let Some(b) = blank {
            return Err(Error::new("blank line in the middle of the file").on_line(b));
        }
        f(n, line)?;
    }
}

/// The ids seen so far, as 128-bit hashes: 16 bytes a case however long
/// its id (two ids colliding is a 2^-128 chance).
#[derive(Default)]
struct SeenIds(HashSet<u128>);

impl SeenIds {
    fn insert(&mut self, id: &str) -> bool {
        let a = BuildHasherDefault::<DefaultHasher>::default().hash_one(id);
        let b = BuildHasherDefault::<DefaultHasher>::default().hash_one((id, 0x9e37_79b9u32));
        self.0.insert(((a as u128) << 64) | b as u128)
    }
}

/// Calls `f` with each case of a case file's text, in order; the first
/// malformed line is the error (and `f` has then seen the lines before it).
pub fn each_case(reader: impl BufRead, mut f: impl FnMut(usize, Case) -> Result<()>) -> Result<()> {
    let mut seen = SeenIds::default();
    each_line(reader, |n, line| {
        let case = Case::parse(line).map_err(|e| e.on_line(n))?;
        if !seen.insert(&case.id) {
            return Err(Error::at("$.id", format!("duplicate id `{}`", case.id)).on_line(n));
        }
        f(n, case)
    })
}

/// [`each_case`] over a file.
pub fn each_case_in(path: &Path, f: impl FnMut(usize, Case) -> Result<()>) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    each_case(std::io::BufReader::with_capacity(1 << 16, file), f).map_err(|e| e.in_file(path))
}

/// `torchspec eval`: each case evaluated, its result line written to `out`,
/// in order. A malformed file is an error before any result is written, as
/// with the oracle. Each case is evaluated as soon as it is read and then
/// dropped (what it allocated is reused by the next one), its line kept
/// in memory, up to [`MAX_HELD_OUTPUT`] bytes of lines; past that the rest
/// of the file is only checked, and then read again and evaluated one case
/// at a time (memory stays bounded however large the file). `open` gives
/// the input afresh for each pass. Evaluation is total and each case
/// starts from a fresh state, so evaluating before the file is known to be
/// well formed changes no line.
pub fn eval_cases<R: BufRead>(open: impl FnMut() -> Result<R>, out: &mut impl Write) -> Result<()> {
    eval_cases_holding(open, out, MAX_HELD_OUTPUT)
}

/// [`eval_cases`], holding at most about `max_held` bytes of lines.
pub fn eval_cases_holding<R: BufRead>(
    mut open: impl FnMut() -> Result<R>,
    out: &mut impl Write,
    max_held: usize,
) -> Result<()> {
    // Lines in chunks of about `CHUNK` bytes: no copy as the output grows.
    const CHUNK: usize = 1 << 20;
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut line = Vec::with_capacity(CHUNK + (CHUNK >> 2));
    let mut held_bytes = 0usize;
    let mut scratch = String::with_capacity(1 << 12);
    let mut evaluated = 0usize;
    let mut full = false;
    each_case(open()?, |_, case| {
        if !full {
            let before = line.len();
            eval_case_into(&case, &mut line, &mut scratch);
            held_bytes += line.len() - before;
            evaluated += 1;
            full = held_bytes > max_held;
            if line.len() >= CHUNK {
                let next = Vec::with_capacity(CHUNK + (CHUNK >> 2));
                held.push(std::mem::replace(&mut line, next));
            }
        }
        Ok(())
    })?;
    held.push(line);
    let write = |out: &mut dyn Write, bytes: &[u8]| {
        out.write_all(bytes)
            .map_err(|e| Error::new(format!("cannot write a result: {e}")))
    };
    for chunk in &held {
        write(out, chunk)?;
    }
    if !full {
        return Ok(());
    }
    let mut line = held.swap_remove(0);
    drop(held);
    let mut seen = 0usize;
    each_case(open()?, |_, case| {
        seen += 1;
        if seen <= evaluated {
            return Ok(());
        }
        line.clear();
        eval_case_into(&case, &mut line, &mut scratch);
        write(out, &line)
    })
}

/// How many bytes of result lines `eval_cases` holds before it stops
/// evaluating and reads the file twice.
pub const MAX_HELD_OUTPUT: usize = 64 << 20;

/// [`eval_cases`] on a file.
pub fn eval_file(path: &Path, out: &mut impl Write) -> Result<()> {
    let open = || {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(std::io::BufReader::with_capacity(1 << 16, file))
    };
    eval_cases(open, out).map_err(|e| e.in_file(path))
}

/// Parse a case file's text; the first malformed line is the error.
///
/// ```
/// use torchspec::case::file::parse_cases;
///
/// let text = r#"{"id":"a","kind":"build","vars":[{"kind":"IntVar","name":"n"}],"value":{"var":0}}"#;
/// let cases = parse_cases(text).unwrap();
/// assert_eq!((cases[0].0, cases[0].1.id.as_str()), (1, "a"));
///
/// // A line that is not a case names its line number.
/// let err = parse_cases(&format!("{text}\n{{\"id\": 3}}")).unwrap_err();
/// assert!(err.to_string().contains("line 2"), "{err}");
/// ```
pub fn parse_cases(text: &str) -> Result<Vec<(usize, Case)>> {
    let mut out = Vec::new();
    each_case(text.as_bytes(), |n, case| {
        out.push((n, case));
        Ok(())
    })?;
    Ok(out)
}

/// A whole case file in memory (small files; `each_case_in` streams).
pub fn read_cases(path: &Path) -> Result<Vec<(usize, Case)>> {
    let mut out = Vec::new();
    each_case_in(path, |n, case| {
        out.push((n, case));
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` with each result line of a result file's text, in order.
pub fn each_result(
    reader: impl BufRead,
    mut f: impl FnMut(usize, ResultLine) -> Result<()>,
) -> Result<()> {
    each_line(reader, |n, line| {
        let result = read_result(line).map_err(|e| e.on_line(n))?;
        f(n, result)
    })
}

/// One result line. Results of deep cases nest as deep as the cases (up to
/// `read::MAX_DEPTH`): no recursion limit, and a stack of their own.
fn read_result(line: &str) -> Result<ResultLine> {
    let read = || {
        let mut de = serde_json::Deserializer::from_str(line);
        de.disable_recursion_limit();
        let json = serde::Deserialize::deserialize(&mut de)
            .and_then(|json: serde_json::Value| de.end().map(|()| json))
            .map_err(|e| Error::new(format!("invalid JSON: {e}")))?;
        ResultLine::from_json(&json)
    };
    if openers(line) <= SHALLOW {
        read()
    } else {
        with_stack_for(MAX_DEPTH, read)
    }
}

/// Parse a result file's text.
pub fn parse_results(text: &str) -> Result<Vec<ResultLine>> {
    let mut out = Vec::new();
    each_result(text.as_bytes(), |_, r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

pub fn read_results(path: &Path) -> Result<Vec<ResultLine>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_results(&text).map_err(|e| e.in_file(path))
}
