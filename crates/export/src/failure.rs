//! Why building an `ExportedProgram` stopped (`LoadFailure`): what PyTorch
//! raises in the deserializer or the constructor's verifiers, or what the
//! reference does not model. Shared by `load` and `verify`; the type is the
//! workspace's one "Python raised this / not modelled" type,
//! [`torchspec_pyval::Raise`].

use torchspec_pyval::error::Error;
use torchspec_pyval::Raise;

/// How an [`untyped`] answer starts.
const UNTYPED: &str = "a value the schema's type does not fit, kept as it came: ";

/// Why loading stopped: PyTorch raises ([`Raise::Exception`], type and
/// message), or the reference does not model the input
/// ([`Raise::Unsupported`]).
pub type LoadFailure = Raise;

/// Unsupported: a list or dict field kept as it came because a value in
/// it does not fit the schema's type ([`naming_untyped`] adds which value
/// and the JSON type it had).
pub(crate) fn untyped(what: impl std::fmt::Display) -> LoadFailure {
    Raise::Unsupported(format!("{UNTYPED}{what}"))
}

/// An [`untyped`] answer with the first value that did not fit the schema
/// (`at PATH: expected ..., found ...`) appended.
pub(crate) fn naming_untyped(failure: LoadFailure, loose: &[String]) -> LoadFailure {
    match (failure, loose.first()) {
        (Raise::Unsupported(what), Some(first)) if what.starts_with(UNTYPED) => {
            Raise::Unsupported(format!("{what} ({first})"))
        }
        (other, _) => other,
    }
}

/// The crate error: Python's exception, or a refusal naming what is unsupported.
pub fn into_error(failure: LoadFailure) -> Error {
    match failure {
        Raise::Exception(e) => Error::python(&e.type_name, e.message),
        Raise::Unsupported(what) => {
            Error::new(format!("unsupported by the reference loader: {what}"))
                .of_kind(torchspec_pyval::ErrorKind::Unsupported)
        }
    }
}
