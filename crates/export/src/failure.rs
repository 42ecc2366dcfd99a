//! Why building an `ExportedProgram` stopped (`LoadFailure`): what PyTorch
//! raises in the deserializer or the constructor's verifiers, or what the
//! reference does not model. Shared by `load` and `verify`.

use torchspec_pyval::error::Error;

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
