//! Properties over generated cases: evaluation is total, results are valid
//! JSON that round-trips, and case lines round-trip through the wire form.

use proptest::prelude::*;
use torchspec::case::{eval_case, Case, Outcome, ResultLine};
use torchspec::diff::json_eq;
use torchspec::testing::strategies::build_case;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn case_lines_round_trip(case in build_case()) {
        let line = case.to_json().to_string();
        let back = Case::parse(&line).expect("a generated case parses");
        prop_assert_eq!(back, case);
    }

    #[test]
    fn results_are_json_that_round_trips(case in build_case()) {
        let result = eval_case(&case);
        let text = result.to_json().to_string();
        let json: serde_json::Value = serde_json::from_str(&text).expect("a result line is JSON");
        let back = ResultLine::from_json(&json).expect("a result line reads back");
        prop_assert_eq!(&back.id, &result.id);
        match (&back.outcome, &result.outcome) {
            (Outcome::Ok(a), Outcome::Ok(b)) => prop_assert!(json_eq(a, b)),
            (a, b) => prop_assert_eq!(a, b),
        }
    }

    #[test]
    fn evaluation_is_deterministic(case in build_case()) {
        // Fresh uid counter per case: evaluating twice gives the same result.
        prop_assert_eq!(eval_case(&case), eval_case(&case));
    }
}
