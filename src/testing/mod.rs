//! Proptest strategies for cases, shared by `torchspec gen`, the property
//! tests and the fuzz targets. Generators build wire cases (`case::Case`),
//! so anything generated can be written out, captured by the oracle and
//! replayed.

pub mod derived;
pub mod export_spec;
pub mod fuzz;
pub mod lookup;
pub mod pyjson;
pub mod pytree;
pub mod strategies;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::case::Case;

/// `count` cases from `strategy`, deterministic in `seed`.
pub fn sample<S: Strategy<Value = Case>>(
    strategy: S,
    seed: u64,
    count: usize,
    id_prefix: &str,
) -> Vec<Case> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    (0..count)
        .map(|i| {
            let mut case = strategy
                .new_tree(&mut runner)
                .expect("case strategies never reject")
                .current();
            case.id = format!("{id_prefix}-{i:05}");
            case
        })
        .collect()
}
