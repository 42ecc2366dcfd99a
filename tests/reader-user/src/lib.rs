//! A user of the reader crate: nothing here but its dependencies
//! (`torchspec-export`, serde, serde_json with its default features). The
//! test in `tests/` checks that the user's serde_json behaves as it would
//! without `torchspec-export` in the build.
