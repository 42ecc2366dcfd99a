//! The one Rust error type: bad input or I/O, always with a position
//! (`cases.jsonl:12: at $.value.TensorSpec[0]: ...`). Python exceptions are
//! never this: they are values in results (`pyval::Raise`).

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Error {
    /// The file, if the input came from one.
    pub file: Option<PathBuf>,
    /// 1-based line number within `file`.
    pub line: Option<usize>,
    /// JSON path inside the document (`$.value.dict[0][1]`).
    pub path: Option<String>,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            file: None,
            line: None,
            path: None,
            message: message.into(),
        }
    }

    pub fn at(path: &str, message: impl Into<String>) -> Error {
        Error {
            path: Some(path.to_string()),
            ..Error::new(message)
        }
    }

    pub fn io(file: &Path, err: std::io::Error) -> Error {
        Error {
            file: Some(file.to_path_buf()),
            ..Error::new(format!("cannot read: {err}"))
        }
    }

    pub fn in_file(mut self, file: &Path) -> Error {
        self.file.get_or_insert_with(|| file.to_path_buf());
        self
    }

    pub fn on_line(mut self, line: usize) -> Error {
        self.line.get_or_insert(line);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{}:{line}: ", file.display())?,
            (Some(file), None) => write!(f, "{}: ", file.display())?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        if let Some(path) = &self.path {
            write!(f, "at {path}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
