//! What the loading Python process has registered beyond a plain
//! `import torch`: custom operators (`torch.library.custom_op`) and pytree
//! types (`_register_namedtuple`, `torch.export.register_dataclass`).
//!
//! A `.pt2` archive names such operators and types but does not describe
//! them: PyTorch loads it only in a process where the library that defines
//! them has been imported. The reference reads the program without them
//! (the graph, signature and report need no schema), and asks for them where
//! PyTorch's answer depends on them: the purity of an operator in dead-code
//! elimination, a namedtuple or dataclass named by the call spec.
//!
//! `oracle/registrations.py` writes the file from a live process
//! (`corpus/programs/registrations.json` is what `oracle/zoo_types.py`
//! registers, and what the conformance check loads the zoo with):
//!
//! ```json
//! {"ops": {"torch.ops.mylib.add_into.default":
//!             {"schema": "mylib::add_into(Tensor(a0!) out, Tensor x) -> ()", "impure": true}},
//!  "pytree_types": {"mylib.Point": {"kind": "namedtuple", "module": "mylib",
//!                                   "qualname": "Point", "fields": ["x", "y"]}}}
//! ```
//!
//! ```no_run
//! use std::sync::Arc;
//! use torchspec_export::{registrations::Registrations, schema::Mode, ExportedProgram};
//! let regs = Arc::new(Registrations::read("registrations.json")?);
//! let ep = ExportedProgram::load_path_in("model.pt2", Mode::Default, &regs)?;
//! # Ok::<(), torchspec_export::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use torchspec_pyval::pyjson::{self, PyJson as Json};

use torchspec_pyval::error::{Error, Result};

/// A custom operator overload, by what `str(op._schema)` and
/// `torch._library.utils.is_impure(op)` say of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomOp {
    /// `str(op._schema)`: the overload's schema string.
    pub schema: String,
    /// `torch._library.utils.is_impure(op)`: whether passes must keep its calls.
    pub impure: bool,
}

/// How a registered pytree type flattens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PytreeKind {
    /// `torch.utils._pytree._register_namedtuple(cls, serialized_type_name=...)`.
    NamedTuple,
    /// `torch.export.register_dataclass(cls, serialized_type_name=...)`.
    Dataclass,
}

/// A registered pytree type: its class and its fields in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PytreeType {
    /// Which registration the type came from.
    pub kind: PytreeKind,
    /// `cls.__module__`.
    pub module: String,
    /// `cls.__qualname__`.
    pub qualname: String,
    /// The field names, in order (`cls._fields`, or the dataclass's fields).
    pub fields: Vec<String>,
}

/// The registrations of one loading process (none: a plain `import torch`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registrations {
    /// By serialized target (`torch.ops.NS.NAME.OVERLOAD`).
    pub ops: BTreeMap<String, CustomOp>,
    /// By serialized type name (what a TreeSpec's `"type"` says).
    pub pytree_types: BTreeMap<String, PytreeType>,
}

