//! Why building an `ExportedProgram` stopped (`LoadFailure`): what PyTorch
//! raises in the deserializer or the constructor's verifiers, or what the
//! reference does not model. Shared by `load` and `verify`.

use torchspec_pyval::error::Error;

/// How an [`LoadFailure::untyped`] answer starts.
const UNTYPED: &str = "a value the schema's type does not fit, kept as it came: ";

/// Why loading stopped: PyTorch raises (type, message), or the reference
/// does not model the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadFailure {
    /// PyTorch raises `exception(message)`.
    Python {
        /// The exception type's name (`KeyError`).
        exception: String,
        /// The exception's message.
        message: String,
    },
    /// What the reference does not model.
    Unsupported(String),
}

impl LoadFailure {
    pub(crate) fn py(exception: &str, message: impl Into<String>) -> LoadFailure {
        LoadFailure::Python {
            exception: exception.into(),
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(what: impl Into<String>) -> LoadFailure {
        LoadFailure::Unsupported(what.into())
    }

    /// Unsupported: a list or dict field kept as it came because a value in
    /// it does not fit the schema's type ([`LoadFailure::naming_untyped`]
    /// adds which value and the JSON type it had).
    pub(crate) fn untyped(what: impl std::fmt::Display) -> LoadFailure {
        LoadFailure::Unsupported(format!("{UNTYPED}{what}"))
    }

    /// An [`LoadFailure::untyped`] answer with the first value that did not
    /// fit the schema (`at PATH: expected ..., found ...`) appended.
    pub(crate) fn naming_untyped(self, loose: &[String]) -> LoadFailure {
        match (self, loose.first()) {
            (LoadFailure::Unsupported(what), Some(first)) if what.starts_with(UNTYPED) => {
                LoadFailure::Unsupported(format!("{what} ({first})"))
            }
            (other, _) => other,
        }
    }

    /// The crate error: Python's exception, or a refusal naming what is unsupported.
    pub fn into_error(self) -> Error {
        match self {
            LoadFailure::Python { exception, message } => Error::python(&exception, message),
            LoadFailure::Unsupported(what) => {
                Error::new(format!("unsupported by the reference loader: {what}"))
                    .of_kind(torchspec_pyval::ErrorKind::Unsupported)
            }
        }
    }
}
