//! The bodies of the fuzz targets in `fuzz/fuzz_targets/`, kept here so that
//! `cargo test` replays the committed fuzz corpora on stable.

use super::lookup::{with_wrapper, LookupInput};
use crate::case::eval::{eval_case_into, eval_lookups, Env};
use crate::case::wire::{CaseBody, SourceExpr};
use crate::case::{Case, Outcome};
use crate::diff::json_eq;
use crate::export::passes::Pass;
use crate::pyval::{PyResult, Value};
use crate::source::lookup::lookup_spec_from_dynamo_source;
use crate::spec::ShapesSpec;

/// `case_line`: any bytes as one case line. Parsing either fails with a
/// positioned error or gives a case; evaluating a case always gives the
/// result line `torchspec eval` writes, and it is valid JSON.
pub fn case_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Case::parse(text) {
        Err(e) => assert!(!e.to_string().is_empty(), "errors say what is wrong"),
        Ok(case) => {
            let (mut line, mut scratch) = (Vec::new(), String::new());
            eval_case_into(&case, &mut line, &mut scratch);
            // Validated without building a tree of it.
            assert!(
                serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok(),
                "result line is JSON: {}",
                String::from_utf8_lossy(&line)
            );
        }
    }
}

/// `lookup`: bytes → spec tree + source chain → lookup. Never panics; an
/// `NNModuleSource` wrapper inserted anywhere (but under the `_parameters`
/// collapse) changes nothing; a plain walk down to a leaf finds that leaf. (The wire round trip of such
/// cases is a property test, and `case_line` fuzzes the parser.) The spec is
/// built once for both lookups, to keep the target light.
pub fn lookup(data: &[u8]) {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(input) = u.arbitrary::<LookupInput>() else {
        return;
    };
    let (case, leaf) = input.prepare();
    let CaseBody::Lookup { spec, source } = &case.body else {
        return;
    };
    let Ok(env) = Env::new(&case.vars) else {
        return;
    };
    let spec = env.eval(spec);
    let find = |source: &SourceExpr| -> PyResult<Value> {
        let source = env.source(source)?;
        let spec = spec.clone()?;
        lookup_spec_from_dynamo_source(&source, spec.downcast::<ShapesSpec>())
    };
    let found = find(source);
    // Both walks go down the one spec tree: the wrapped one finds the very
    // same node, or raises the same exception.
    if let Some(wrapped) = with_wrapper(source, input.wrap_depth as usize) {
        let again = find(&wrapped);
        let same = match (&found, &again) {
            (Ok(a), Ok(b)) => a.is(b) || a.repr() == b.repr(),
            (Err(a), Err(b)) => a == b,
            _ => false,
        };
        assert!(
            same,
            "a wrapper changed the lookup: {found:?} vs {again:?} for {}",
            case.to_json()
        );
    }
    if let Some(leaf) = leaf {
        // A walk down to a leaf finds exactly that leaf: the same type and
        // repr as the leaf built alone (a fresh symop cache, as a case).
        crate::spec::sym::reset_symop_cache();
        let built = env.eval(&leaf);
        let same = match (&found, &built) {
            (Ok(a), Ok(b)) => a.type_name() == b.type_name() && a.repr() == b.repr(),
            _ => false,
        };
        assert!(
            same,
            "the walk did not find its leaf: {found:?} vs {built:?} for {}",
            case.to_json()
        );
    }
}

fn same_outcome(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Ok(a), Outcome::Ok(b)) => json_eq(a, b),
        (a, b) => a == b,
    }
}

/// Evaluate `case` and the same case with a wrapper inserted `depth` bases
/// down; both must give the same result.
pub fn check_wrapper_invariance(case: &Case, depth: usize) {
    let CaseBody::Lookup { spec, source } = &case.body else {
        return;
    };
    let Some(wrapped_source) = with_wrapper(source, depth) else {
        return;
    };
    let outcomes = eval_lookups(&case.vars, spec, &[source, &wrapped_source]);
    let (plain, wrapped) = (&outcomes[0], &outcomes[1]);
    assert!(
        same_outcome(plain, wrapped),
        "a wrapper changed the lookup: {plain:?} vs {wrapped:?} for {}",
        case.to_json()
    );
}

/// The largest input [`program`] reads.
pub const MAX_PROGRAM_INPUT: usize = 64 * 1024;

