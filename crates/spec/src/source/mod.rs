//! Mirrors torch/_dynamo/source.py (PyTorch 2.15.0): the `Source` classes
//! the case format names, their `__post_init__` checks, `.name` and `repr`.
//! `lookup.rs` mirrors `lookup_spec_from_dynamo_source` and its helpers in
//! torch/_dynamo/variables/builder.py.

pub mod lookup;

use std::any::Any;
use std::fmt::Write;
use std::rc::Rc;

pub use torchspec_pyval::is_identifier;
use torchspec_pyval::{str_repr, PyObject, PyResult, Raise, Value};

/// The source classes of the case format, by their PyTorch names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceClass {
    /// `LocalSource`: a local of the traced frame, `L['x']`.
    LocalSource,
    /// `GlobalSource`: a global of the frame's module, `G['x']`.
    GlobalSource,
    /// `AttrSource`: an attribute of its base source, `base.member`.
    AttrSource,
    /// `ParamBufferSource`: an `AttrSource` for a parameter or buffer of a
    /// specialized `nn.Module`.
    ParamBufferSource,
    /// `UnspecializedParamBufferSource`: an `AttrSource` for a parameter or
    /// buffer of an unspecialized `nn.Module`.
    UnspecializedParamBufferSource,
    /// `CellContentsSource`: an `AttrSource` for the `cell_contents` of a
    /// closure cell.
    CellContentsSource,
    /// `GradSource`: a tensor's `.grad`.
    GradSource,
    /// `NNModuleSource`: an `nn.Module` Dynamo specializes on, named as its
    /// base.
    NNModuleSource,
    /// `UnspecializedNNModuleSource`: an `nn.Module` Dynamo does not specialize
    /// on.
    UnspecializedNNModuleSource,
    /// `UnspecializedBuiltinNNModuleSource`: an unspecialized built-in
    /// `torch.nn` module.
    UnspecializedBuiltinNNModuleSource,
    /// `FSDPNNModuleSource`: an `nn.Module` wrapped by FSDP.
    FSDPNNModuleSource,
    /// `TypeSource`: `type(base)`.
    TypeSource,
    /// `DictGetItemSource`: an item of a dict, `base[index]`.
    DictGetItemSource,
    /// `DictSubclassGetItemSource`: an item of a dict subclass, read with
    /// `dict.__getitem__`.
    DictSubclassGetItemSource,
    /// `GetItemSource`: `base[index]`, the index a constant or an encoded
    /// slice.
    GetItemSource,
    /// `ListGetItemSource`: an item of a list, `list.__getitem__(base, index)`.
    ListGetItemSource,
    /// `TupleIteratorGetItemSource`: item `index` of a tuple iterator.
    TupleIteratorGetItemSource,
    /// `ConstDictKeySource`: the `index`-th key of a dict,
    /// `list(dict.keys(base))[index]`.
    ConstDictKeySource,
}

/// What a source field holds on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A nested source object.
    Source,
    /// A nested source or a plain value (a `DictGetItemSource` index).
    SourceOrValue,
    /// Any Python value the case format can write.
    Value,
    /// A `str`.
    Str,
    /// A `bool`.
    Bool,
    /// An `int`.
    Int,
}

