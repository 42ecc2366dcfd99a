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
        "line 1: at $.kind: unknown kind `eval` (expected `build`, `lookup`, `source_name` or `export_spec`)",
    );
    let es = r#""kind":"export_spec","signature":[["x","POSITIONAL_OR_KEYWORD"]],"args":{"tuple":[{"tensor":{"shape":[2],"dtype":"float32"}}]}"#;
    check(
        &format!(r#"{{"id":"e",{es},"api":"jit"}}"#),
        "line 1: at $.api: one of `export`, `export_strict`, `make_fx`, `compile`",
    );
    check(
        &format!(r#"{{"id":"e",{es}}}"#),
        "line 1: at $: missing `api`",
    );
    check(
        r#"{"id":"e","kind":"export_spec","api":"export","signature":[["self","POSITIONAL_OR_KEYWORD"]],"args":{"tuple":[]}}"#,
        "line 1: at $.signature[0][0]: a parameter name must be an identifier, not self, not starting with __",
    );
    check(
        r#"{"id":"e","kind":"export_spec","api":"export","signature":[],"args":{"tuple":[{"tensor":{"shape":[-1],"dtype":"float32"}}]}}"#,
        "line 1: at $.args.tuple[0].tensor.shape: must be an array of non-negative integers",
    );
    check(
        r#"{"id":"e","kind":"build","value":{"tensor":{"shape":[1],"dtype":"float32"}}}"#,
        "line 1: at $.value: unknown VALUE form `tensor`",
    );
    check(
        r#"{"id":"e","kind":"export_spec","api":"make_fx","signature":[],"args":{"tuple":[]},"kwargs":{"dict":[]}}"#,
        "line 1: at $.kwargs: make_fx passes inputs positionally; a make_fx case has no kwargs",
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

/// `{"id":"a","kind":"build","value":` + `open` × depth + `leaf` + `close` × depth + `}`.
fn nested(open: &str, leaf: &str, close: &str, depth: usize) -> String {
    format!(
        r#"{{"id":"a","kind":"build","value":{}{leaf}{}}}"#,
        open.repeat(depth),
        close.repeat(depth)
    )
}

#[test]
fn nesting_is_read_as_deep_as_pythons_json_reads_it() {
    // In `oracle/capture.py`, Python's `json` reads arrays down to depth 993
    // (the case object is depth 1) and objects down to 992 (its
    // `object_pairs_hook` takes one more frame); deeper is its error.
    let lists = |d| nested("[", "1", "]", d);
    let objects = |d| nested(r#"{"TensorSpec":"#, "1", "}", d);
    parse_cases(&lists(992)).expect("992 nested arrays read");
    check(&lists(993), "line 1: invalid JSON: nested too deeply");
    parse_cases(&objects(991)).expect("991 nested objects read");
    check(&objects(992), "line 1: invalid JSON: nested too deeply");
    // At any depth, never a stack overflow: closed, unclosed, objects.
    for line in [
        lists(100_000),
        objects(100_000),
        "[".repeat(100_000),
        format!("{}{}", r#"{"a":"#.repeat(100_000), "1"),
    ] {
        check(&line, "line 1: invalid JSON: nested too deeply");
    }
    // Python scans left to right: a syntax error before the nesting gets
    // too deep is the error.
    check(
        &nested("[1,,", "1", "]", 100_000),
        "line 1: invalid JSON: expected value at line 1 column 37",
    );
    // Brackets inside strings do not nest.
    let in_str = format!(
        r#"{{"id":"a","kind":"build","value":"{}"}}"#,
        "[{".repeat(100_000)
    );
    parse_cases(&in_str).expect("brackets in a string are text");
}

#[test]
fn lone_surrogates_are_the_documented_error() {
    // Rust strings cannot hold them (README, "Known limits of the reader").
    check(
        r#"{"id":"a","kind":"build","value":"\ud800"}"#,
        "line 1: invalid JSON: unexpected end of hex escape at line 1 column 41",
    );
}

#[test]
fn duplicate_keys_are_an_error_as_in_the_oracle() {
    check(
        r#"{"id":"a","kind":"build","value":1,"value":2}"#,
        "line 1: at $: duplicate key `value`",
    );
    check(
        r#"{"id":"a","kind":"source_name","source":{"GlobalSource":{"global_name":"g","global_name":"h"}}}"#,
        "line 1: at $.source.GlobalSource: duplicate key `global_name`",
    );
}

#[test]
fn keys_in_any_order() {
    // `vars` after the VALUE that uses it, `kind` last.
    let cases = parse_cases(
        r#"{"value":{"var":1},"vars":[{"kind":"IntVar"},{"kind":"IntVar"}],"id":"a","kind":"build"}"#,
    )
    .expect("keys in any order");
    assert_eq!(cases[0].1.vars.len(), 2);
    check(
        r#"{"value":[{"var":0},{"var":2}],"vars":[{"kind":"IntVar"}],"id":"a","kind":"build"}"#,
        "line 1: at $.value[1].var: var index 2 out of range (1 vars)",
    );
    check(
        r#"{"spec":null,"id":"a","kind":"build","value":1}"#,
        "line 1: at $: unknown field `spec` for kind `build`",
    );
}

/// The one case of a one-line case file.
fn one_case(line: &str) -> torchspec::case::Case {
    let mut cases = parse_cases(line).unwrap_or_else(|e| panic!("{e}"));
    cases.remove(0).1
}

/// `n` `AttrSource(member="a")` steps over `LocalSource("self")`.
fn chain(n: usize) -> String {
    let mut s = r#"{"LocalSource":{"local_name":"self","is_input":true}}"#.to_string();
    for _ in 0..n {
        s = format!(r#"{{"AttrSource":{{"base":{s},"member":"a"}}}}"#);
    }
    s
}

/// A 30-level tree of `ObjectSpec`s with a `TensorSpec` leaf at `.a.a...a`.
fn tree() -> String {
    let mut t = r#"{"TensorSpec":[{"var":0},null]}"#.to_string();
    for i in 0..30 {
        t = format!(r#"{{"ObjectSpec":{{"dict":[["a",{t}],["b",{i}]]}}}}"#);
    }
    t
}

#[test]
fn deep_cases_read_and_evaluate_on_a_test_threads_stack() {
    use torchspec::case::{eval_case, Outcome};
    // What PyTorch 2.15.0 gives for each (`oracle/capture.py`).
    let vars = r#"[{"kind":"ShapeVar","name":"h","min":2}]"#;
    let name = eval_case(&one_case(&format!(
        r#"{{"id":"a","kind":"source_name","source":{}}}"#,
        chain(60)
    )));
    let expected = format!("L['self']{}", ".a".repeat(60));
    assert_eq!(
        name.outcome,
        Outcome::Ok(serde_json::json!({ "name": expected }))
    );
    let lookup = |steps| {
        eval_case(&one_case(&format!(
            r#"{{"id":"a","kind":"lookup","vars":{vars},"spec":{{"ShapesSpec":{{"params":{{"dict":[["self",{}]]}}}}}},"source":{}}}"#,
            tree(),
            chain(steps)
        )))
        .outcome
    };
    match lookup(30) {
        Outcome::Ok(ok) => assert_eq!(ok["repr"], "Tensor:\n  0: ShapeVar(h#0, min=2)\n  1: None"),
        other => panic!("{other:?}"),
    }
    match lookup(60) {
        Outcome::Error(e) => assert!(
            e.message
                .starts_with("shapes_spec walk: while processing source 'self.a.a."),
            "{}",
            e.message
        ),
        other => panic!("{other:?}"),
    }
    let built = eval_case(&one_case(&format!(
        r#"{{"id":"a","kind":"build","vars":{vars},"value":{}}}"#,
        tree()
    )));
    match built.outcome {
        Outcome::Ok(ok) => assert!(ok["repr"]
            .as_str()
            .unwrap()
            .starts_with("object_spec:\n  .a:\n")),
        other => panic!("{other:?}"),
    }
    // Deeper than this thread's stack holds without help.
    let name = eval_case(&one_case(&format!(
        r#"{{"id":"a","kind":"source_name","source":{}}}"#,
        chain(494)
    )));
    let expected = format!("L['self']{}", ".a".repeat(494));
    assert_eq!(
        name.outcome,
        Outcome::Ok(serde_json::json!({ "name": expected }))
    );
    let lists = eval_case(&one_case(&nested("[", "1", "]", 200)));
    match lists.outcome {
        Outcome::Ok(ok) => assert_eq!(
            ok["repr"],
            format!("{}1{}", "[".repeat(200), "]".repeat(200))
        ),
        other => panic!("{other:?}"),
    }
    // As deep as the reader goes: where PyTorch's recursion limit bites is
    // not modelled, and that is said.
    for line in [
        nested("[", "1", "]", 992),
        nested(r#"{"tuple":["#, "1", "]}", 495),
        nested(r#"{"op":"neg","args":["#, "1", "]}", 495),
    ] {
        match eval_case(&one_case(&line)).outcome {
            Outcome::Unsupported(why) => assert!(why.contains("recursion limit"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
