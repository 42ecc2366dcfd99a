//! Malformed input gives a clear error naming where: tested word for word.

use torchspec::case::file::parse_cases;

#[track_caller]
fn check(text: &str, expected: &str) {
    match parse_cases(text) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => assert_eq!(e.to_string(), expected),
    }
}

#[test]
fn malformed_case_lines() {
    let ok = r#"{"id":"a","kind":"build","value":1}"#;
    check(
        "{",
        "line 1: invalid JSON: EOF while parsing an object at line 1 column 1",
    );
    check(
        &format!("{ok}\n[1]"),
        "line 2: at $: a case must be a JSON object",
    );
    check(
        r#"{"kind":"build","value":1}"#,
        "line 1: at $: missing `id`",
    );
    check(
        r#"{"id":3,"kind":"build","value":1}"#,
        "line 1: at $.id: `id` must be a string",
    );
    check(
        r#"{"id":"a","kind":"eval","value":1}"#,
        "line 1: at $.kind: unknown kind `eval` (expected `build`, `lookup` or `source_name`)",
    );
    check(
        r#"{"id":"a","kind":"build"}"#,
        "line 1: at $: missing `value`",
    );
    check(
        r#"{"id":"a","kind":"build","value":1,"spec":2}"#,
        "line 1: at $: unknown field `spec` for kind `build`",
    );
    check(
        &format!("{ok}\n\n{ok}"),
        "line 2: blank line in the middle of the file",
    );
    check(&format!("{ok}\n{ok}"), "line 2: at $.id: duplicate id `a`");
    check(
        r#"{"id":"a","kind":"build","value":{"TensorSpec":[{"op":"plus","args":[1,2]}]}}"#,
        "line 1: at $.value.TensorSpec[0].op: unknown op `plus`",
    );
    check(
        r#"{"id":"a","kind":"build","value":{"op":"neg","args":[1,2]}}"#,
        "line 1: at $.value.args: `neg` takes 1 argument(s), found 2",
    );
    check(
        r#"{"id":"a","kind":"build","value":{"var":0}}"#,
        "line 1: at $.value.var: var index 0 out of range (0 vars)",
    );
    check(
        r#"{"id":"a","kind":"build","value":{"dict":[[1]]}}"#,
        "line 1: at $.value.dict[0]: a dict entry must be a `[key, value]` pair",
    );
    check(
        r#"{"id":"a","kind":"build","value":{"x":1,"y":2}}"#,
        "line 1: at $.value: a VALUE object must have exactly one key, found 2",
    );
    check(
        r#"{"id":"a","kind":"build","value":{"Tensor":[]}}"#,
        "line 1: at $.value: unknown VALUE form `Tensor`",
    );
    check(
        r#"{"id":"a","kind":"build","vars":[{"kind":"SymVar"}],"value":1}"#,
        "line 1: at $.vars[0].kind: expected `IntVar` or `ShapeVar`",
    );
    check(
        r#"{"id":"a","kind":"build","vars":[{"kind":"IntVar","min":1.5}],"value":1}"#,
        "line 1: at $.vars[0].min: a var field must be an integer, a string or null",
    );
    check(
        r#"{"id":"a","kind":"source_name","source":{"Source":{}}}"#,
        "line 1: at $.source: unknown source class `Source`",
    );
    let digits = "9".repeat(4301);
    check(
        &format!(r#"{{"id":"a","kind":"build","value":{digits}}}"#),
        "line 1: at $.value: integer literal has more than 4300 digits, which Python's `json` refuses",
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        r#"{{"id":"a","kind":"build","value":{}1{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let err = parse_cases(&deep).expect_err("too deep to parse");
    assert!(
        err.to_string()
            .starts_with("line 1: invalid JSON: recursion limit exceeded"),
        "{err}"
    );
}
