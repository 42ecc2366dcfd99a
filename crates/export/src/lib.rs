#![warn(missing_docs)]
//! Mirrors torch.export's read side: an `ExportedProgram` as
//! `torch.export.load` rebuilds it from a `.pt2` archive or the program
//! JSON, and what PyTorch says about it (the program report).
//!
//! A Rust program reads one with [`open`] ([`program`]: inputs with dtypes
//! and symbolic dims, the graph as iterators of nodes, range constraints as
//! a map, tensors by name as views over the archive):
//!
//! ```
//! let program = torchspec_export::open("../../corpus/programs/mlp-dynamic.pt2")?;
//! let x = program.input("x").unwrap();
//! assert_eq!(x.ty.to_string(), "torch.float32[s77, 4]");
//! assert_eq!(program.ranges()["s77"].to_string(), "[2, 64]");
//! let w: Vec<f32> = program.tensor("fc.weight")?.to_vec()?;
//! assert_eq!(w.len(), 12);
//! # Ok::<(), torchspec_export::Error>(())
//! ```
//!
//! The program as PyTorch has it, for a harness that mirrors its every
//! view, is [`ExportedProgram`]:
//!
//! ```no_run
//! let ep = torchspec_export::ExportedProgram::open("model.pt2")?;
//! println!("{}", ep.graph_module.graph.to_python_string());
//! println!("{}", ep.graph_module.signature);
//! # Ok::<(), torchspec_export::Error>(())
//! ```

/// The README's examples, compiled with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod archive;
pub mod elements;
pub mod failure;
pub mod fx;
pub mod inputs;
pub mod load;
pub mod model;
pub mod ops;
pub mod passes;
pub mod pickle;
pub mod program;
pub mod pytree;
pub mod ranges;
pub mod registrations;
pub mod report;
#[cfg(feature = "safetensors")]
pub mod safetensors;
pub mod sample_inputs;
pub mod schema;
pub mod serialize;
pub mod signature;
pub mod srepr;
pub mod sympify;
pub mod verify;
pub mod weights;

use std::path::Path;

use model::LoadedGraphModule;
pub use model::{ExportedProgram, StateDictEntry, TensorInfo};

// The Rust-shaped reading of a program (`program`): what a user needs
// without the schema's wire types or sympy text.
pub use elements::{Chunks, Element, Scalar, Values};
pub use fx::{Arg, NodeId, Op};
pub use program::{open, Dim, Expr, Input, Output, Program, Range, Sym, TensorType, ValueType};
use registrations::Registrations;
use schema::Mode;
pub use signature::{Constant, InputKind, OutputKind};
use std::sync::Arc;
pub use torchspec_pyval::pyjson::PyInt;
use torchspec_pyval::pyjson::PyJson;
pub use torchspec_pyval::{Error, ErrorKind, Result};
pub use weights::{Dtype, TensorView};

/// How to load a program: the mode and what the loading process has
/// registered. The one set of options behind every `load_*` constructor.
///
/// ```no_run
/// use torchspec_export::{ExportedProgram, LoadOptions};
/// use torchspec_export::schema::Mode;
/// let opts = LoadOptions::new().mode(Mode::Strict);
/// let ep = ExportedProgram::load(std::path::Path::new("model.pt2"), &opts)?;
/// println!("{} nodes", ep.graph_module.graph.len());
/// # Ok::<(), torchspec_export::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// `Mode::Default` reads as `torch.export.load` does; `Mode::Strict`
    /// also refuses what the schema does not allow.
    pub mode: Mode,
    /// Custom ops and pytree types the program names.
    pub registrations: Arc<Registrations>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            mode: Mode::Default,
            registrations: Registrations::plain().clone(),
        }
    }
}

impl LoadOptions {
    /// The default mode, nothing registered beyond `import torch`.
    pub fn new() -> LoadOptions {
        LoadOptions::default()
    }
    /// These options in `mode`.
    pub fn mode(mut self, mode: Mode) -> LoadOptions {
        self.mode = mode;
        self
    }
    /// These options with `registrations`.
    pub fn registrations(mut self, registrations: Arc<Registrations>) -> LoadOptions {
        self.registrations = registrations;
        self
    }
}

