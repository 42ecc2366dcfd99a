//! The repository's code generators, run as `cargo xtask` (rust-analyzer's
//! convention): they read upstream's files and write Rust sources of the
//! crates, and depend on none of those crates, so a generated file that no
//! longer compiles can always be generated again.

pub mod codegen;

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
