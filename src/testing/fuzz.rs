//! The bodies of the fuzz targets in `fuzz/fuzz_targets/`, kept here so that
//! `cargo test` replays the committed fuzz corpora on stable.

use crate::case::{eval_case, Case};

/// `case_line`: any bytes as one case line. Parsing either fails with a
/// positioned error or gives a case; evaluating a case always gives a
/// result line that is valid JSON.
pub fn case_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Case::parse(text) {
        Err(e) => assert!(!e.to_string().is_empty(), "errors say what is wrong"),
        Ok(case) => {
            let line = eval_case(&case).to_json().to_string();
            assert!(
                serde_json::from_str::<serde_json::Value>(&line).is_ok(),
                "result line is JSON: {line}"
            );
        }
    }
}
