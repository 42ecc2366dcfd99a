//! Which way one golden line moved between two torch versions.

use serde_json::Value as Json;

use super::set::Section;
use crate::diff::json_eq;

/// A class of change. Case lines get exactly one; a program line gets one
/// per report key that moved.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Both ok; `repr` moved, `jsonable` did not.
    ReprOnly,
    /// Both ok; `jsonable` moved, `repr` did not.
    JsonableOnly,
    /// Both ok; `repr` and `jsonable` both moved.
    ReprAndJsonable,
    /// A `source_name` case: the `.name` moved.
    SourceName,
    /// Both errors of one type; the message moved.
    ErrorMessage,
    /// Both errors; the exception type moved.
    ErrorType,
    /// Ok in A, an error in B.
    OkToError,
    /// An error in A, ok in B.
    ErrorToOk,
    /// What the case (or tree, or program) needs does not exist in one of
    /// the versions: one side is `ModuleNotFoundError`/`ImportError`, an
    /// `AttributeError` naming a `torch` module, a pytree `tree_error`, a
    /// probe `load_error`, or the line is only in one golden set. By
    /// section (case, program, probe, pytree).
    KindMissing(Section),
    /// Program report: `schema_version` major moved.
    SchemaMajor,
    /// Program report: `schema_version` minor moved (same major).
    SchemaMinor,
    /// Program report: the whole-report error form on one side only, or
    /// its error moved.
    ProgramError,
    /// Program report: this key moved.
    ProgramKey(String),
    /// Probe: ok on one side, an error on the other.
    ProbeOkError,
    /// Probe: both errors; type or message moved.
    ProbeError,
    /// Probe: same error, `pre_kernel` moved.
    ProbePreKernel,
    /// Serialized line: both saved; the bytes of `models/model.json` moved
    /// (its sha256, length or `equals_input`).
    SerializedBytes,
    /// Serialized line: a pass or the save raised on one side (or both,
    /// with different errors).
    SerializedError,
    /// Pytree line: loads on one side, raises on the other.
    PytreeOkError,
    /// Pytree line: this key moved.
    PytreeKey(String),
}

impl Class {
    pub fn section(&self) -> Section {
        match self {
            Class::SchemaMajor
            | Class::SchemaMinor
            | Class::ProgramError
            | Class::ProgramKey(_) => Section::Programs,
            Class::ProbeOkError | Class::ProbeError | Class::ProbePreKernel => Section::Probes,
            Class::PytreeOkError | Class::PytreeKey(_) => Section::Pytree,
            Class::SerializedBytes | Class::SerializedError => Section::Serialized,
            Class::KindMissing(s) => *s,
            _ => Section::Cases,
        }
    }

    /// The row title of the report.
    pub fn title(&self) -> String {
        match self {
            Class::ReprOnly => "repr only".into(),
            Class::JsonableOnly => "jsonable only".into(),
            Class::ReprAndJsonable => "repr and jsonable".into(),
            Class::SourceName => "source name".into(),
            Class::ErrorMessage => "error message".into(),
            Class::ErrorType => "error type".into(),
            Class::OkToError => "ok → error".into(),
            Class::ErrorToOk => "error → ok".into(),
            Class::KindMissing(Section::Cases) => "kind missing in one version".into(),
            Class::KindMissing(s) => format!("{}: kind missing in one version", s.name()),
            Class::SchemaMajor => "program: schema major".into(),
            Class::SchemaMinor => "program: schema minor".into(),
            Class::ProgramError => "program: ok ↔ error".into(),
            Class::ProgramKey(k) => format!("program: `{k}`"),
            Class::ProbeOkError => "probe: ok ↔ error".into(),
            Class::ProbeError => "probe: error type or message".into(),
            Class::ProbePreKernel => "probe: pre_kernel".into(),
            Class::SerializedBytes => "serialized: `models/model.json` bytes".into(),
            Class::SerializedError => "serialized: ok ↔ error".into(),
            Class::PytreeOkError => "pytree: ok ↔ error".into(),
            Class::PytreeKey(k) => format!("pytree: `{k}`"),
        }
    }
}

