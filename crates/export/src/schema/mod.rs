//! Mirrors torch/_export/serde/schema.py (schema 8.20) and the JSON layer of
//! serialize.py: `_bytes_to_dataclass(ExportedProgram, ..)` plus the schema
//! version check of `ExportedProgramDeserializer.deserialize`, and
//! `_to_json_bytes` for writing.
//!
//! Policies:
//! - Default mode accepts and refuses what PyTorch does. Its refusals carry
//!   Python's exception type and text word for word: a missing required
//!   field (`TypeError: Node.__init__() missing 1 required positional
//!   argument: 'target'`), a union that is not a one-key dict
//!   (`AssertionError`), an unknown union tag (`KeyError`), a bad float
//!   (`ValueError` / `TypeError` / `OverflowError` of `float(data)`), the
//!   major schema version (`SerializeError`). Unknown keys are ignored, a
//!   missing key takes the field's default, unknown enum values are kept
//!   (`Other(i64)`), as Python keeps the raw int.
//! - Python does no type check: `_dict_to_dataclass` carries a `str` where
//!   an `int` belongs, or trips on an incidental error. The incidental
//!   errors that depend only on the data's shape are mirrored word for word
//!   (a dict or a non-empty list for a scalar field, or a dict for a list
//!   field, is `IndexError: tuple index out of range`; a scalar for a dataclass is
//!   `TypeError: argument of type 'int' is not iterable`; a list or string
//!   for a dataclass is `in` then indexing, as Python does it). The fields
//!   the loader knows what Python does with (the `LOOSE` table of
//!   `src/codegen.rs`: schema version, range bounds, `dtype`/`layout`,
//!   `ArgumentKind`, node metadata, truth-valued flags, `guards_code`,
//!   `opset_version`, `torch_version`) are `Loose<T>`: a value of another
//!   JSON type is kept raw, as Python keeps it, and the loader mirrors what
//!   Python then does with it (`load.rs`). Every other wrongly typed value
//!   Python would carry on with is refused with our own error naming its
//!   JSON path (`at $.graph_module.graph.nodes[3].target: expected `str`,
//!   found `int``). Booleans are not ints here.
//! - The walk recurses with the document; a document nested deeper than 64
//!   levels (up to `pyjson::MAX_DEPTH`) is walked on a thread with a large
//!   stack, so no depth `pyjson` accepts overflows the caller's stack.
//! - Strict mode refuses a loose field's raw value (our error, ending
//!   `(strict rule `loose-field`: PyTorch keeps the raw value)`), and
//!   also reports, as diagnostics with their JSON path, each
//!   unknown field, a minor version newer than ours, and each unknown enum
//!   value; all of them are collected. A refusal (Python's or ours) stops
//!   the walk in both modes, as Python's exception does: so a union with
//!   zero or two keys is, in strict mode too, Python's `AssertionError` at
//!   the union's path.
//! - Writing follows `_dataclass_to_dict`: non-finite floats become the
//!   strings `"Infinity"`, `"-Infinity"`, `"NaN"`, enums their int values.
//!   An int past CPython's 4300-digit limit (only a program built in Rust
//!   can hold one) is written whole where Python would raise.

#[rustfmt::skip]
mod generated;
pub mod load;

pub use generated::*;

impl SymExpr {
    /// The text `sympy.sympify` reads: `expr_str`, or the `repr()` of the
    /// JSON value `_dict_to_dataclass` kept in its place (`sympify(51)` is
    /// `sympify("51")`; a bool or a list is not read so, see
    /// `load::Deserializer::parse_sym_expr_of`).
    pub fn expr_text(&self) -> std::borrow::Cow<'_, str> {
        match &self.expr_str {
            Loose::Typed(text) => std::borrow::Cow::Borrowed(text),
            Loose::Raw(v) => {
                let mut text = String::new();
                load::repr_raw(v, &mut text);
                std::borrow::Cow::Owned(text)
            }
        }
    }
}
pub use load::{Diagnostic, JsonPath, LoadCx, LoadError, Loose, Mode, RawFields, RawTy};

use torchspec_pyval::pyjson::{self, PyInt};
use torchspec_pyval::{Error, ErrorKind};

/// A program read from `model.json`, with strict mode's diagnostics.
#[derive(Debug)]
pub struct Loaded {
    /// The program as `_dict_to_dataclass` builds it.
    pub program: ExportedProgram,
    /// Strict mode's findings (empty in the default mode).
    pub diagnostics: Vec<Diagnostic>,
    /// Why each value kept as it came did not fit the schema's type
    /// (`at PATH: expected ..., found ...`), in document order.
    pub loose: Vec<String>,
}

