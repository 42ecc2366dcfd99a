//! Properties of the lookup walk over generated spec trees and chains.

use proptest::prelude::*;
use torchspec::case::wire::CaseBody;
use torchspec::case::{eval_case, Case, Outcome};
use torchspec::diff::json_eq;
use torchspec::testing::fuzz::check_wrapper_invariance;
use torchspec::testing::lookup::{
    lookup_case, lookup_from, lookup_parts, reached, Root, Tree, Twist,
};

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// NNModuleSource is a guard marker: wrapping any step (but the one
    /// under the `_parameters` collapse) never changes the result.
    #[test]
    fn nn_module_wrappers_change_nothing(case in lookup_case(), depth in 0usize..8) {
        check_wrapper_invariance(&case, depth);
    }

    /// A chain spelled by walking down from a named root to a leaf finds
    /// exactly that leaf.
    #[test]
    fn walking_down_to_a_leaf_finds_it((nvars, target, others, mut plan, name) in lookup_parts()) {
        plan.root = Root::Named;
        plan.twist = Twist::None;
        let target = target.normalized(nvars, 0);
        let leaf = reached(&target, &plan).clone();
        prop_assume!(matches!(leaf, Tree::Tensor(_) | Tree::Var(_) | Tree::Int(_) | Tree::None));
        let case = lookup_from(nvars, &target, &others, &plan, &name);
        let found = eval_case(&case);
        let expected = eval_case(&Case { body: CaseBody::Build { value: leaf.to_expr() }, ..case.clone() });
        match (&found.outcome, &expected.outcome) {
            (Outcome::Ok(a), Outcome::Ok(b)) => prop_assert!(json_eq(a, b), "{a} vs {b}"),
            (a, b) => prop_assert!(false, "lookup gave {a:?}, the leaf builds as {b:?}"),
        }
    }
}