/// Whether an error object says that an API is missing from that torch.
pub fn missing_api(err: &Json) -> bool {
    let ty = err.get("type").and_then(Json::as_str).unwrap_or("");
    let msg = err.get("message").and_then(Json::as_str).unwrap_or("");
    match ty {
        "ModuleNotFoundError" | "ImportError" => true,
        "AttributeError" => msg.starts_with("module 'torch") && msg.contains("has no attribute"),
        _ => false,
    }
}

fn field<'a>(v: &'a Json, k: &str) -> Option<&'a Json> {
    v.get(k)
}

fn moved(a: Option<&Json>, b: Option<&Json>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => !json_eq(a, b),
        (None, None) => false,
        _ => true,
    }
}

/// The classes of a line present in both sets whose JSON differs.
pub fn classify(section: Section, a: &Json, b: &Json) -> Vec<Class> {
    match section {
        Section::Cases => vec![classify_case(a, b)],
        Section::Programs => classify_program(
            field(a, "report").unwrap_or(&Json::Null),
            field(b, "report").unwrap_or(&Json::Null),
        ),
        Section::Probes => vec![classify_probe(a, b)],
        Section::Serialized => vec![classify_serialized(a, b)],
        Section::Pytree => classify_pytree(a, b),
    }
}

fn classify_serialized(a: &Json, b: &Json) -> Class {
    if a.get("error").is_some() || b.get("error").is_some() {
        Class::SerializedError
    } else {
        Class::SerializedBytes
    }
}

fn classify_case(a: &Json, b: &Json) -> Class {
    match (
        field(a, "ok"),
        field(b, "ok"),
        field(a, "error"),
        field(b, "error"),
    ) {
        (Some(oa), Some(ob), _, _) => {
            if oa.get("name").is_some() || ob.get("name").is_some() {
                return Class::SourceName;
            }
            match (
                moved(oa.get("repr"), ob.get("repr")),
                moved(oa.get("jsonable"), ob.get("jsonable")),
            ) {
                (true, false) => Class::ReprOnly,
                (false, true) => Class::JsonableOnly,
                _ => Class::ReprAndJsonable,
            }
        }
        (_, _, Some(ea), Some(eb)) => {
            if missing_api(ea) != missing_api(eb) {
                Class::KindMissing(Section::Cases)
            } else if moved(ea.get("type"), eb.get("type")) {
                Class::ErrorType
            } else {
                Class::ErrorMessage
            }
        }
        (Some(_), _, _, Some(e)) | (_, Some(_), Some(e), _) if missing_api(e) => {
            Class::KindMissing(Section::Cases)
        }
        (Some(_), _, _, _) => Class::OkToError,
        _ => Class::ErrorToOk,
    }
}

fn classify_program(a: &Json, b: &Json) -> Vec<Class> {
    let (ea, eb) = (a.get("error"), b.get("error"));
    if ea.is_some() || eb.is_some() {
        // The whole-report error form: a pipeline (or an older torch's
        // load) raised.
        return vec![Class::ProgramError];
    }
    let mut out = Vec::new();
    let (Json::Object(ma), Json::Object(mb)) = (a, b) else {
        return vec![Class::ProgramError];
    };
    let mut keys: Vec<&String> = ma.keys().collect();
    for k in mb.keys() {
        if !ma.contains_key(k) {
            keys.push(k);
        }
    }
    for k in keys {
        if !moved(ma.get(k), mb.get(k)) {
            continue;
        }
        if k == "schema_version" {
            let major = |m: &serde_json::Map<String, Json>| {
                m.get(k)
                    .and_then(|v| v.get(0))
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            };
            out.push(if major(ma) != major(mb) {
                Class::SchemaMajor
            } else {
                Class::SchemaMinor
            });
        } else {
            out.push(Class::ProgramKey(k.clone()));
        }
    }
    out
}