/// `program`: bytes as an exported program — a `.pt2` archive when they
/// start like a zip, else the program JSON. Loading either fails with an
/// error or gives a program whose report, passes and JSON never panic, whose
/// wire program as read writes back stably, whose `to_json` (as loaded
/// and after DCE: the program as it is then) reads back, and whose input
/// checks answer every probe derived from it.
pub fn program(data: &[u8]) {
    use crate::export::schema::Mode;
    use crate::export::ExportedProgram;
    // The zoo's program JSONs are at most 14 KB; larger inputs only make
    // each run slower (the loader's own size bounds are tested apart).
    if data.len() > MAX_PROGRAM_INPUT {
        return;
    }
    let loaded = if data.starts_with(b"PK") {
        ExportedProgram::load_pt2(data.to_vec(), Mode::Default)
    } else {
        ExportedProgram::load_json(data, Mode::Default)
    };
    let ep = match loaded {
        Ok(ep) => ep,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "errors say what is wrong");
            return;
        }
    };
    let _ = crate::json::report(&ep);
    let json = crate::export::schema::dump_program(&ep.serialized);
    let again = crate::export::schema::load_program(json.as_bytes(), Mode::Default)
        .expect("a written program reads back");
    assert_eq!(
        crate::export::schema::dump_program(&again.program),
        json,
        "writing is stable"
    );
    for pass in Pass::ALL {
        let _ = crate::export::passes::transform_report(&ep, &[pass.name().to_string()]);
    }
    // check-inputs on probes derived from the program: an answer per probe
    // (what a bad guard text raises, or unsupported), never a panic.
    if let Ok(checker) = crate::export::inputs::InputChecker::new(&ep) {
        // The first 16 keep each run light.
        for probe in crate::export::inputs::program_probes::derive_probes(&ep)
            .iter()
            .take(16)
        {
            let _ = checker.check(probe).to_json(&probe.id);
        }
    }
    // Its tensors: each view streamed whole (the bounds `as_strided`
    // checked hold for every element), or an error.
    if let Ok(tensors) = ep.tensors() {
        for t in tensors.iter() {
            let mut seen = 0usize;
            if t.for_each_chunk(|c| seen += c.len()).is_ok() {
                assert_eq!(Ok(seen), t.nbytes().map_err(|_| ()), "`{}`", t.name());
            }
        }
    }
    // Serialized as torch.export.save would (as loaded, and after DCE): an
    // error or JSON the schema reader takes back.
    let mut programs = vec![ep.clone()];
    if let Ok(t) = crate::export::passes::transform(&ep, &[Pass::Dce.name().to_string()]) {
        programs.push(t);
    }
    for p in &programs {
        if let Ok(json) = p.to_json() {
            crate::export::schema::load_program(json.as_bytes(), Mode::Default)
                .expect("a serialized program reads back");
        }
        let _ = p.serialize_pt2("fuzz");
    }
}

/// Bytes as a `.pt2` (`fuzz_targets/archive.rs`): the archive layer as
/// `torch.export.load` reads it (the stream reader's central directory,
/// its record lookup and entry reads, CPython zipfile's fallback, the
/// weights' views). Never a panic; a refusal always says what is wrong; an
/// archive that opens reads every entry it lists or refuses it.
pub fn archive(data: &[u8]) {
    use crate::export::archive::{self, pyzip, Pt2Archive};
    use crate::export::schema::Mode;
    use crate::export::ExportedProgram;
    if data.len() > MAX_PROGRAM_INPUT {
        return;
    }
    let said = |e: &crate::Error| assert!(!e.to_string().is_empty(), "errors say what is wrong");
    if let Ok(toc) = pyzip::ZipFile::read(data) {
        assert!(toc.start_dir <= data.len() as u64 || toc.names.is_empty());
    }
    let _ = archive::is_legacy(data);
    match Pt2Archive::over(data) {
        Ok(mut a) => {
            let _ = a.records();
            for name in a.entries() {
                match a.read_entry_if_present(&name) {
                    Ok(_) => {}
                    Err(e) => said(&e),
                }
                if let Ok(Some(d)) = a.entry_data(&name) {
                    let _ = d.slice(data);
                }
            }
        }
        Err(e) => said(&e),
    }
    if let Err(e) = archive::program_json(data) {
        said(&e);
    }
    let _ = crate::export::sample_inputs::read(data, None);
    match ExportedProgram::load_pt2(data.to_vec(), Mode::Default) {
        Ok(ep) => {
            if let Ok(t) = ep.tensors() {
                for v in t.iter() {
                    let _ = v.contiguous_bytes();
                    let _ = v.for_each_chunk(|_| {});
                }
            }
        }
        Err(e) => said(&e),
    }
}
