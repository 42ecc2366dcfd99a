//! `data/sample_inputs/model.pt` read with the bounded pickle reader: every
//! zoo program's example inputs equal the `ok` probe `oracle/zoo.py` wrote
//! from the same inputs, and crafted pickles are refused within bounds.

use proptest::prelude::*;
use serde_json::Value as Json;
use torchspec::conformance::programs::program_files;
use torchspec::export::pickle::{loads, Pickled};
use torchspec::export::sample_inputs;

#[test]
fn every_zoo_programs_sample_inputs_are_its_ok_probe() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut same, mut refused) = (0, Vec::new());
    for file in program_files(root).unwrap() {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&file).unwrap();
        let (args, kwargs) = match sample_inputs::read(&bytes, None) {
            Ok(Some(v)) => v,
            Ok(None) => panic!("{name}: no sample inputs"),
            Err(_) => {
                refused.push(name);
                continue;
            }
        };
        let probes = std::fs::read_to_string(file.with_extension("probes.jsonl")).unwrap();
        let ok: Json = serde_json::from_str(probes.lines().next().unwrap()).unwrap();
        assert_eq!(ok["kind"], "ok", "{name}");
        let (args, kwargs) = (
            torchspec::json::to_serde(&args),
            torchspec::json::to_serde(&kwargs),
        );
        assert_eq!((&args, &kwargs), (&ok["args"], &ok["kwargs"]), "{name}");
        same += 1;
    }
    // A namedtuple of the zoo's own types (no probe form without its
    // registration), and the pre-2.8 archive (its own layout).
    assert_eq!(refused, ["legacy-format", "pytree-types"]);
    assert!(same >= 50, "only {same} compared");
}

#[test]
fn a_pickle_names_only_the_allowed_globals() {
    let e = loads(b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.").unwrap_err();
    assert!(
        e.to_string()
            .contains("refusing to load the global `os.system`"),
        "{e}"
    );
}

#[test]
fn a_pickle_cannot_allocate_past_its_size() {
    // A string claiming 4 GB.
    let e = loads(b"\x80\x02X\xff\xff\xff\xff").unwrap_err();
    assert!(
        e.to_string().contains("bytes wanted, the pickle ends"),
        "{e}"
    );
    // A memo doubling a list 40 times.
    let mut p = b"\x80\x02]q\x00".to_vec();
    for _ in 0..40 {
        p.extend_from_slice(b"h\x00h\x00\x86q\x00");
    }
    p.push(b'.');
    let e = loads(&p).unwrap_err();
    assert!(e.to_string().contains("memo references copy more"), "{e}");
    // Lists nested 100,000 deep.
    let mut p = b"\x80\x02".to_vec();
    p.extend(std::iter::repeat_n(b']', 100_000));
    p.extend(std::iter::repeat_n(b'a', 99_999));
    p.push(b'.');
    let e = loads(&p).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

#[test]
fn containers_and_scalars_read_back() {
    // pickle.dumps({"a": [1, 2.5, True], "b": None}, protocol=2)
    let v = loads(
        b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01]q\x02(K\x01G@\x04\x00\x00\x00\x00\x00\x00\x88eX\x01\x00\x00\x00bq\x03Nu.",
    )
    .unwrap();
    let Pickled::Dict(items) = v else { panic!() };
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[0].1,
        Pickled::List(vec![
            Pickled::Int(1),
            Pickled::Float(2.5),
            Pickled::Bool(true)
        ])
    );
}

proptest! {
    /// Any bytes: a value or an error, never a panic.
    #[test]
    fn any_bytes_read_or_refuse(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut p = b"\x80\x02".to_vec();
        p.extend(bytes);
        let _ = loads(&p);
    }
}