/// `(field, kind, required)`, in dataclass order (the evaluation order).
pub type FieldSpec = (&'static str, FieldKind, bool);

const CHAINED: &[FieldSpec] = &[("base", FieldKind::Source, true)];
const ATTR: &[FieldSpec] = &[
    ("base", FieldKind::Source, true),
    ("member", FieldKind::Str, true),
];
const GETITEM: &[FieldSpec] = &[
    ("base", FieldKind::Source, true),
    ("index", FieldKind::Value, true),
    ("index_is_slice", FieldKind::Bool, false),
];
const DICT_GETITEM: &[FieldSpec] = &[
    ("base", FieldKind::Source, true),
    ("index", FieldKind::SourceOrValue, true),
];

impl SourceClass {
    /// Every source class, in declaration order.
    pub const ALL: [SourceClass; 18] = [
        SourceClass::LocalSource,
        SourceClass::GlobalSource,
        SourceClass::AttrSource,
        SourceClass::ParamBufferSource,
        SourceClass::UnspecializedParamBufferSource,
        SourceClass::CellContentsSource,
        SourceClass::GradSource,
        SourceClass::NNModuleSource,
        SourceClass::UnspecializedNNModuleSource,
        SourceClass::UnspecializedBuiltinNNModuleSource,
        SourceClass::FSDPNNModuleSource,
        SourceClass::TypeSource,
        SourceClass::DictGetItemSource,
        SourceClass::DictSubclassGetItemSource,
        SourceClass::GetItemSource,
        SourceClass::ListGetItemSource,
        SourceClass::TupleIteratorGetItemSource,
        SourceClass::ConstDictKeySource,
    ];

    /// The PyTorch class name (`AttrSource`, ...).
    ///
    /// ```
    /// use torchspec_spec::source::SourceClass;
    /// assert_eq!(SourceClass::DictGetItemSource.name(), "DictGetItemSource");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SourceClass::LocalSource => "LocalSource",
            SourceClass::GlobalSource => "GlobalSource",
            SourceClass::AttrSource => "AttrSource",
            SourceClass::ParamBufferSource => "ParamBufferSource",
            SourceClass::UnspecializedParamBufferSource => "UnspecializedParamBufferSource",
            SourceClass::CellContentsSource => "CellContentsSource",
            SourceClass::GradSource => "GradSource",
            SourceClass::NNModuleSource => "NNModuleSource",
            SourceClass::UnspecializedNNModuleSource => "UnspecializedNNModuleSource",
            SourceClass::UnspecializedBuiltinNNModuleSource => "UnspecializedBuiltinNNModuleSource",
            SourceClass::FSDPNNModuleSource => "FSDPNNModuleSource",
            SourceClass::TypeSource => "TypeSource",
            SourceClass::DictGetItemSource => "DictGetItemSource",
            SourceClass::DictSubclassGetItemSource => "DictSubclassGetItemSource",
            SourceClass::GetItemSource => "GetItemSource",
            SourceClass::ListGetItemSource => "ListGetItemSource",
            SourceClass::TupleIteratorGetItemSource => "TupleIteratorGetItemSource",
            SourceClass::ConstDictKeySource => "ConstDictKeySource",
        }
    }

    /// The source class with the PyTorch name `name`, if the case format has
    /// it.
    ///
    /// ```
    /// use torchspec_spec::source::SourceClass;
    /// assert_eq!(SourceClass::from_name("GetItemSource"), Some(SourceClass::GetItemSource));
    /// assert_eq!(SourceClass::from_name("ChainedSource"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<SourceClass> {
        SourceClass::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// The fields the case format passes, as `oracle/capture.py` checks them.
    pub fn fields(self) -> &'static [FieldSpec] {
        match self {
            SourceClass::LocalSource => &[
                ("local_name", FieldKind::Str, true),
                ("is_input", FieldKind::Bool, false),
                ("is_varargs", FieldKind::Bool, false),
                ("is_varkw", FieldKind::Bool, false),
                ("is_derefed_cell_contents", FieldKind::Bool, false),
            ],
            SourceClass::GlobalSource => &[("global_name", FieldKind::Str, true)],
            SourceClass::AttrSource
            | SourceClass::ParamBufferSource
            | SourceClass::UnspecializedParamBufferSource => ATTR,
            SourceClass::CellContentsSource => &[
                ("base", FieldKind::Source, true),
                ("member", FieldKind::Str, true),
                ("freevar_name", FieldKind::Str, false),
            ],
            SourceClass::GradSource => &[
                ("base", FieldKind::Source, true),
                ("member", FieldKind::Str, false),
            ],
            SourceClass::NNModuleSource
            | SourceClass::UnspecializedNNModuleSource
            | SourceClass::UnspecializedBuiltinNNModuleSource
            | SourceClass::FSDPNNModuleSource
            | SourceClass::TypeSource => CHAINED,
            SourceClass::DictGetItemSource | SourceClass::DictSubclassGetItemSource => DICT_GETITEM,
            SourceClass::GetItemSource
            | SourceClass::ListGetItemSource
            | SourceClass::TupleIteratorGetItemSource => GETITEM,
            SourceClass::ConstDictKeySource => &[
                ("base", FieldKind::Source, true),
                ("index", FieldKind::Int, true),
            ],
        }
    }

    /// `isinstance(x, NNModuleSource)`.
    pub fn is_nn_module(self) -> bool {
        matches!(
            self,
            SourceClass::NNModuleSource
                | SourceClass::UnspecializedNNModuleSource
                | SourceClass::UnspecializedBuiltinNNModuleSource
                | SourceClass::FSDPNNModuleSource
        )
    }

    /// `isinstance(x, AttrSource)`.
    pub fn is_attr(self) -> bool {
        matches!(
            self,
            SourceClass::AttrSource
                | SourceClass::ParamBufferSource
                | SourceClass::UnspecializedParamBufferSource
                | SourceClass::CellContentsSource
        )
    }

    /// `isinstance(x, GetItemSource)`.
    pub fn is_getitem(self) -> bool {
        matches!(
            self,
            SourceClass::GetItemSource
                | SourceClass::ListGetItemSource
                | SourceClass::TupleIteratorGetItemSource
        )
    }
}

