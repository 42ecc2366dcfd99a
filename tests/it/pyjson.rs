//! Tests of `pyjson` against CPython's `json` (`tests/data/pyjson/cases.jsonl`,
//! written by `oracle/make_pyjson_cases.py`) and round-trip properties.

use num_bigint::BigInt;
use proptest::prelude::*;

use torchspec::pyjson::*;
use torchspec::testing::pyjson::arb_pyjson;

const CASES: &str = include_str!("../data/pyjson/cases.jsonl");

/// What CPython does with `input`, in the words of the case line.
fn check(case: &serde_json::Value) {
    let input = case["input"].as_str().unwrap();
    let short: String = input.chars().take(60).collect();
    match loads(input) {
        Err(e) => {
            let expected = case["loads_error"]
                .as_str()
                .unwrap_or_else(|| panic!("{short:?}: Python loads it, we refuse: {e}"));
            assert_eq!(e.to_string(), expected, "{short:?}");
        }
        Ok(v) => {
            assert!(
                case.get("loads_error").is_none(),
                "{short:?}: Python refuses it, we read {v:?}"
            );
            match (dumps(&v), case.get("dumps")) {
                (Ok(out), Some(expected)) => {
                    assert_eq!(out, expected.as_str().unwrap(), "{short:?}")
                }
                (Err(e), None) => assert_eq!(e.to_string(), case["dumps_error"].as_str().unwrap()),
                (got, _) => panic!("{short:?}: dumps gives {got:?}, Python {case}"),
            }
        }
    }
}

#[test]
fn agrees_with_cpython_json() {
    let mut n = 0;
    for line in CASES.lines() {
        check(&serde_json::from_str(line).unwrap());
        n += 1;
    }
    assert!(n >= 100, "{n} cases");
}

#[test]
fn duplicate_keys_keep_the_first_position_and_the_last_value() {
    let v = loads(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
    assert_eq!(dumps(&v).unwrap(), r#"{"a": 3, "b": 2}"#);
    // Past the size where a hash index takes over.
    let mut text = String::from("{");
    for i in 0..100 {
        text += &format!("\"k{i}\": {i}, ");
    }
    text += "\"k7\": \"last\", \"k99\": null}";
    let PyJson::Object(entries) = loads(&text).unwrap() else {
        panic!()
    };
    assert_eq!(entries.len(), 100);
    assert_eq!(entries[7], ("k7".into(), PyJson::Str("last".into())));
    assert_eq!(entries[99], ("k99".into(), PyJson::Null));
}

#[test]
fn int_and_float_stay_apart() {
    assert_eq!(loads("1").unwrap(), PyJson::Int(PyInt::Small(1)));
    assert_eq!(loads("1.0").unwrap(), PyJson::Float(1.0));
    let big = loads("123456789012345678901234567890").unwrap();
    let expected: BigInt = "123456789012345678901234567890".parse().unwrap();
    assert_eq!(big, PyJson::Int(PyInt::Big(Box::new(expected))));
    assert_eq!(
        loads("-9223372036854775808").unwrap(),
        PyJson::Int(PyInt::Small(i64::MIN))
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["[", "{\"a\": "] {
        let text = open.repeat(100_000);
        let e = loads(&text).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "json nested deeper than 1000 levels at char {}",
                open.len() * 1000
            )
        );
    }
    // As deep as allowed: read, written, dropped.
    let text = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
    let v = loads(&text).unwrap();
    assert_eq!(dumps(&v).unwrap(), text);
}

#[test]
fn lone_surrogates_are_refused_with_their_position() {
    for (text, at) in [
        (r#""\ud800""#, 1),
        (r#"["ab\udc00x"]"#, 4),
        (r#""\ud800\u0041""#, 1),
    ] {
        let e = loads(text).unwrap_err();
        let u = &text[at + 1..at + 6];
        assert_eq!(
            e.to_string(),
            format!(
                "lone surrogate `\\{u}` in a string, which a Rust string cannot hold, at char {at}"
            )
        );
    }
    assert_eq!(
        loads(r#""\ud83d\ude00""#).unwrap(),
        PyJson::Str("\u{1f600}".into())
    );
}

#[test]
fn dumps_refuses_what_python_refuses() {
    for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = dumps(&PyJson::List(vec![PyJson::Float(f)])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ValueError: Out of range float values are not JSON compliant"
        );
    }
    let huge = PyJson::Int(PyInt::Big(Box::new(BigInt::from(10).pow(4300))));
    assert_eq!(
        dumps(&huge).unwrap_err().to_string(),
        "ValueError: Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"
    );
    let at_limit = PyJson::Int(PyInt::Big(Box::new(BigInt::from(10).pow(4299))));
    assert_eq!(dumps(&at_limit).unwrap().len(), 4300);
}

proptest! {
    #[test]
    fn dumps_then_loads_is_the_identity(v in arb_pyjson(true)) {
        let text = dumps(&v).unwrap();
        prop_assert!(text.is_ascii());
        let back = loads(&text).unwrap();
        prop_assert!(same(&back, &v), "{text}");
        prop_assert_eq!(dumps(&back).unwrap(), text);
    }
}
