//! The live fuzzer's cases: the proptest strategies of `src/testing/`, one
//! family per index (round robin), each case's value tree built from
//! `(seed, index)` alone so a case can be regenerated — to shrink it, on
//! another shard, after `--resume` — without replaying the ones before it.

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::case::{Case, CaseKind};
use crate::testing::{derived, export_spec, lookup, strategies};

/// The generator families, in round-robin order: the build, lookup and
/// source-name strategies, then each derived-expression family.
pub const FAMILIES: [&str; 11] = [
    CaseKind::Build.name(),
    CaseKind::Lookup.name(),
    CaseKind::SourceName.name(),
    "derived-arith",
    "derived-div",
    "derived-cmp",
    "derived-logic",
    "derived-spec",
    "derived-bool",
    "derived-float",
    "derived-pow",
];

/// Families a run takes only when asked (`fuzz --live --export-spec`):
/// their oracle is much slower than the others'.
pub const OPT_IN_FAMILIES: [&str; 1] = [CaseKind::ExportSpec.name()];

/// The strategy of a family of [`FAMILIES`] or [`OPT_IN_FAMILIES`].
pub fn strategy(family: &str) -> Option<BoxedStrategy<Case>> {
    Some(match CaseKind::from_name(family) {
        Some(CaseKind::Build) => strategies::build_case().boxed(),
        Some(CaseKind::Lookup) => lookup::lookup_case().boxed(),
        Some(CaseKind::SourceName) => lookup::source_name_case().boxed(),
        Some(CaseKind::ExportSpec) => export_spec::export_spec_case().boxed(),
        None => derived::family_case(family.strip_prefix("derived-")?)?,
    })
}

/// The family of generated case `index` in the default round robin.
pub fn family_of(index: u64) -> &'static str {
    FAMILIES[(index % FAMILIES.len() as u64) as usize]
}

/// The id of generated case `index` of `seed` in the default round robin.
pub fn case_id(seed: u64, index: u64) -> String {
    format!("live-s{seed}-{index}")
}

/// The strategies, built once per worker (building them is not free).
pub struct Generator {
    families: Vec<&'static str>,
    strategies: Vec<BoxedStrategy<Case>>,
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new()
    }
}

impl Generator {
    pub fn new() -> Generator {
        Generator::of(&FAMILIES)
    }

    /// A generator over `families` alone, round robin.
    pub fn of(families: &[&'static str]) -> Generator {
        Generator {
            families: families.to_vec(),
            strategies: families
                .iter()
                .map(|f| strategy(f).expect("every family has a strategy"))
                .collect(),
        }
    }

    fn is_default(&self) -> bool {
        self.families == FAMILIES
    }

    /// The family of case `index`.
    pub fn family(&self, index: u64) -> &'static str {
        self.families[(index % self.families.len() as u64) as usize]
    }

    /// The id of case `index` of `seed` (`live-sSEED-INDEX`, or with the
    /// family first for a run over opt-in families).
    pub fn id(&self, seed: u64, index: u64) -> String {
        if self.is_default() {
            case_id(seed, index)
        } else {
            format!(
                "live-{}-s{seed}-{index}",
                self.families.join("+").replace('_', "-")
            )
        }
    }

    /// The value tree of case `index` of `seed` (its `current()` is the case,
    /// with id [`case_id`]).
    pub fn tree(&self, seed: u64, index: u64) -> Box<dyn ValueTree<Value = Case>> {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..16].copy_from_slice(&index.to_le_bytes());
        bytes[16..24].copy_from_slice(b"tslive01");
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        let strategy = &self.strategies[(index % self.strategies.len() as u64) as usize];
        Box::new(
            strategy
                .new_tree(&mut runner)
                .expect("case strategies never reject"),
        )
    }

    /// Case `index` of `seed`.
    pub fn case(&self, seed: u64, index: u64) -> Case {
        let mut case = self.tree(seed, index).current();
        case.id = self.id(seed, index);
        case
    }
}