impl ExportedProgram {
    /// Opens a `.pt2` archive (mapped, read as `torch.export.load` reads
    /// it) or a program JSON file, as a plain `import torch` would load it:
    /// [`Self::load_path`] for any path type. A refusal says which stage
    /// refused in [`Error::kind`].
    ///
    /// ```
    /// use torchspec_export::{ErrorKind, ExportedProgram};
    ///
    /// let ep = ExportedProgram::open("../../corpus/programs/mlp-dynamic.pt2")?;
    /// assert_eq!(ep.graph_module.signature.user_inputs().len(), 1);
    /// for t in ep.state_dict_tensors()? {
    ///     println!("{} {:?}", t.name(), t.shape());
    /// }
    ///
    /// let e = ExportedProgram::open("no-such-model.pt2").unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::Io);
    /// # Ok::<(), torchspec_export::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<ExportedProgram> {
        Self::load_path(path.as_ref())
    }

    /// Loads a `.pt2` archive (mapped, read in place) or a program JSON
    /// file, with `opts`.
    pub fn load(path: impl AsRef<Path>, opts: &LoadOptions) -> Result<ExportedProgram> {
        Self::load_path_in(path.as_ref(), opts.mode, &opts.registrations)
    }

    /// Loads a `.pt2` archive or a program JSON held in memory (by its
    /// first bytes: a zip starts with `PK`), with `opts`.
    pub fn load_bytes(bytes: Vec<u8>, opts: &LoadOptions) -> Result<ExportedProgram> {
        if bytes.starts_with(b"PK") {
            Self::load_pt2_in(bytes, opts.mode, &opts.registrations)
        } else {
            Self::load_json_in(&bytes, opts.mode, &opts.registrations)
        }
    }

    /// Loads a `.pt2` archive (any file named `*.pt2`, as
    /// `torch.export.load` reads it) or a program JSON file (another name:
    /// an archive when it starts with `PK`), in the default mode.
    pub fn load_path(path: impl AsRef<Path>) -> Result<ExportedProgram> {
        Self::load_path_with(path.as_ref(), Mode::Default)
    }

    /// [`Self::load_path`] in `mode`.
    pub fn load_path_with(path: impl AsRef<Path>, mode: Mode) -> Result<ExportedProgram> {
        Self::load_path_in(path.as_ref(), mode, Registrations::plain())
    }

    /// Loads a `.pt2` archive or a program JSON file in a process that has
    /// `registrations` (custom ops and pytree types the program names).
    pub fn load_path_in(
        path: impl AsRef<Path>,
        mode: Mode,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        let path = path.as_ref();
        // A `.pt2` is read as `torch.export.load` reads it, whatever its
        // first bytes (not a zip: `zipfile`'s `BadZipFile`); any other file
        // is an archive when it starts as a zip does, else the program JSON.
        let mut head = [0u8; 2];
        let is_zip = path.extension().is_some_and(|e| e == "pt2")
            || std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
                .map_err(|e| Error::io(path, e))?
                == 2
                && head == *b"PK";
        if is_zip {
            let bytes = archive::ArchiveBytes::map(path)?;
            Self::load_archive_in(Arc::new(bytes), mode, registrations)
        } else {
            let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            Self::load_json_in(&bytes, mode, registrations)
        }
        .map_err(|e| e.in_file(path))
    }

    /// Loads a `.pt2` archive held in memory.
    pub fn load_pt2(bytes: Vec<u8>, mode: Mode) -> Result<ExportedProgram> {
        Self::load_pt2_in(bytes, mode, Registrations::plain())
    }

    /// [`Self::load_pt2`] with `registrations`.
    pub fn load_pt2_in(
        bytes: Vec<u8>,
        mode: Mode,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        let bytes = Arc::new(archive::ArchiveBytes::Owned(bytes));
        Self::load_archive_in(bytes, mode, registrations)
    }

    /// A `.pt2` over bytes in memory or mapped from its file: only the
    /// program JSON and the configs are read (each entry bounded by
    /// [`archive::MAX_ENTRY_BYTES`]); the weights stay where they are.
    pub fn load_archive_in(
        bytes: Arc<archive::ArchiveBytes>,
        mode: Mode,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        // `torch.export.load` catches a `RuntimeError` of `load_pt2` (the
        // stream reader's refusals: not a zip, a missing record, a corrupt
        // entry), logs it, and reads the file as the pre-2.8 layout, whose
        // refusal is what it raises.
        let fallback = |e: Error| -> Result<ExportedProgram> {
            let e = e.of_kind(ErrorKind::NotAnArchive);
            if e.exception.as_deref() == Some("RuntimeError") {
                Self::load_legacy(&bytes, mode, registrations).map_err(|l| l.with_logged(e))
            } else {
                Err(e)
            }
        };
        let mut archive = match archive::Pt2Archive::over(&bytes) {
            Ok(a) => a,
            Err(e) => return fallback(e),
        };
        // `load_pt2`'s reads before the program, in its order.
        let version = match archive.read_entry("archive_version") {
            Ok(v) => v,
            Err(e) => return fallback(e),
        };
        check_archive_version(&version)?;
        if let Err(e) = archive.records() {
            return fallback(e);
        }
        // No program at all: `load_pt2` returns nothing and
        // `torch.export.load` reads the file as the pre-2.8 layout.
        if archive.model_names().is_empty() {
            return Self::load_legacy(&bytes, mode, registrations);
        }
        if archive.contains("models/model.json") {
            if let Err(e) = archive.read_entry("data/sample_inputs/model.pt") {
                return fallback(e);
            }
        }
        let program = match archive.read_program_in_place() {
            Ok(p) => p,
            Err(e) => return fallback(e),
        };
        let (loaded, graph_module) = deserialize(&program, mode, registrations)
            .map_err(|e| e.in_entry("models/model.json"))?;
        let state_dict = match archive.read_weights_config("model") {
            Ok(Some(config)) => Some(read_weights_config(&config).map_err(|e| {
                e.in_entry("data/weights/model_weights_config.json")
                    .of_kind(ErrorKind::NotAnArchive)
            })?),
            Ok(None) => None,
            Err(e) => return fallback(e),
        };
        let constants = match archive.read_constants_config("model") {
            Ok(Some(config)) => Some(
                read_weights_config(&config)
                    .map_err(|e| {
                        e.in_entry("data/constants/model_constants_config.json")
                            .of_kind(ErrorKind::NotAnArchive)
                    })?
                    .into_iter()
                    .map(|e| e.name)
                    .collect::<std::collections::HashSet<_>>(),
            ),
            Ok(None) => None,
            Err(e) => return fallback(e),
        };
        // `_load_state_dict` and `_load_constants` read every storage the
        // configs name before the program is built: what PyTorch refuses
        // there is refused here (what the reference only cannot read, a
        // pickled weight, is left to `tensors()`).
        if let Err(e) = weights::Tensors::read_from(&mut archive, "model") {
            if e.exception.is_some() {
                return fallback(e);
            }
        }
        drop(archive);
        let mut ep = Self::new(
            loaded,
            graph_module,
            state_dict,
            constants.as_ref(),
            registrations,
        )
        .map_err(|e| e.in_entry("models/model.json"))?;
        ep.archive = Some(bytes);
        Ok(ep)
    }

    /// A pre-2.8 archive (`serialized_exported_program.json` at its root,
    /// the state dict pickled beside it): `ep.state_dict` is the saved
    /// `ep.state_dict`, whose names, shapes and dtypes are the program's own
    /// parameter and persistent-buffer placeholders.
    fn load_legacy(
        bytes: &[u8],
        mode: Mode,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        let program =
            archive::read_legacy_program(bytes).map_err(|e| e.of_kind(ErrorKind::NotAnArchive))?;
        let mut ep = Self::load_json_in(&program, mode, registrations)
            .map_err(|e| e.in_entry(archive::LEGACY_PROGRAM))?;
        // (Verified without the state dict built below from the signature.)
        let gm = &ep.serialized.graph_module;
        let meta = |name: &str| {
            gm.graph
                .tensor_values
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, m)| m)
        };
        let mut state_dict = Vec::new();
        for spec in &gm.signature.input_specs {
            let (arg, target, parameter) = match spec {
                schema::InputSpec::Parameter(p) => (&p.arg.name, &p.parameter_name, true),
                schema::InputSpec::Buffer(b) => match &b.persistent {
                    schema::Loose::Typed(true) => (&b.arg.name, &b.buffer_name, false),
                    schema::Loose::Typed(false) => continue,
                    schema::Loose::Raw(v) => {
                        return Err(Error::new(format!(
                        "unsupported by the reference loader: the state dict of a pre-2.8 archive \
                             whose buffer `{}` has `persistent` {} (a JSON {}): it is pickled",
                        b.buffer_name,
                        torchspec_pyval::pyjson::dump::dumps(v).unwrap_or_default(),
                        v.type_name()
                    ))
                        .of_kind(ErrorKind::Unsupported))
                    }
                },
                _ => continue,
            };
            let info = match meta(arg) {
                Some(m) => tensor_info_of(m, parameter),
                None => Err(format!("no tensor value for the placeholder `{arg}`")),
            };
            state_dict.push(StateDictEntry {
                name: target.clone(),
                meta: info,
            });
        }
        ep.state_dict = Some(state_dict);
        Ok(ep)
    }

    /// Loads the program JSON (`serialize(ep).exported_program`).
    pub fn load_json(bytes: &[u8], mode: Mode) -> Result<ExportedProgram> {
        Self::load_json_in(bytes, mode, Registrations::plain())
    }

    /// [`Self::load_json`] with `registrations`. The verifier runs without
    /// a state dict or constants (a program JSON has neither).
    pub fn load_json_in(
        bytes: &[u8],
        mode: Mode,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        let (loaded, graph_module) = deserialize(bytes, mode, registrations)?;
        Self::new(loaded, graph_module, None, None, registrations)
    }

    /// `ExportedProgram.__init__` on a deserialized program: the graph
    /// module built from the loaded one ([`load::lost_attribute`]),
    /// `_common_getitem_elimination_pass`, then, as its last step,
    /// `self.validate()` (the verifiers the program names, with
    /// `ep.state_dict` and the constants' names where known).
    fn new(
        loaded: schema::Loaded,
        mut graph_module: LoadedGraphModule,
        state_dict: Option<Vec<StateDictEntry>>,
        constants: Option<&std::collections::HashSet<String>>,
        registrations: &Arc<Registrations>,
    ) -> Result<ExportedProgram> {
        if let Some(failure) = load::lost_attribute(&graph_module) {
            return Err(crate::failure::into_error(failure));
        }
        passes::common_getitem_elimination(&mut graph_module);
        let ep = ExportedProgram {
            guards_code: loaded.program.guards_code.clone(),
            serialized: Arc::new(loaded.program),
            graph_module,
            state_dict,
            diagnostics: loaded.diagnostics,
            archive: None,
            registrations: registrations.clone(),
        };
        ep.validate(constants)?;
        Ok(ep)
    }

    /// `self.validate()`: the verifiers the program names (`verify`).
    fn validate(&self, constants: Option<&std::collections::HashSet<String>>) -> Result<()> {
        let dialects = verify::load_verifiers(
            &self.serialized.verifiers,
            self.serialized.raw_field("verifiers"),
        )
        .map_err(crate::failure::into_error)?;
        let cx = verify::Context {
            registrations: &self.registrations,
            state_dict: self.state_dict.as_deref(),
            constants,
        };
        verify::check(&self.graph_module, &dialects, &cx).map_err(crate::failure::into_error)
    }

    /// The program JSON `torch.export.save` writes for this program as it
    /// is now, after any transform: `serialize(ep).exported_program` through
    /// `_to_json_bytes`. (The file as read, whatever passes ran since, is
    /// `schema::dump_program(&ep.serialized)`.)
    pub fn to_json(&self) -> Result<String> {
        serialize::program_json(self)
    }

    /// The `.pt2` `torch.export.save` writes for this program, with `root`
    /// as the archive folder (`serialize::pt2::archive_root` of the path).
    /// Needs the archive the program was loaded from, for its weights.
    pub fn serialize_pt2(&self, root: &str) -> Result<Vec<u8>> {
        let Some(input) = &self.archive else {
            return Err(Error::new(
                "writing a .pt2 needs the weights of the program's pt2 archive, and this \
                 program was loaded from its JSON alone or from a pre-2.8 archive, whose \
                 weights are pickled (write a .json instead)",
            ));
        };
        let json = self.to_json()?;
        serialize::pt2::write_pt2(input, root, json.as_bytes())
    }

    /// `ep.state_dict` and `ep.constants` as views over the archive's
    /// bytes ([`weights`]): nothing is copied. A program loaded from its
    /// JSON has no tensors, and a pre-2.8 archive's are pickled.
    pub fn tensors(&self) -> Result<weights::Tensors<'_>> {
        match &self.archive {
            Some(bytes) => weights::Tensors::read(bytes, "model"),
            None => Err(Error::new(
                "no tensors to read: the program was loaded from its JSON alone or from a \
                 pre-2.8 archive, whose state dict and constants are pickled",
            )),
        }
    }

    /// `ep.state_dict`'s tensors, in the weights config's order.
    pub fn state_dict_tensors(&self) -> Result<Vec<weights::TensorView<'_>>> {
        Ok(self.tensors()?.state_dict)
    }

    /// `ep.constants`' tensors, in the constants config's order.
    pub fn constants_tensors(&self) -> Result<Vec<weights::TensorView<'_>>> {
        Ok(self.tensors()?.constants)
    }

    /// The program report (`shared/program-report.md`), as `json.loads`
    /// would return the oracle's line: ints of any size, keys in order.
    pub fn report(&self) -> PyJson {
        report::program_report(self)
    }
}

