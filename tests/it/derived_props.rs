//! Properties of derived expressions that hold in PyTorch because sympy
//! canonicalizes as it builds: commutative operators print the same both
//! ways round, and double negation is the identity. Evaluation is total.

use proptest::prelude::*;
use torchspec::case::eval::Env;
use torchspec::case::wire::{CaseBody, Expr};
use torchspec::case::{eval_case, Outcome};
use torchspec::pyval::ops::Op;
use torchspec::testing::derived::{derived_case, int_expr, var_decls};

fn repr(env: &Env, e: &Expr) -> Option<String> {
    env.eval(e).ok()?.repr().ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn derived_evaluation_is_total_and_deterministic(case in derived_case()) {
        let first = eval_case(&case);
        prop_assert_eq!(&first, &eval_case(&case));
        prop_assert!(!matches!(first.outcome, Outcome::Ok(serde_json::Value::Null)));
    }

    #[test]
    fn commutative_ops_print_the_same_both_ways(
        (vars, a, b) in var_decls().prop_flat_map(|vars| {
            let n = vars.len();
            (Just(vars), int_expr(n, 3), int_expr(n, 3))
        }),
        op in prop::sample::select(vec![Op::Add, Op::Mul]),
    ) {
        let env = Env::new(&vars).expect("generated vars construct");
        prop_assume!(repr(&env, &a).is_some() && repr(&env, &b).is_some());
        let ab = env.eval(&Expr::Op(op, vec![a.clone(), b.clone()]));
        let ba = env.eval(&Expr::Op(op, vec![b, a]));
        match (ab, ba) {
            (Ok(x), Ok(y)) => prop_assert_eq!(x.repr().ok(), y.repr().ok()),
            (x, y) => prop_assert_eq!(x.err(), y.err()),
        }
    }

    #[test]
    fn double_negation_is_the_identity(
        (vars, a) in var_decls().prop_flat_map(|vars| {
            let n = vars.len();
            (Just(vars), int_expr(n, 3))
        }),
    ) {
        // `a + 0` rather than `a`: a bare var prints as `IntVar(x#0)`, any
        // expression over it as `x#0`.
        let env = Env::new(&vars).expect("generated vars construct");
        let Some(plain) = repr(&env, &Expr::Op(Op::Add, vec![a.clone(), Expr::Int(0.into())])) else {
            return Ok(());
        };
        let twice = Expr::Op(Op::Neg, vec![Expr::Op(Op::Neg, vec![a])]);
        prop_assert_eq!(repr(&env, &twice), Some(plain));
    }
}

#[test]
fn derived_cases_are_build_cases() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let case = derived_case()
        .new_tree(&mut runner)
        .expect("a case")
        .current();
    assert!(matches!(case.body, CaseBody::Build { .. }));
}
