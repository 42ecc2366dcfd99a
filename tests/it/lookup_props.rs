//! Properties of the lookup walk over generated spec trees and chains.

use proptest::prelude::*;
use torchspec::case::eval::eval_lookups_and_build;
use torchspec::case::wire::{CaseBody, Expr};
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

/// Shrinking works on the joint strategy: a property that fails once a
/// chain has three or more steps shrinks to a three-step chain over a small
/// tree.
#[test]
fn failing_lookups_shrink_to_short_chains() {
    use proptest::test_runner::{Config, TestError, TestRunner};
    use torchspec::case::wire::SourceExpr;

    fn depth(s: &SourceExpr) -> usize {
        s.fields
            .iter()
            .find_map(|(k, f)| match (k, f) {
                (&"base", torchspec::case::wire::SourceField::Source(b)) => Some(1 + depth(b)),
                _ => None,
            })
            .unwrap_or(0)
    }
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&lookup_case(), |case| {
        let CaseBody::Lookup { source, .. } = &case.body else {
            unreachable!()
        };
        prop_assert!(depth(source) < 3);
        Ok(())
    });
    match result {
        Err(TestError::Fail(_, case)) => {
            let CaseBody::Lookup { source, spec } = &case.body else {
                unreachable!()
            };
            assert_eq!(depth(source), 3, "shrunk to {}", case.to_json());
            assert!(
                spec.to_json().to_string().len() < 400,
                "tree did not shrink: {}",
                case.to_json()
            );
        }
        other => panic!("expected a failure to shrink, got {other:?}"),
    }
}

proptest! {
    /// The fuzz target's shortcut (one spec, several sources) gives what
    /// separate cases give.
    #[test]
    fn eval_lookups_agrees_with_eval_case(case in lookup_case()) {
        let CaseBody::Lookup { spec, source } = &case.body else { unreachable!() };
        let batch = torchspec::case::eval::eval_lookups(&case.vars, spec, &[source]);
        prop_assert_eq!(&batch[0], &eval_case(&case).outcome);
    }

    /// Its leaf check (a value built in the lookup's environment) gives
    /// what a separate `build` case gives.
    #[test]
    fn build_in_lookup_env_agrees_with_eval_case(case in lookup_case()) {
        let CaseBody::Lookup { spec, source } = &case.body else { unreachable!() };
        let Expr::ShapesSpec { params: Some(params), .. } = spec else { unreachable!() };
        let Expr::Dict(entries) = params.as_ref() else { unreachable!() };
        for (_, value) in entries {
            let (_, built) = eval_lookups_and_build(&case.vars, spec, &[source], Some(value));
            let alone = Case {
                id: case.id.clone(),
                vars: case.vars.clone(),
                body: CaseBody::Build { value: value.clone() },
            };
            prop_assert_eq!(built.as_ref(), Some(&eval_case(&alone).outcome));
        }
    }
}