impl Registrations {
    /// A plain `import torch`: nothing registered (shared).
    pub fn plain() -> &'static Arc<Registrations> {
        static PLAIN: OnceLock<Arc<Registrations>> = OnceLock::new();
        PLAIN.get_or_init(|| Arc::new(Registrations::default()))
    }

    /// Reads a registrations file (see the module docs).
    pub fn read(path: impl AsRef<Path>) -> Result<Registrations> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json(&text).map_err(|e| e.in_file(path))
    }

    /// Parses a registrations document (as `json.loads` reads it); an error
    /// names its JSON path.
    pub fn from_json(text: &str) -> Result<Registrations> {
        let doc = pyjson::loads(text).map_err(|e| Error::new(format!("invalid JSON: {e}")))?;
        Self::from_pyjson(&doc)
    }

    /// Reads a parsed registrations document; an error names its JSON path.
    pub fn from_pyjson(doc: &Json) -> Result<Registrations> {
        let Json::Object(top) = doc else {
            return Err(Error::at("$", "a registrations document must be an object"));
        };
        let mut out = Registrations::default();
        for (key, value) in top {
            match key.as_str() {
                "torch_version" => {}
                "ops" => {
                    for (target, op) in object(value, "$.ops")? {
                        let at = format!("$.ops[{target:?}]");
                        if !target.starts_with("torch.ops.") {
                            return Err(Error::at(
                                &at,
                                "an operator is named by its serialized target `torch.ops.NS.NAME.OVERLOAD`",
                            ));
                        }
                        object(op, &at)?;
                        out.ops.insert(
                            target.clone(),
                            CustomOp {
                                schema: string(op.get("schema"), &format!("{at}.schema"))?,
                                impure: match op.get("impure") {
                                    Some(Json::Bool(b)) => *b,
                                    _ => {
                                        return Err(Error::at(
                                            &format!("{at}.impure"),
                                            "expected true or false",
                                        ))
                                    }
                                },
                            },
                        );
                    }
                }
                "pytree_types" => {
                    for (name, ty) in object(value, "$.pytree_types")? {
                        let at = format!("$.pytree_types[{name:?}]");
                        object(ty, &at)?;
                        let f = ty;
                        let kind = match string(f.get("kind"), &format!("{at}.kind"))?.as_str() {
                            "namedtuple" => PytreeKind::NamedTuple,
                            "dataclass" => PytreeKind::Dataclass,
                            other => {
                                return Err(Error::at(
                                    &format!("{at}.kind"),
                                    format!(
                                        "expected \"namedtuple\" or \"dataclass\", got {other:?}"
                                    ),
                                ))
                            }
                        };
                        let fields_at = format!("{at}.fields");
                        let Some(Json::List(items)) = f.get("fields") else {
                            return Err(Error::at(&fields_at, "expected a list of field names"));
                        };
                        let fields = items
                            .iter()
                            .enumerate()
                            .map(|(i, x)| string(Some(x), &format!("{fields_at}[{i}]")))
                            .collect::<Result<Vec<_>>>()?;
                        out.pytree_types.insert(
                            name.clone(),
                            PytreeType {
                                kind,
                                module: string(f.get("module"), &format!("{at}.module"))?,
                                qualname: string(f.get("qualname"), &format!("{at}.qualname"))?,
                                fields,
                            },
                        );
                    }
                }
                other => {
                    return Err(Error::at(
                        &format!("$.{other}"),
                        "unknown key (expected ops, pytree_types, torch_version)",
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The custom operator of a serialized target, when registered.
    pub fn op(&self, target: &str) -> Option<&CustomOp> {
        self.ops.get(target)
    }

    /// The pytree registries of a process with these registrations: those
    /// of `import torch`, plus each registered type.
    pub fn pytree_registry(&self) -> crate::pytree::Registry {
        let mut registry = crate::pytree::Registry::torch();
        for (name, ty) in &self.pytree_types {
            let fields: Vec<&str> = ty.fields.iter().map(String::as_str).collect();
            match ty.kind {
                PytreeKind::NamedTuple => {
                    registry.register_namedtuple(name, &ty.module, &ty.qualname, &fields);
                }
                PytreeKind::Dataclass => {
                    registry.register_dataclass(name, &ty.module, &ty.qualname, &fields);
                }
            }
        }
        registry
    }
}

fn object<'a>(v: &'a Json, at: &str) -> Result<&'a [(String, Json)]> {
    match v {
        Json::Object(m) => Ok(m),
        _ => Err(Error::at(at, "expected an object")),
    }
}

fn string(v: Option<&Json>, at: &str) -> Result<String> {
    match v {
        Some(Json::Str(s)) => Ok(s.clone()),
        _ => Err(Error::at(at, "expected a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_refuses_with_paths() {
        let r = Registrations::from_json(
            r#"{"ops": {"torch.ops.m.f.default": {"schema": "m::f(Tensor(a!) x) -> ()", "impure": true}},
                "pytree_types": {"m.P": {"kind": "namedtuple", "module": "m", "qualname": "P", "fields": ["a"]}}}"#,
        )
        .expect("reads");
        assert!(r.op("torch.ops.m.f.default").expect("registered").impure);
        assert_eq!(r.pytree_types["m.P"].kind, PytreeKind::NamedTuple);
        for (doc, want) in [
            ("[]", "$: a registrations document must be an object"),
            (r#"{"ops": {"f": {}}}"#, "$.ops[\"f\"]"),
            (
                r#"{"ops": {"torch.ops.m.f.default": {"schema": "s"}}}"#,
                "$.ops[\"torch.ops.m.f.default\"].impure",
            ),
            (
                r#"{"pytree_types": {"m.P": {"kind": "set", "module": "m", "qualname": "P", "fields": []}}}"#,
                "$.pytree_types[\"m.P\"].kind",
            ),
            (r#"{"extra": 1}"#, "$.extra"),
            ("{", "invalid JSON"),
        ] {
            let e = Registrations::from_json(doc).expect_err(doc).to_string();
            assert!(e.contains(want), "{doc}: {e}");
        }
    }
}