/// `load_pt2`'s check of the `archive_version` record against
/// `ARCHIVE_VERSION_VALUE`.
fn check_archive_version(version: &[u8]) -> Result<()> {
    let version = schema::decode_utf8(version).map_err(|e| e.of_kind(ErrorKind::NotAnArchive))?;
    const ARCHIVE_VERSION: &str = "0";
    if version != ARCHIVE_VERSION {
        return Err(Error::python(
            "ValueError",
            format!(
                "Saved archive version {version} does not match our current archive \
                 version {ARCHIVE_VERSION}."
            ),
        )
        .of_kind(ErrorKind::SchemaVersion));
    }
    Ok(())
}

/// `ExportedProgramDeserializer.deserialize` up to the constructor: the
/// program JSON read into wire types, then the graph module rebuilt.
fn deserialize(
    bytes: &[u8],
    mode: Mode,
    registrations: &Registrations,
) -> Result<(schema::Loaded, LoadedGraphModule)> {
    let loaded = schema::load_program(bytes, mode)?;
    let graph_module = load::load_graph_module(&loaded.program, registrations).map_err(|f| {
        crate::failure::into_error(crate::failure::naming_untyped(f, &loaded.loose))
    })?;
    Ok((loaded, graph_module))
}

fn read_weights_config(bytes: &[u8]) -> Result<Vec<StateDictEntry>> {
    let text = schema::decode_utf8(bytes)?;
    let doc = torchspec_pyval::pyjson::text::Doc::new(text)?;
    let mut cx = schema::LoadCx::new(Mode::Default);
    let mut path = schema::JsonPath::new();
    let config = schema::PayloadConfig::from_pyjson(doc.root(), &mut path, &mut cx)
        .map_err(schema::LoadError::into_error)?;
    Ok(config
        .config
        .into_iter()
        .map(|(name, meta)| StateDictEntry {
            name,
            meta: tensor_info(&meta),
        })
        .collect())
}

