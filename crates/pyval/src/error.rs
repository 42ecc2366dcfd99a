//! The one Rust error type: bad input or I/O, always with a position
//! (`cases.jsonl:12: at $.value.TensorSpec[0]: ...`). Python exceptions are
//! never this: they are values in results (`pyval::Raise`).

use std::fmt;
use std::path::{Path, PathBuf};

/// A refusal of bad input or a failed read, with as much of its position (file,
/// line, archive member, JSON path) as is known.
#[derive(Debug)]
pub struct Error {
    /// The file, if the input came from one.
    pub file: Option<PathBuf>,
    /// 1-based line number within `file` (non-zero, so the error stays
    /// within 128 bytes).
    pub line: Option<std::num::NonZeroUsize>,
    /// The archive member the input came from (`models/model.json` of a
    /// `.pt2`), shown after `file`.
    pub entry: Option<Box<str>>,
    /// JSON path inside the document (`$.value.dict[0][1]`).
    pub path: Option<Box<str>>,
    /// The Python exception type when the refusal mirrors one
    /// (`SerializeError`, `TypeError`, `JSONDecodeError`); `message` is then
    /// Python's text word for word.
    pub exception: Option<String>,
    /// What is wrong, printed after the position.
    pub message: String,
    /// The exception PyTorch caught and logged before raising this one
    /// (`torch.export.load` logs `load_pt2`'s `RuntimeError` and then reads
    /// the file as the pre-2.8 layout); not part of the message.
    pub logged: Option<Box<Error>>,
}

/// `std::result::Result` with `Error` as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with `message` and no position yet.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            file: None,
            line: None,
            entry: None,
            path: None,
            exception: None,
            message: message.into(),
            logged: None,
        }
    }

    /// An error at the JSON path `path` inside the document.
    pub fn at(path: &str, message: impl Into<String>) -> Error {
        Error {
            path: Some(path.into()),
            ..Error::new(message)
        }
    }

    /// A refusal that mirrors Python raising `exception(message)`.
    pub fn python(exception: &str, message: impl Into<String>) -> Error {
        Error {
            exception: Some(exception.to_string()),
            ..Error::new(message)
        }
    }

    /// Records the JSON path `path`, unless the error already has one (the
    /// innermost path wins).
    pub fn with_path(mut self, path: impl Into<String>) -> Error {
        self.path
            .get_or_insert_with(|| path.into().into_boxed_str());
        self
    }

    /// A failure to read `file`.
    pub fn io(file: &Path, err: std::io::Error) -> Error {
        Error {
            file: Some(file.to_path_buf()),
            ..Error::new(format!("cannot read: {err}"))
        }
    }

    /// Records the file the input came from, unless the error already names
    /// one.
    pub fn in_file(mut self, file: &Path) -> Error {
        self.file.get_or_insert_with(|| file.to_path_buf());
        self
    }

    /// The error came from reading the archive member `entry`; the rest
    /// (JSON path, Python exception, message) is kept as it was.
    pub fn in_entry(mut self, entry: &str) -> Error {
        self.entry.get_or_insert_with(|| entry.into());
        self
    }

    /// Records `logged` as the exception logged before this one.
    pub fn with_logged(mut self, logged: Error) -> Error {
        self.logged = Some(Box::new(logged));
        self
    }

    /// Records the 1-based line `line`, unless the error already has one (`0`
    /// records nothing).
    pub fn on_line(mut self, line: usize) -> Error {
        if self.line.is_none() {
            self.line = std::num::NonZeroUsize::new(line);
        }
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
        if let Some(entry) = &self.entry {
            write!(f, "in `{entry}`: ")?;
        }
        if let Some(path) = &self.path {
            write!(f, "at {path}: ")?;
        }
        if let Some(exception) = &self.exception {
            write!(f, "{exception}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.logged
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