fn classify_probe(a: &Json, b: &Json) -> Class {
    if a.get("load_error").is_some() || b.get("load_error").is_some() {
        return Class::KindMissing(Section::Probes);
    }
    match (a.get("error"), b.get("error")) {
        (Some(ea), Some(eb)) if !json_eq(ea, eb) => Class::ProbeError,
        (Some(_), Some(_)) => Class::ProbePreKernel,
        _ => Class::ProbeOkError,
    }
}

fn classify_pytree(a: &Json, b: &Json) -> Vec<Class> {
    if a.get("tree_error").is_some() != b.get("tree_error").is_some() {
        return vec![Class::KindMissing(Section::Pytree)];
    }
    if a.get("error").is_some() != b.get("error").is_some() {
        return vec![Class::PytreeOkError];
    }
    let (Json::Object(ma), Json::Object(mb)) = (a, b) else {
        return vec![Class::PytreeOkError];
    };
    let mut out = Vec::new();
    let mut keys: Vec<&String> = ma.keys().collect();
    for k in mb.keys() {
        if !ma.contains_key(k) {
            keys.push(k);
        }
    }
    for k in keys {
        if k != "id" && moved(ma.get(k), mb.get(k)) {
            out.push(Class::PytreeKey(k.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn case_classes() {
        let ok = |r: &str, j: Json| json!({"id": "x", "ok": {"repr": r, "jsonable": j}});
        let err = |t: &str, m: &str| json!({"id": "x", "error": {"type": t, "message": m}});
        let c = |a: &Json, b: &Json| classify(Section::Cases, a, b);
        assert_eq!(c(&ok("a", json!(1)), &ok("b", json!(1))), [Class::ReprOnly]);
        assert_eq!(
            c(&ok("a", json!(1)), &ok("a", json!(2))),
            [Class::JsonableOnly]
        );
        assert_eq!(
            c(&ok("a", json!(1)), &ok("b", json!(2))),
            [Class::ReprAndJsonable]
        );
        assert_eq!(c(&err("E", "m"), &err("E", "n")), [Class::ErrorMessage]);
        assert_eq!(c(&err("E", "m"), &err("F", "m")), [Class::ErrorType]);
        assert_eq!(c(&ok("a", json!(1)), &err("E", "m")), [Class::OkToError]);
        assert_eq!(c(&err("E", "m"), &ok("a", json!(1))), [Class::ErrorToOk]);
        let missing = err(
            "AttributeError",
            "module 'torch.fx.experimental.dynamic_spec' has no attribute 'ParamsSpec'",
        );
        assert_eq!(
            c(&missing, &ok("a", json!(1))),
            [Class::KindMissing(Section::Cases)]
        );
    }

    #[test]
    fn program_classes() {
        let a = json!({"report": {"schema_version": [8, 20], "graph": "g"}});
        let b = json!({"report": {"schema_version": [8, 21], "graph": "h"}});
        assert_eq!(
            classify(Section::Programs, &a, &b),
            [Class::SchemaMinor, Class::ProgramKey("graph".into())]
        );
        let c = json!({"report": {"schema_version": [9, 0], "graph": "g"}});
        assert_eq!(classify(Section::Programs, &a, &c), [Class::SchemaMajor]);
    }

    #[test]
    fn serialized_classes() {
        let saved = |h: &str| json!({"id": "p", "passes": [], "serialized": {"sha256": h, "length": 1, "equals_input": true}});
        let err = json!({"id": "p", "passes": [], "error": {"type": "E", "message": "m"}});
        let c = |a: &Json, b: &Json| classify(Section::Serialized, a, b);
        assert_eq!(c(&saved("a"), &saved("b")), [Class::SerializedBytes]);
        assert_eq!(c(&saved("a"), &err), [Class::SerializedError]);
        assert_eq!(
            Section::of("programs/p.serialized.jsonl"),
            Section::Serialized
        );
        assert_eq!(Class::SerializedBytes.section(), Section::Serialized);
    }
}
