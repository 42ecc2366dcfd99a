//! The one Rust error type: bad input or I/O, always with a position
//! (`cases.jsonl:12: at $.value.TensorSpec[0]: ...`). Python exceptions are
//! never this: they are values in results (`pyval::Raise`). A program
//! matches on its [`ErrorKind`]; the cause (an I/O error, the exception
//! PyTorch logged first) is its `source()`.

use std::fmt;
use std::path::{Path, PathBuf};

/// What failed, for a program to match on (the message says it for a
/// person). New kinds may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read; the operating system's error is the
    /// `source()`.
    Io,
    /// The bytes are not an archive `torch.export.load` opens: not a zip,
    /// a damaged one, a missing or unreadable entry, weights the configs
    /// name but the archive does not hold.
    NotAnArchive,
    /// The program document is not a program: not UTF-8, not JSON, or not
    /// the shape schema 8.20 gives it.
    NotAProgram,
    /// The program's schema version (or the archive's version) is one
    /// PyTorch 2.15.0 refuses.
    SchemaVersion,
    /// PyTorch refuses the program with the exception in
    /// [`Error::exception`] (its deserializer, the constructor's checks).
    Refused,
    /// The reference does not model this input, so it cannot say what
    /// PyTorch would do.
    Unsupported,
    /// A typed read asked for another element type than the tensor's
    /// dtype (`to_vec::<f32>()` of a `torch.int64` tensor).
    DtypeMismatch,
    /// No tensor, node or entry of that name.
    NotFound,
    /// Any other bad input: a case line, a probe file, a registrations file,
    /// an argument.
    Invalid,
}

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
    /// The kind a stage recorded, the error this one reports and the
    /// exception logged before it, boxed (most errors have none of them) so
    /// the error stays within 128 bytes.
    more: Option<Box<More>>,
}

/// What an [`Error`] rarely has.
#[derive(Debug, Default)]
struct More {
    /// What failed, once a stage has said so ([`Error::kind`] otherwise
    /// tells from `exception`).
    kind: Option<ErrorKind>,
    /// The error this one reports (an `std::io::Error`, a zip error).
    cause: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    /// [`Error::logged`].
    logged: Option<Error>,
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
            more: None,
        }
    }

    /// What failed: the kind a stage recorded, else [`ErrorKind::Refused`]
    /// for an error that mirrors a Python exception and
    /// [`ErrorKind::Invalid`] for any other.
    pub fn kind(&self) -> ErrorKind {
        match (self.more.as_ref().and_then(|m| m.kind), &self.exception) {
            (Some(kind), _) => kind,
            (None, Some(_)) => ErrorKind::Refused,
            (None, None) => ErrorKind::Invalid,
        }
    }

    /// Records `kind` as what failed, unless an inner stage already
    /// recorded one (the innermost kind wins, as the innermost path does).
    pub fn of_kind(mut self, kind: ErrorKind) -> Error {
        self.more
            .get_or_insert_with(Box::default)
            .kind
            .get_or_insert(kind);
        self
    }

    /// Keeps `cause` as this error's `source()`; the message is unchanged.
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.more.get_or_insert_with(Box::default).cause = Some(Box::new(cause));
        self
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

    /// A failure to read `file` ([`ErrorKind::Io`], `err` its `source()`).
    pub fn io(file: &Path, err: std::io::Error) -> Error {
        Error {
            file: Some(file.to_path_buf()),
            ..Error::new(format!("cannot read: {err}"))
        }
        .of_kind(ErrorKind::Io)
        .caused_by(err)
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
        self.more.get_or_insert_with(Box::default).logged = Some(logged);
        self
    }

    /// The exception PyTorch caught and logged before raising this one
    /// (`torch.export.load` logs `load_pt2`'s `RuntimeError` and then reads
    /// the file as the pre-2.8 layout); not part of the message.
    pub fn logged(&self) -> Option<&Error> {
        self.more.as_ref().and_then(|m| m.logged.as_ref())
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
    /// The error this one reports ([`Error::caused_by`]), else the
    /// exception PyTorch logged before raising this one.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.more.as_ref().and_then(|m| m.cause.as_ref()) {
            Some(cause) => Some(cause.as_ref() as &(dyn std::error::Error + 'static)),
            None => self
                .logged()
                .map(|e| e as &(dyn std::error::Error + 'static)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_stays_small() {
        assert!(std::mem::size_of::<Error>() <= 128);
    }
}