/// A constructed source. Field values are Python values; only the fields
/// the case format can set are kept (`dynamism` is always `None`).
///
/// ```
/// use std::rc::Rc;
/// use torchspec_pyval::Value;
/// use torchspec_spec::source::{DictIndex, Source, SourceClass};
/// // DictGetItemSource(LocalSource('cfg', is_input=True), 'k')
/// let cfg = Rc::new(Source::local("cfg".into(), true, false, false, false));
/// let k = Source::dict_getitem(
///     SourceClass::DictGetItemSource,
///     cfg,
///     DictIndex::Literal(Value::str("k")),
/// )?;
/// assert_eq!(k.name()?, "L['cfg']['k']");
/// assert_eq!(
///     k.repr_string()?,
///     "DictGetItemSource(base=LocalSource(local_name='cfg', is_input=True, dynamism=None, \
///      is_derefed_cell_contents=False), index='k')"
/// );
/// # Ok::<(), torchspec_pyval::Raise>(())
/// ```
#[derive(Debug)]
pub struct Source {
    /// Which source class this is.
    pub class: SourceClass,
    /// The field values, in the layout the class shares with its kin.
    pub kind: SourceKind,
}

/// The fields of a source, one variant per group of classes with the same
/// fields.
#[derive(Debug)]
pub enum SourceKind {
    /// `LocalSource`: a local of the traced frame.
    Local {
        /// The local's name.
        local_name: String,
        /// Whether the local is an input of the frame.
        is_input: bool,
        /// Whether the local is the `*args` parameter.
        is_varargs: bool,
        /// Whether the local is the `**kwargs` parameter.
        is_varkw: bool,
        /// Whether the local is a free variable read from its cell
        /// (`LOAD_DEREF`).
        is_derefed_cell_contents: bool,
    },
    /// `GlobalSource`: a global of the frame's module.
    Global {
        /// The global's name.
        global_name: String,
    },
    /// AttrSource and its subclasses, GradSource (`freevar_name` only for CellContentsSource).
    Attr {
        /// The source of the object the attribute is read from.
        base: Rc<Source>,
        /// The attribute's name.
        member: String,
        /// The closed-over variable's name (`CellContentsSource` only).
        freevar_name: Option<String>,
    },
    /// NNModuleSource and its subclasses, TypeSource.
    Wrapper {
        /// The wrapped source.
        base: Rc<Source>,
    },
    /// `DictGetItemSource` and `DictSubclassGetItemSource`: an item of a dict.
    DictGetItem {
        /// The dict's source.
        base: Rc<Source>,
        /// The key: a key source or a literal.
        index: DictIndex,
    },
    /// `GetItemSource`, `ListGetItemSource`, `TupleIteratorGetItemSource`:
    /// `base[index]`.
    GetItem {
        /// The container's source.
        base: Rc<Source>,
        /// The index; a slice is stored as `slice.__reduce__()`,
        /// `(slice, (start, stop, step))`.
        index: Value,
        /// Whether `index` is an encoded slice.
        index_is_slice: bool,
    },
    /// `ConstDictKeySource`: a key of a dict, by position.
    ConstDictKey {
        /// The dict's source.
        base: Rc<Source>,
        /// The key's position in the dict's insertion order.
        index: Value,
    },
}