/// A state-dict entry's shape, dtype and `Parameter`-ness from its
/// `PayloadMeta`. A pickled entry (`use_pickle`: a tensor subclass, which
/// `torch.export.load` reads back with `torch.load`) is described by the
/// `tensor_meta` and `is_param` that `_save_pickled_tensors` recorded from
/// the same tensor; its pickle is not read.
fn tensor_info(meta: &schema::PayloadMeta) -> std::result::Result<TensorInfo, String> {
    match &meta.tensor_meta {
        Some(t) => tensor_info_of(t, meta.is_param),
        None if meta.use_pickle => Err("a pickled weight (use_pickle) without tensor_meta".into()),
        None => Err("tensor_meta cannot be None for non-pickled weight".into()),
    }
}

fn tensor_info_of(
    t: &schema::TensorMeta,
    parameter: bool,
) -> std::result::Result<TensorInfo, String> {
    let Some(sizes) = t.sizes.typed() else {
        return Err("weight sizes that are not a list".into());
    };
    let mut shape = Vec::with_capacity(sizes.len());
    for s in sizes {
        match s {
            schema::SymInt::AsInt(PyInt::Small(i)) => shape.push(*i),
            _ => return Err("a symbolic or huge weight size".into()),
        }
    }
    let key = t
        .dtype
        .enum_key(|d| d.value())
        .map_err(|_| "an unknown dtype".to_string())?;
    let dtype =
        weights::Dtype::from_scalar_type(key).ok_or_else(|| format!("unknown dtype {key}"))?;
    Ok(TensorInfo {
        shape,
        dtype,
        parameter,
    })
}
