//! What a Rust user of `torchspec-export` sees of their own serde_json: an
//! untagged enum with an `f64` variant parses (serde_json's
//! `arbitrary_precision` breaks it) and a `Value` object iterates its keys
//! sorted (`preserve_order` keeps document order instead), with a program
//! read by the reader in the same build.

use std::path::Path;

use serde::Deserialize;
use torchspec_export::ExportedProgram;

/// A candle-style `config.json` field: one epsilon, or one per layer.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum Eps {
    One(f64),
    PerLayer(Vec<f64>),
}

#[derive(Debug, Deserialize)]
struct Config {
    hidden_size: usize,
    layer_norm_eps: Eps,
}

#[test]
fn an_untagged_enum_with_an_f64_parses() {
    let config: Config = serde_json::from_str(r#"{"hidden_size": 768, "layer_norm_eps": 1e-5}"#)
        .expect("an untagged f64 parses");
    assert_eq!(config.hidden_size, 768);
    assert_eq!(config.layer_norm_eps, Eps::One(1e-5));
    let config: Config =
        serde_json::from_str(r#"{"hidden_size": 8, "layer_norm_eps": [1e-5, 1e-6]}"#)
            .expect("an untagged list of f64 parses");
    assert_eq!(config.layer_norm_eps, Eps::PerLayer(vec![1e-5, 1e-6]));
}

#[test]
fn a_value_object_keeps_serde_jsons_default_key_order() {
    let v: serde_json::Value = serde_json::from_str(r#"{"b": 1, "a": 2}"#).expect("parses");
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["a", "b"], "sorted, as without `preserve_order`");
}

#[test]
fn the_reader_reads_a_corpus_program_in_the_same_build() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/programs/mlp-dynamic.pt2");
    let ep = ExportedProgram::load_path(&path).expect("the corpus program loads");
    let report = ep.report();
    assert!(report.get("graph").is_some(), "{report:?}");
    let tensors = ep.state_dict_tensors().expect("its weights are read");
    assert!(!tensors.is_empty());
}