/// The `index` of a `DictGetItemSource`, as constructed.
#[derive(Debug)]
pub enum DictIndex {
    /// A `ConstDictKeySource`: the key is read from the dict.
    ConstDictKey(Rc<Source>),
    /// A constant key; one that is not a literal
    /// (`ConstantVariable.is_literal`) is rejected by `__post_init__`.
    Literal(Value),
    /// Any other source: rejected by `__post_init__`, kept for its message.
    OtherSource(Rc<Source>),
}

/// `repr(slice)`, the first item of `slice.__reduce__()`.
#[derive(Debug)]
pub struct SliceType;

impl PyObject for SliceType {
    fn type_name(&self) -> &'static str {
        "type"
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str("<class 'slice'>");
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `ConstantVariable.is_literal`: builtin scalars, and lists/tuples of them.
fn is_literal(v: &Value) -> bool {
    match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => true,
        Value::List(items) | Value::Tuple(items) => items.iter().all(is_literal),
        _ => false,
    }
}

fn assertion(message: String) -> Raise {
    Raise::new("AssertionError", message)
}

impl Source {
    /// Construct with the class's `__post_init__` checks. `fields` holds the
    /// values passed; absent optional fields take the dataclass defaults.
    ///
    /// ```
    /// use torchspec_spec::source::Source;
    /// // LocalSource('x', is_input=True)
    /// let x = Source::local("x".into(), true, false, false, false);
    /// assert_eq!(x.name()?, "L['x']");
    /// assert_eq!(
    ///     x.repr_string()?,
    ///     "LocalSource(local_name='x', is_input=True, dynamism=None, is_derefed_cell_contents=False)"
    /// );
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn local(
        local_name: String,
        is_input: bool,
        is_varargs: bool,
        is_varkw: bool,
        derefed: bool,
    ) -> Source {
        Source {
            class: SourceClass::LocalSource,
            kind: SourceKind::Local {
                local_name,
                is_input,
                is_varargs,
                is_varkw,
                is_derefed_cell_contents: derefed,
            },
        }
    }

    /// `GlobalSource(global_name)`.
    ///
    /// ```
    /// use torchspec_spec::source::Source;
    /// let g = Source::global("G".into());
    /// assert_eq!((g.name()?.as_str(), g.repr_string()?.as_str()), ("G['G']", "GlobalSource(global_name='G')"));
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn global(global_name: String) -> Source {
        Source {
            class: SourceClass::GlobalSource,
            kind: SourceKind::Global { global_name },
        }
    }

    /// AttrSource, ParamBufferSource, UnspecializedParamBufferSource,
    /// CellContentsSource, GradSource.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::Raise;
    /// use torchspec_spec::source::{Source, SourceClass};
    /// let m = Rc::new(Source::local("m".into(), true, false, false, false));
    /// // AttrSource(LocalSource('m', is_input=True), 'weight')
    /// let w = Source::attr(SourceClass::AttrSource, m.clone(), "weight".into(), None)?;
    /// assert_eq!(w.name()?, "L['m'].weight");
    /// assert_eq!(
    ///     w.repr_string()?,
    ///     "AttrSource(base=LocalSource(local_name='m', is_input=True, dynamism=None, \
    ///      is_derefed_cell_contents=False), member='weight')"
    /// );
    /// // __post_init__ refuses a dotted member.
    /// assert_eq!(
    ///     Source::attr(SourceClass::AttrSource, m, "a.b".into(), None).unwrap_err(),
    ///     Raise::new("AssertionError", "AttrSource member must not contain '.', got 'a.b'. \
    ///         Use OutputGraph.get_chained_attr_source() for dotted paths.")
    /// );
    /// # Ok::<(), Raise>(())
    /// ```
    pub fn attr(
        class: SourceClass,
        base: Rc<Source>,
        member: String,
        freevar_name: Option<String>,
    ) -> PyResult<Source> {
        match class {
            SourceClass::CellContentsSource => {
                if member != "cell_contents" {
                    return Err(assertion(
                        "CellContentsSource should only be used for cell_contents".into(),
                    ));
                }
            }
            SourceClass::GradSource => {}
            _ => {
                if member.contains('.') {
                    return Err(assertion(format!(
                        "AttrSource member must not contain '.', got {}. Use OutputGraph.get_chained_attr_source() for dotted paths.",
                        str_repr(&member)
                    )));
                }
            }
        }
        let freevar_name = match class {
            SourceClass::CellContentsSource => Some(freevar_name.unwrap_or_default()),
            _ => None,
        };
        Ok(Source {
            class,
            kind: SourceKind::Attr {
                base,
                member,
                freevar_name,
            },
        })
    }

