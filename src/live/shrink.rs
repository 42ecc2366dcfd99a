//! Tree-aware shrinking: proptest's `ValueTree` walk (`simplify` while the
//! case still fails, `complicate` when a step went too far), so every
//! candidate is a case the strategy can produce — valid by construction.
//! Each candidate is judged by a predicate that asks the oracle again.

use proptest::strategy::ValueTree;

use crate::case::Case;

/// The result of a shrink.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest failing case found (the original when nothing smaller failed).
    pub case: Case,
    /// Candidates judged.
    pub steps: usize,
    /// Candidates that still failed (each one smaller than the last).
    pub accepted: usize,
}

/// Shrink the case of `tree` (whose `current()` fails) while `fails` holds,
/// judging at most `budget` candidates. Ids are set to `id` throughout.
pub fn shrink<T: ValueTree<Value = Case> + ?Sized>(
    tree: &mut T,
    id: &str,
    budget: usize,
    mut fails: impl FnMut(&Case) -> bool,
) -> Shrunk {
    let with_id = |mut c: Case| {
        c.id = id.to_string();
        c
    };
    let mut best = with_id(tree.current());
    let (mut steps, mut accepted) = (0, 0);
    if !tree.simplify() {
        return Shrunk {
            case: best,
            steps,
            accepted,
        };
    }
    while steps < budget {
        let candidate = with_id(tree.current());
        steps += 1;
        if fails(&candidate) {
            best = candidate;
            accepted += 1;
            if !tree.simplify() {
                break;
            }
        } else if !tree.complicate() {
            break;
        }
    }
    Shrunk {
        case: best,
        steps,
        accepted,
    }
}
