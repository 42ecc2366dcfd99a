//! The repository's code generators and design figures, run as `cargo
//! xtask` (rust-analyzer's convention): `codegen` reads upstream's files and
//! writes Rust sources of the crates, and depends on none of those crates,
//! so a generated file that no longer compiles can always be generated
//! again; `metrics` reads a checkout's text and prints the figures of the
//! design issue (cycles, long files and functions, where names are
//! written, doc examples).

pub mod codegen;
pub mod metrics;

/// A generator's failure: what went wrong, for a person to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Error {
        Error(message.into())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}