    /// A source of class `class` (`NNModuleSource` or a subclass, `TypeSource`)
    /// around `base`.
    pub fn wrapper(class: SourceClass, base: Rc<Source>) -> Source {
        Source {
            class,
            kind: SourceKind::Wrapper { base },
        }
    }

    /// `DictGetItemSource` / `DictSubclassGetItemSource` with its
    /// `__post_init__` check: `AssertionError` unless `index` is a
    /// `ConstDictKeySource` or a literal.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::{Raise, Value};
    /// use torchspec_spec::source::{DictIndex, Source, SourceClass};
    /// let x = Rc::new(Source::local("x".into(), true, false, false, false));
    /// // DictGetItemSource(x, LocalSource('y')): not a key source, not a literal.
    /// let y = Rc::new(Source::local("y".into(), false, false, false, false));
    /// let err = Source::dict_getitem(SourceClass::DictGetItemSource, x, DictIndex::OtherSource(y));
    /// assert_eq!(
    ///     err.unwrap_err(),
    ///     Raise::new("AssertionError", "DictGetItemSource index must be a ConstDictKeySource or literal, \
    ///         got LocalSource(local_name='y', is_input=False, dynamism=None, is_derefed_cell_contents=False)")
    /// );
    /// ```
    pub fn dict_getitem(
        class: SourceClass,
        base: Rc<Source>,
        index: DictIndex,
    ) -> PyResult<Source> {
        let bad = match &index {
            DictIndex::ConstDictKey(_) => None,
            DictIndex::Literal(v) if is_literal(v) => None,
            DictIndex::Literal(v) => Some(v.repr()?),
            DictIndex::OtherSource(s) => Some(s.repr_string()?),
        };
        if let Some(got) = bad {
            return Err(assertion(format!(
                "{} index must be a ConstDictKeySource or literal, got {got}",
                class.name()
            )));
        }
        Ok(Source {
            class,
            kind: SourceKind::DictGetItem { base, index },
        })
    }

    /// `GetItemSource`, `ListGetItemSource` or `TupleIteratorGetItemSource`; a
    /// slice index is stored as `slice.__reduce__()` and sets `index_is_slice`.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_pyval::Value;
    /// use torchspec_spec::source::{Source, SourceClass};
    /// // GetItemSource(LocalSource('xs', is_input=True), 0)
    /// let xs = Rc::new(Source::local("xs".into(), true, false, false, false));
    /// let x0 = Source::getitem(SourceClass::GetItemSource, xs, Value::int(0), false);
    /// assert_eq!(x0.name()?, "L['xs'][0]");
    /// assert_eq!(
    ///     x0.repr_string()?,
    ///     "GetItemSource(base=LocalSource(local_name='xs', is_input=True, dynamism=None, \
    ///      is_derefed_cell_contents=False), index=0, index_is_slice=False)"
    /// );
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn getitem(
        class: SourceClass,
        base: Rc<Source>,
        index: Value,
        index_is_slice: bool,
    ) -> Source {
        // A slice index is stored as `slice.__reduce__()` and forces
        // `index_is_slice`, so the source stays hashable.
        let (index, index_is_slice) = match &index {
            Value::Slice(parts) => (
                Value::Tuple(Rc::new(vec![
                    Value::object(SliceType),
                    Value::Tuple(Rc::new(parts.as_ref().to_vec())),
                ])),
                true,
            ),
            _ => (index, index_is_slice),
        };
        Source {
            class,
            kind: SourceKind::GetItem {
                base,
                index,
                index_is_slice,
            },
        }
    }

