//! Comparing a reference result with PyTorch's golden: JSON equality as the
//! case format defines it, and a readable rendering of a divergence.

use serde_json::Value as Json;
use similar::TextDiff;

use crate::case::{Outcome, ResultLine};

/// Case-format equality: object key order ignored, everything else exact
/// (`2` and `2.0` differ, `true` is not `1`).
///
/// ```
/// use serde_json::json;
/// use torchspec::diff::json_eq;
///
/// assert!(json_eq(&json!({"a": 1, "b": [true]}), &json!({"b": [true], "a": 1})));
/// assert!(!json_eq(&json!(2), &json!(2.0)));
/// assert!(!json_eq(&json!(true), &json!(1)));
/// ```
pub fn json_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => number_eq(&x.to_string(), &y.to_string()),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn is_float_text(s: &str) -> bool {
    s.contains(['.', 'e', 'E'])
}

fn number_eq(x: &str, y: &str) -> bool {
    match (is_float_text(x), is_float_text(y)) {
        (false, false) => {
            let p: Option<num_bigint::BigInt> = x.parse().ok();
            let q: Option<num_bigint::BigInt> = y.parse().ok();
            p.is_some() && p == q
        }
        (true, true) => {
            let (p, q) = (x.parse::<f64>(), y.parse::<f64>());
            matches!((p, q), (Ok(p), Ok(q)) if p.to_bits() == q.to_bits())
        }
        _ => false,
    }
}

/// Whether two results agree.
pub fn results_agree(golden: &ResultLine, ours: &ResultLine) -> bool {
    let wiring = match (&golden.wiring, &ours.wiring) {
        (None, None) => true,
        (Some(a), Some(b)) => json_eq(a, b),
        _ => false,
    };
    wiring
        && match (&golden.outcome, &ours.outcome) {
            (Outcome::Ok(a), Outcome::Ok(b)) => json_eq(a, b),
            (Outcome::Error(a), Outcome::Error(b)) => a == b,
            _ => false,
        }
}

/// A result as text that diffs well: reprs as their own lines, JSON pretty.
pub fn render(r: &ResultLine) -> String {
    match &r.outcome {
        Outcome::Ok(Json::Object(m)) => {
            let mut out = String::new();
            for (k, v) in m {
                match v {
                    Json::String(s) if k == "repr" || k == "name" => {
                        out.push_str(&format!("{k}:\n"));
                        for line in s.split('\n') {
                            out.push_str(&format!("  | {line}\n"));
                        }
                    }
                    _ => {
                        let pretty =
                            serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
                        out.push_str(&format!("{k}:\n"));
                        for line in pretty.lines() {
                            out.push_str(&format!("  {line}\n"));
                        }
                    }
                }
            }
            out
        }
        Outcome::Ok(other) => format!("ok: {other}\n"),
        Outcome::Error(e) => format!("error: {}\n  {}\n", e.type_name, e.message),
        Outcome::Unsupported(why) => format!("unsupported: {why}\n"),
    }
}

/// A unified diff from PyTorch's result to ours.
pub fn render_divergence(golden: &ResultLine, ours: &ResultLine) -> String {
    let (a, b) = (render(golden), render(ours));
    TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(4)
        .header("pytorch", "torchspec")
        .to_string()
}

/// The keys whose values differ between two JSON objects, sorted: a key
/// both sides hold as an object is followed `depth - 1` levels further
/// (`ok.repr`), and `id` is never one. A non-object side differs as `$`.
pub fn differing_paths(golden: &Json, ours: &Json, depth: usize) -> Vec<String> {
    let mut out = Vec::new();
    walk_paths(golden, ours, depth, "", &mut out);
    out.sort();
    out.dedup();
    out
}

fn walk_paths(a: &Json, b: &Json, depth: usize, prefix: &str, out: &mut Vec<String>) {
    let (Json::Object(x), Json::Object(y), true) = (a, b, depth > 0) else {
        if !json_eq(a, b) {
            out.push(if prefix.is_empty() { "$" } else { prefix }.to_string());
        }
        return;
    };
    for k in x.keys().chain(y.keys()) {
        if prefix.is_empty() && k == "id" {
            continue;
        }
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match (x.get(k), y.get(k)) {
            (Some(p), Some(q)) => walk_paths(p, q, depth - 1, &path, out),
            _ => out.push(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_int_float_apart() {
        let j = |s: &str| serde_json::from_str::<Json>(s).unwrap();
        assert!(json_eq(&j("2"), &j("2")));
        assert!(!json_eq(&j("2"), &j("2.0")));
        assert!(json_eq(&j("1e-05"), &j("0.00001")));
        assert!(json_eq(
            &j("123456789012345678901234567890"),
            &j("123456789012345678901234567890")
        ));
        assert!(!json_eq(&j("true"), &j("1")));
        assert!(json_eq(&j(r#"{"a":1,"b":2}"#), &j(r#"{"b":2,"a":1}"#)));
    }
}