/// `bytes.decode("utf-8")`, with CPython's `UnicodeDecodeError` text.
pub fn decode_utf8(bytes: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let message = match e.error_len() {
            None if bytes.len() - at > 1 => format!(
                "'utf-8' codec can't decode bytes in position {at}-{}: unexpected end of data",
                bytes.len() - 1
            ),
            None => format!(
                "'utf-8' codec can't decode byte 0x{:02x} in position {at}: unexpected end of data",
                bytes[at]
            ),
            Some(_) => {
                let reason = if (0xc2..=0xf4).contains(&bytes[at]) {
                    "invalid continuation byte"
                } else {
                    "invalid start byte"
                };
                format!(
                    "'utf-8' codec can't decode byte 0x{:02x} in position {at}: {reason}",
                    bytes[at]
                )
            }
        };
        Error::python("UnicodeDecodeError", message)
    })
}

/// Reads `model.json` as `torch._export.serde.serialize.deserialize` does up
/// to its schema version check ([`ErrorKind::NotAProgram`] when the bytes
/// are no program, [`ErrorKind::SchemaVersion`] for a version PyTorch
/// refuses).
pub fn load_program(bytes: &[u8], mode: Mode) -> Result<Loaded, Error> {
    read_program(bytes, mode).map_err(|e| e.of_kind(ErrorKind::NotAProgram))
}

fn read_program(bytes: &[u8], mode: Mode) -> Result<Loaded, Error> {
    let text = decode_utf8(bytes)?;
    // Checked as `json.loads` checks it, then typed straight from the text:
    // the document is never built as a tree of values.
    let doc = pyjson::text::Doc::new(text)?;
    let mut cx = LoadCx::new(mode);
    let program = if doc.depth() <= INLINE_DEPTH {
        walk(doc.root(), &mut cx)
    } else {
        // The walk recurses with the document: a deep one gets a stack
        // sized for `pyjson::MAX_DEPTH` levels, whatever thread we are on.
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(DEEP_STACK)
                .spawn_scoped(s, || walk(doc.root(), &mut cx))
                .map_err(|e| Error::new(format!("cannot start a thread for a deep document: {e}")))?
                .join()
                .expect("the schema walk does not panic")
        })
    }?;
    check_version(&program, &mut cx)?;
    Ok(Loaded {
        program,
        diagnostics: cx.diagnostics,
        loose: cx.loose,
    })
}

/// Documents up to this deep are read on the caller's stack.
const INLINE_DEPTH: usize = 64;

/// The stack of the walk of a deeper document (reserved, touched as used).
const DEEP_STACK: usize = 256 << 20;

fn walk(doc: pyjson::text::Val<'_>, cx: &mut LoadCx) -> Result<ExportedProgram, Error> {
    let mut path = JsonPath::new();
    ExportedProgram::from_pyjson(doc, &mut path, cx).map_err(LoadError::into_error)
}

/// `ExportedProgramDeserializer.deserialize`: the major version must be ours
/// (or the 0.0 of an unversioned program), compared with Python's `==` on
/// whatever `_dict_to_dataclass` kept (`8.0 == 8`, `False == 0`).
fn check_version(p: &ExportedProgram, cx: &mut LoadCx) -> Result<(), Error> {
    let SchemaVersion { major, minor } = &p.schema_version;
    let ours = py_eq_int(major, SCHEMA_VERSION.0);
    let unversioned = py_eq_int(major, 0) && py_eq_int(minor, 0);
    if !ours && !unversioned {
        let mut version = String::new();
        p.schema_version.py_repr(&mut version);
        return Err(Error::python(
            "SerializeError",
            format!(
                "Serialized schema version {version} does not match our current schema version ({}, {}).",
                SCHEMA_VERSION.0, SCHEMA_VERSION.1
            ),
        )
        .with_path("$.schema_version")
        .of_kind(ErrorKind::SchemaVersion));
    }
    if let (true, Loose::Typed(minor)) = (cx.strict() && py_eq_int(major, SCHEMA_VERSION.0), minor)
    {
        let newer = match minor {
            PyInt::Small(m) => *m > SCHEMA_VERSION.1,
            PyInt::Big(b) => b.sign() == num_bigint::Sign::Plus,
        };
        if newer {
            let mut path = JsonPath::new();
            path.push_field("schema_version");
            path.push_field("minor");
            cx.report(
                &path,
                format!(
                    "schema version {}.{minor} is newer than this reader's {}.{}",
                    SCHEMA_VERSION.0, SCHEMA_VERSION.0, SCHEMA_VERSION.1
                ),
            );
        }
    }
    Ok(())
}

/// Python's `value == n` for what `json.loads` made.
fn py_eq_int(v: &Loose<PyInt>, n: i64) -> bool {
    use pyjson::PyJson;
    match v {
        Loose::Typed(i) => *i == PyInt::Small(n),
        Loose::Raw(PyJson::Int(i)) => *i == PyInt::Small(n),
        Loose::Raw(PyJson::Float(f)) => *f == n as f64,
        Loose::Raw(PyJson::Bool(b)) => i64::from(*b) == n,
        Loose::Raw(_) => false,
    }
}

/// `_to_json_bytes(program)` (as text: it is UTF-8 of ASCII).
pub fn dump_program(p: &ExportedProgram) -> String {
    let mut out = String::with_capacity(64 * 1024);
    p.write_json(&mut out);
    out
}