    /// `ConstDictKeySource(base, index)`.
    pub fn const_dict_key(base: Rc<Source>, index: Value) -> Source {
        Source {
            class: SourceClass::ConstDictKeySource,
            kind: SourceKind::ConstDictKey { base, index },
        }
    }

    /// `.base` of a chained source.
    ///
    /// ```
    /// use std::rc::Rc;
    /// use torchspec_spec::source::{Source, SourceClass};
    /// let m = Rc::new(Source::local("m".into(), true, false, false, false));
    /// let w = Source::attr(SourceClass::AttrSource, m.clone(), "weight".into(), None)?;
    /// assert!(Rc::ptr_eq(w.base().unwrap(), &m));
    /// assert!(m.base().is_none());
    /// # Ok::<(), torchspec_pyval::Raise>(())
    /// ```
    pub fn base(&self) -> Option<&Rc<Source>> {
        match &self.kind {
            SourceKind::Local { .. } | SourceKind::Global { .. } => None,
            SourceKind::Attr { base, .. }
            | SourceKind::Wrapper { base }
            | SourceKind::DictGetItem { base, .. }
            | SourceKind::GetItem { base, .. }
            | SourceKind::ConstDictKey { base, .. } => Some(base),
        }
    }

    /// `source.name`. A root's name is its `_name_template` unformatted, so
    /// braces `_esc_str` doubled stay doubled (`L['a{{b}}']`); a chained
    /// source formats its template, undoubling its own braces and inserting
    /// the base's name verbatim.
    pub fn name(&self) -> PyResult<String> {
        let mut out = String::new();
        self.write_name(&mut out)?;
        Ok(out)
    }

    fn write_name(&self, out: &mut String) -> PyResult<()> {
        match &self.kind {
            SourceKind::Local { local_name, .. } => {
                out.push_str("L[");
                out.push_str(&esc(&str_repr(local_name)));
                out.push(']');
            }
            SourceKind::Global { global_name } => {
                out.push_str("G[");
                out.push_str(&esc(&str_repr(global_name)));
                out.push(']');
            }
            SourceKind::Attr { base, member, .. } => {
                if self.class != SourceClass::GradSource && !is_identifier(member) {
                    out.push_str("getattr(");
                    base.write_name(out)?;
                    let _ = write!(out, ", {})", str_repr(member));
                } else {
                    base.write_name(out)?;
                    out.push('.');
                    out.push_str(member);
                }
            }
            SourceKind::Wrapper { base } => {
                if self.class == SourceClass::TypeSource {
                    out.push_str("type(");
                    base.write_name(out)?;
                    out.push(')');
                } else {
                    base.write_name(out)?;
                }
            }
            SourceKind::DictGetItem { base, index } => {
                // The template is built before formatting: a bad index name
                // raises before the base's name is asked for.
                let index_text = match index {
                    DictIndex::ConstDictKey(k) => k.name()?,
                    DictIndex::Literal(v) => v.repr()?,
                    DictIndex::OtherSource(_) => unreachable!("rejected at construction"),
                };
                if self.class == SourceClass::DictSubclassGetItemSource
                    && matches!(index, DictIndex::ConstDictKey(_))
                {
                    out.push_str("dict.__getitem__(");
                    base.write_name(out)?;
                    let _ = write!(out, ", {index_text})");
                } else {
                    base.write_name(out)?;
                    let _ = write!(out, "[{index_text}]");
                }
            }
            SourceKind::GetItem {
                base,
                index,
                index_is_slice,
            } => {
                let index_text = match self.class {
                    SourceClass::ListGetItemSource if *index_is_slice => {
                        return Err(Raise::new(
                            "RuntimeError",
                            "List[slice] is a temporary object and should not have a source",
                        ))
                    }
                    SourceClass::GetItemSource if *index_is_slice => unpack_slice(index)?.repr()?,
                    _ => index.repr()?,
                };
                match self.class {
                    SourceClass::ListGetItemSource => {
                        out.push_str("list.__getitem__(");
                        base.write_name(out)?;
                        let _ = write!(out, ", {index_text})");
                    }
                    SourceClass::TupleIteratorGetItemSource => {
                        out.push_str("___tuple_iterator_getitem(");
                        base.write_name(out)?;
                        let _ = write!(out, ", {index_text})");
                    }
                    _ => {
                        base.write_name(out)?;
                        let _ = write!(out, "[{index_text}]");
                    }
                }
            }
            SourceKind::ConstDictKey { base, index } => {
                let index_text = index.repr()?;
                out.push_str("list(dict.keys(");
                base.write_name(out)?;
                let _ = write!(out, "))[{index_text}]");
            }
        }
        Ok(())
    }

    /// The dataclass `repr`: fields with `repr=True`, in order.
    pub fn repr_string(&self) -> PyResult<String> {
        let mut out = String::new();
        self.write_source_repr(&mut out)?;
        Ok(out)
    }

    fn write_source_repr(&self, out: &mut String) -> PyResult<()> {
        out.push_str(self.class.name());
        out.push('(');
        let py_bool = |b: bool| if b { "True" } else { "False" };
        match &self.kind {
            SourceKind::Local {
                local_name,
                is_input,
                is_derefed_cell_contents,
                ..
            } => {
                // `is_varargs` / `is_varkw` are `repr=False`.
                let _ = write!(
                    out,
                    "local_name={}, is_input={}, dynamism=None, is_derefed_cell_contents={}",
                    str_repr(local_name),
                    py_bool(*is_input),
                    py_bool(*is_derefed_cell_contents)
                );
            }
            SourceKind::Global { global_name } => {
                let _ = write!(out, "global_name={}", str_repr(global_name));
            }
            SourceKind::Attr {
                base,
                member,
                freevar_name,
            } => {
                out.push_str("base=");
                base.write_source_repr(out)?;
                let _ = write!(out, ", member={}", str_repr(member));
                if let Some(f) = freevar_name {
                    let _ = write!(out, ", freevar_name={}", str_repr(f));
                }
            }
            SourceKind::Wrapper { base } => {
                out.push_str("base=");
                base.write_source_repr(out)?;
            }
            SourceKind::DictGetItem { base, index } => {
                out.push_str("base=");
                base.write_source_repr(out)?;
                out.push_str(", index=");
                match index {
                    DictIndex::ConstDictKey(s) | DictIndex::OtherSource(s) => {
                        s.write_source_repr(out)?
                    }
                    DictIndex::Literal(v) => v.write_repr(out)?,
                }
            }
            SourceKind::GetItem {
                base,
                index,
                index_is_slice,
            } => {
                out.push_str("base=");
                base.write_source_repr(out)?;
                out.push_str(", index=");
                index.write_repr(out)?;
                let _ = write!(out, ", index_is_slice={}", py_bool(*index_is_slice));
            }
            SourceKind::ConstDictKey { base, index } => {
                out.push_str("base=");
                base.write_source_repr(out)?;
                out.push_str(", index=");
                index.write_repr(out)?;
            }
        }
        out.push(')');
        Ok(())
    }
}

/// `GetItemSource.unpack_slice`: the index must be `(slice, (args...))`.
fn unpack_slice(index: &Value) -> PyResult<Value> {
    if let Value::Tuple(items) = index {
        if let [cls, Value::Tuple(args)] = items.as_slice() {
            if cls.downcast::<SliceType>().is_some() && args.len() == 3 {
                return Ok(Value::Slice(Rc::new([
                    args[0].clone(),
                    args[1].clone(),
                    args[2].clone(),
                ])));
            }
        }
    }
    Err(assertion(format!(
        "Expected an encoded slice, got {}",
        index.repr()?
    )))
}

/// `_esc_str`: double the braces of a format template.
fn esc(s: &str) -> String {
    s.replace('{', "{{").replace('}', "}}")
}

impl PyObject for Source {
    fn type_name(&self) -> &'static str {
        self.class.name()
    }
    fn write_repr(&self, out: &mut String) -> PyResult<()> {
        self.write_source_repr(out)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
