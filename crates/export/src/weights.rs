//! Mirrors torch/export/pt2_archive/_package.py's `_load_state_dict`,
//! `_load_constants` and `_build_file_map`: `ep.state_dict` and
//! `ep.constants` as typed views over the archive's bytes.
//!
//! `torch.export.save` writes each group of tensors that share a storage
//! (same `untyped_storage().data_ptr()` and dtype, `group_weights`) once,
//! as the raw little-endian bytes of the storage, to
//! `data/weights/weight_N` (constants: `data/constants/tensor_N`), stored
//! uncompressed; `data/weights/model_weights_config.json` maps each name
//! to its file and `TensorMeta` (dtype, sizes, strides, storage offset).
//! `torch.export.load` reads each file once as a flat tensor of the dtype
//! of the first entry naming it, and each entry is
//! `torch.as_strided(flat, sizes, strides, storage_offset)` over it, so
//! tensors that shared a storage still do. A [`TensorView`] is that
//! `as_strided`, with its checks, over a slice of the (mapped) archive:
//! nothing is copied.
//!
//! A pickled entry (`use_pickle`: a tensor subclass, saved with
//! `torch.save`), a custom or opaque object constant, the pre-2.8 pickled
//! state dict and a dtype the schema does not have (the quantized ones)
//! are refused with an error: reading them needs the pickle machinery.
//!
//! ```
//! # fn main() -> torchspec_export::Result<()> {
//! # let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/programs/mlp-static.pt2");
//! let ep = torchspec_export::ExportedProgram::load_path(&path)?;
//! for t in ep.state_dict_tensors()? {
//!     // `fc1.weight torch.float32 [8, 4]`
//!     println!("{} {} {:?}", t.name(), t.dtype().name(), t.shape());
//!     if let Some(bytes) = t.contiguous_bytes() {
//!         // Row-major element bytes, borrowed from the archive.
//!         assert_eq!(bytes.len(), t.nbytes()?);
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use torchspec_pyval::pyjson::PyInt;
use torchspec_pyval::{Error, Result};

#[cfg(test)]
use crate::archive::EntryData;
use crate::archive::{ArchiveBytes, Pt2Archive};
use crate::schema;

/// `data/weights/`, where `torch.export.save` puts the state dict.
pub const WEIGHTS_DIR: &str = "data/weights/";
/// `data/constants/`, where it puts the constants.
pub const CONSTANTS_DIR: &str = "data/constants/";
/// The file-name prefix of a tensor constant (`tensor_0`).
pub const TENSOR_CONSTANT_FILENAME_PREFIX: &str = "tensor_";
/// The file-name prefix of a torchbind object constant.
pub const CUSTOM_OBJ_FILENAME_PREFIX: &str = "custom_obj_";
/// The file-name prefix of an opaque object constant.
pub const OPAQUE_OBJ_FILENAME_PREFIX: &str = "opaque_obj_";

/// The most bytes a tensor's row-major copy may have beyond the storage it
/// views: a tensor with zero strides (`expand`) repeats its storage, and
/// its `contiguous()` could otherwise be any size the config claims.
pub const MAX_EXPANDED_BYTES: usize = 1 << 30;

/// A dtype `torch.export.save` writes (`_TORCH_TO_SERIALIZE_DTYPE` of
/// torch/_export/serde/serialize.py). The quantized dtypes have no
/// `ScalarType` in the schema: such a tensor cannot be saved raw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Dtype {
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    Complex32,
    Complex64,
    Complex128,
    Float8E4M3fn,
    Float8E5M2,
    Float8E4M3fnuz,
    Float8E5M2fnuz,
    Float8E8M0fnu,
}

impl Dtype {
    /// Every dtype, in `ScalarType` order.
    pub const ALL: [Dtype; 21] = [
        Dtype::UInt8,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Float16,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Complex32,
        Dtype::Complex64,
        Dtype::Complex128,
        Dtype::Bool,
        Dtype::BFloat16,
        Dtype::UInt16,
        Dtype::Float8E4M3fn,
        Dtype::Float8E5M2,
        Dtype::Float8E4M3fnuz,
        Dtype::Float8E5M2fnuz,
        Dtype::Float8E8M0fnu,
        Dtype::UInt32,
        Dtype::UInt64,
    ];

    /// The dtype of schema `ScalarType` value `v` (`deserialize_scalar_type`).
    pub fn from_scalar_type(v: i64) -> Option<Dtype> {
        Some(match v {
            1 => Dtype::UInt8,
            2 => Dtype::Int8,
            3 => Dtype::Int16,
            4 => Dtype::Int32,
            5 => Dtype::Int64,
            6 => Dtype::Float16,
            7 => Dtype::Float32,
            8 => Dtype::Float64,
            9 => Dtype::Complex32,
            10 => Dtype::Complex64,
            11 => Dtype::Complex128,
            12 => Dtype::Bool,
            13 => Dtype::BFloat16,
            28 => Dtype::UInt16,
            29 => Dtype::Float8E4M3fn,
            30 => Dtype::Float8E5M2,
            31 => Dtype::Float8E4M3fnuz,
            32 => Dtype::Float8E5M2fnuz,
            33 => Dtype::Float8E8M0fnu,
            34 => Dtype::UInt32,
            35 => Dtype::UInt64,
            _ => return None,
        })
    }

    /// `str(dtype)`: `torch.float32`.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "torch.bool",
            Dtype::UInt8 => "torch.uint8",
            Dtype::Int8 => "torch.int8",
            Dtype::Int16 => "torch.int16",
            Dtype::Int32 => "torch.int32",
            Dtype::Int64 => "torch.int64",
            Dtype::UInt16 => "torch.uint16",
            Dtype::UInt32 => "torch.uint32",
            Dtype::UInt64 => "torch.uint64",
            Dtype::Float16 => "torch.float16",
            Dtype::BFloat16 => "torch.bfloat16",
            Dtype::Float32 => "torch.float32",
            Dtype::Float64 => "torch.float64",
            Dtype::Complex32 => "torch.complex32",
            Dtype::Complex64 => "torch.complex64",
            Dtype::Complex128 => "torch.complex128",
            Dtype::Float8E4M3fn => "torch.float8_e4m3fn",
            Dtype::Float8E5M2 => "torch.float8_e5m2",
            Dtype::Float8E4M3fnuz => "torch.float8_e4m3fnuz",
            Dtype::Float8E5M2fnuz => "torch.float8_e5m2fnuz",
            Dtype::Float8E8M0fnu => "torch.float8_e8m0fnu",
        }
    }

    /// `dtype.itemsize`: bytes per element.
    pub fn itemsize(self) -> usize {
        match self {
            Dtype::Bool
            | Dtype::UInt8
            | Dtype::Int8
            | Dtype::Float8E4M3fn
            | Dtype::Float8E5M2
            | Dtype::Float8E4M3fnuz
            | Dtype::Float8E5M2fnuz
            | Dtype::Float8E8M0fnu => 1,
            Dtype::Int16 | Dtype::UInt16 | Dtype::Float16 | Dtype::BFloat16 => 2,
            Dtype::Int32 | Dtype::UInt32 | Dtype::Float32 | Dtype::Complex32 => 4,
            Dtype::Int64 | Dtype::UInt64 | Dtype::Float64 | Dtype::Complex64 => 8,
            Dtype::Complex128 => 16,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which dict of the program a tensor is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    /// `ep.state_dict` (parameters and persistent buffers).
    StateDict,
    /// `ep.constants` (tensor constants, non-persistent buffers).
    Constants,
}

impl Section {
    /// `state_dict` or `constants`.
    pub fn name(self) -> &'static str {
        match self {
            Section::StateDict => "state_dict",
            Section::Constants => "constants",
        }
    }

    fn dir(self) -> &'static str {
        match self {
            Section::StateDict => WEIGHTS_DIR,
            Section::Constants => CONSTANTS_DIR,
        }
    }

    /// `data/weights/model_weights_config.json` for `model`.
    fn config(self, model: &str) -> String {
        match self {
            Section::StateDict => format!("data/weights/{model}_weights_config.json"),
            Section::Constants => format!("data/constants/{model}_constants_config.json"),
        }
    }

    /// The pre-2.8 pickled file `_load_state_dict` returns as bytes.
    fn legacy(self, model: &str) -> String {
        format!("{}{model}.pt", self.dir())
    }
}

/// The bytes a storage file holds.
#[derive(Clone, Debug)]
pub enum Storage<'a> {
    /// The file's bytes: borrowed from the archive when the entry is
    /// stored (always, as `torch.export.save` writes), decompressed when it
    /// is not.
    Bytes(Cow<'a, [u8]>),
    /// A file of zero bytes for a tensor with elements (a fake tensor was
    /// saved): `_build_file_map` makes it `torch.zeros(size)`; this many
    /// zero bytes, never allocated.
    Zeros(usize),
}

impl Storage<'_> {
    /// Its size in bytes (`untyped_storage().nbytes()`).
    pub fn len(&self) -> usize {
        match self {
            Storage::Bytes(b) => b.len(),
            Storage::Zeros(n) => *n,
        }
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Storage::Bytes(b) => Some(b),
            Storage::Zeros(_) => None,
        }
    }
}

/// One tensor of `ep.state_dict` or `ep.constants`: dtype, shape, strides
/// and storage offset over the bytes of its storage file, checked as
/// `torch.as_strided` checks them (every element it views is inside the
/// storage).
#[derive(Clone, Debug)]
pub struct TensorView<'a> {
    name: String,
    section: Section,
    dtype: Dtype,
    shape: Vec<usize>,
    stride: Vec<usize>,
    storage_offset: usize,
    storage_name: String,
    storage: std::sync::Arc<Storage<'a>>,
    is_param: bool,
    requires_grad: bool,
}

impl<'a> TensorView<'a> {
    /// Its key in `ep.state_dict` / `ep.constants`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The dict it is in.
    pub fn section(&self) -> Section {
        self.section
    }
    /// `t.dtype`: the dtype of the first entry naming its storage file
    /// (`_build_file_map` reads each file once, as that entry's dtype).
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }
    /// `t.shape`.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// `t.stride()`, in elements.
    pub fn stride(&self) -> &[usize] {
        &self.stride
    }
    /// `t.storage_offset()`, in elements.
    pub fn storage_offset(&self) -> usize {
        self.storage_offset
    }
    /// The storage file under `data/weights/` or `data/constants/`
    /// (`weight_0`): tensors naming the same file share a storage.
    pub fn storage_name(&self) -> &str {
        &self.storage_name
    }
    /// The storage's bytes (`t.untyped_storage()`).
    pub fn storage(&self) -> &Storage<'a> {
        &self.storage
    }
    /// `isinstance(t, torch.nn.Parameter)` (the config's `is_param`).
    pub fn is_param(&self) -> bool {
        self.is_param
    }
    /// `t.requires_grad` as saved.
    pub fn requires_grad(&self) -> bool {
        self.requires_grad
    }

    /// `t.numel()` (cannot overflow: checked when the view was made).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The bytes of `t.contiguous()`: `numel * itemsize`, or an error when
    /// that is past [`MAX_EXPANDED_BYTES`] beyond the storage's size.
    pub fn nbytes(&self) -> Result<usize> {
        let n = self.numel() * self.dtype.itemsize();
        if n > self.storage_bytes_len() && n > MAX_EXPANDED_BYTES {
            return Err(Error::new(format!(
                "`{}` ({:?}, strides {:?}) is {n} bytes contiguous, from a storage of {} \
                 bytes: over the {MAX_EXPANDED_BYTES}-byte limit of an expanded tensor",
                self.name,
                self.shape,
                self.stride,
                self.storage.len()
            )));
        }
        Ok(n)
    }

    /// The storage's bytes; `None` for a zero-filled storage.
    pub(crate) fn storage_bytes(&self) -> Option<&[u8]> {
        self.storage.bytes()
    }

    /// The storage bytes that count against [`MAX_EXPANDED_BYTES`]: none
    /// for a zero-filled storage, which the archive does not back.
    fn storage_bytes_len(&self) -> usize {
        self.storage.bytes().map_or(0, <[u8]>::len)
    }

    /// `t.is_contiguous()`: strides are row-major (dims of size 1 are free).
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected = 1usize;
        for (&size, &stride) in self.shape.iter().zip(&self.stride).rev() {
            if size != 1 {
                if stride != expected {
                    return false;
                }
                expected *= size;
            }
        }
        true
    }

    /// The bytes of `t.contiguous()` borrowed from the archive, when the
    /// tensor is contiguous and its storage is the archive's bytes.
    pub fn contiguous_bytes(&self) -> Option<&[u8]> {
        if !self.is_contiguous() {
            return None;
        }
        let isz = self.dtype.itemsize();
        let start = self.storage_offset * isz;
        let len = self.numel() * isz;
        if len == 0 {
            return Some(&[]);
        }
        self.storage.bytes()?.get(start..start + len)
    }

    /// Calls `sink` with the bytes of `t.contiguous()` in row-major order,
    /// in chunks (each the longest run of elements that is contiguous in
    /// the storage), without copying the tensor.
    pub fn for_each_chunk(&self, mut sink: impl FnMut(&[u8])) -> Result<()> {
        let total = self.nbytes()?;
        if total == 0 {
            return Ok(());
        }
        if let Some(b) = self.contiguous_bytes() {
            sink(b);
            return Ok(());
        }
        let isz = self.dtype.itemsize();
        // The trailing dims that are row-major among themselves form one run.
        let mut inner = 1usize;
        let mut split = self.shape.len();
        while split > 0 {
            let d = split - 1;
            if self.shape[d] != 1 && self.stride[d] != inner {
                break;
            }
            inner *= self.shape[d];
            split = d;
        }
        let outer = &self.shape[..split];
        let mut index = vec![0usize; outer.len()];
        let run = inner * isz;
        static ZEROS: [u8; 4096] = [0; 4096];
        loop {
            let offset = self.storage_offset
                + index
                    .iter()
                    .zip(&self.stride)
                    .map(|(i, s)| i * s)
                    .sum::<usize>();
            match self.storage.bytes() {
                Some(bytes) => {
                    let start = offset * isz;
                    let chunk = bytes.get(start..start + run).ok_or_else(|| {
                        Error::new(format!("`{}`: an element past its storage", self.name))
                    })?;
                    sink(chunk);
                }
                None => {
                    let mut left = run;
                    while left > 0 {
                        let n = left.min(ZEROS.len());
                        sink(&ZEROS[..n]);
                        left -= n;
                    }
                }
            }
            // The next index of the outer dims, last fastest.
            let mut d = outer.len();
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                index[d] += 1;
                if index[d] < outer[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }

    /// The bytes of `t.contiguous()`: borrowed when the tensor is
    /// contiguous in the archive, else copied (at most
    /// [`MAX_EXPANDED_BYTES`] beyond the storage's size).
    pub fn to_contiguous(&self) -> Result<Cow<'_, [u8]>> {
        if let Some(b) = self.contiguous_bytes() {
            return Ok(Cow::Borrowed(b));
        }
        let mut out = Vec::with_capacity(self.nbytes()?);
        self.for_each_chunk(|c| out.extend_from_slice(c))?;
        Ok(Cow::Owned(out))
    }
}

/// A [`TensorView`] without its borrow of the archive: the view with its
/// storage's place in the archive's bytes, so that it can be made again
/// over them ([`Detached::attach`]) by an owner of both.
#[derive(Clone, Debug)]
pub(crate) struct Detached {
    view: TensorView<'static>,
    /// Where its storage is in the archive; `None` when the view owns it
    /// (decompressed, or zero-filled).
    in_archive: Option<std::ops::Range<usize>>,
}

impl Detached {
    /// `views` (over `base`) detached, storages that were shared still shared.
    pub(crate) fn all(views: &[TensorView<'_>], base: &[u8]) -> Vec<Detached> {
        use std::sync::Arc;
        let mut owned: Vec<(*const Storage<'_>, Arc<Storage<'static>>)> = Vec::new();
        let base_range = base.as_ptr() as usize..base.as_ptr() as usize + base.len();
        views
            .iter()
            .map(|v| {
                let (storage, in_archive) = match &*v.storage {
                    Storage::Bytes(Cow::Borrowed(b))
                        if base_range.contains(&(b.as_ptr() as usize))
                            && b.as_ptr() as usize + b.len() <= base_range.end =>
                    {
                        let start = b.as_ptr() as usize - base_range.start;
                        (Arc::new(Storage::Zeros(0)), Some(start..start + b.len()))
                    }
                    other => {
                        let key = Arc::as_ptr(&v.storage);
                        let shared = match owned.iter().find(|(k, _)| *k == key) {
                            Some((_, s)) => s.clone(),
                            None => {
                                let s = Arc::new(match other {
                                    Storage::Bytes(b) => Storage::Bytes(Cow::Owned(b.to_vec())),
                                    Storage::Zeros(n) => Storage::Zeros(*n),
                                });
                                owned.push((key, s.clone()));
                                s
                            }
                        };
                        (shared, None)
                    }
                };
                Detached {
                    view: TensorView {
                        name: v.name.clone(),
                        section: v.section,
                        dtype: v.dtype,
                        shape: v.shape.clone(),
                        stride: v.stride.clone(),
                        storage_offset: v.storage_offset,
                        storage_name: v.storage_name.clone(),
                        storage,
                        is_param: v.is_param,
                        requires_grad: v.requires_grad,
                    },
                    in_archive,
                }
            })
            .collect()
    }

    /// Its key in `ep.state_dict` / `ep.constants`.
    pub(crate) fn name(&self) -> &str {
        &self.view.name
    }

    /// The view again, over the archive's bytes `base` it was detached from.
    pub(crate) fn attach<'a>(&'a self, base: &'a [u8]) -> TensorView<'a> {
        let mut view: TensorView<'a> = self.view.clone();
        if let Some(r) = &self.in_archive {
            let bytes = base.get(r.clone()).unwrap_or_default();
            view.storage = std::sync::Arc::new(Storage::Bytes(Cow::Borrowed(bytes)));
        }
        view
    }
}

/// `ep.state_dict` and `ep.constants` of a `.pt2` (`model`), in the
/// configs' order.
#[derive(Clone, Debug)]
pub struct Tensors<'a> {
    /// `ep.state_dict`.
    pub state_dict: Vec<TensorView<'a>>,
    /// `ep.constants` (tensors only: an object constant is refused).
    pub constants: Vec<TensorView<'a>>,
}

impl<'a> Tensors<'a> {
    /// Reads both dicts of program `model` from the archive `bytes`.
    pub fn read(bytes: &'a ArchiveBytes, model: &str) -> Result<Tensors<'a>> {
        let mut archive = Pt2Archive::over(bytes)?;
        Self::read_from(&mut archive, model)
    }

    /// Reads both dicts of program `model` from an open archive.
    pub fn read_from(archive: &mut Pt2Archive<&'a [u8]>, model: &str) -> Result<Tensors<'a>> {
        let bytes: &'a [u8] = archive.bytes_ref();
        Ok(Tensors {
            state_dict: read_section(archive, bytes, model, Section::StateDict)?,
            constants: read_section(archive, bytes, model, Section::Constants)?,
        })
    }

    /// State dict then constants.
    pub fn iter(&self) -> impl Iterator<Item = &TensorView<'a>> {
        self.state_dict.iter().chain(&self.constants)
    }
}

/// The tensors of one dict (`_load_state_dict` / `_load_constants`).
pub fn read_section<'a>(
    archive: &mut Pt2Archive<&'a [u8]>,
    bytes: &'a [u8],
    model: &str,
    section: Section,
) -> Result<Vec<TensorView<'a>>> {
    let legacy = section.legacy(model);
    if archive.contains(&legacy) {
        return Err(Error::new(format!(
            "`{legacy}` is a pickled {} (the legacy weights format): reading it needs \
             torch.load",
            section.name()
        )));
    }
    let config_name = section.config(model);
    let Some(config) = archive.read_entry_if_present(&config_name)? else {
        return Err(Error::python(
            "AssertionError",
            format!("{config_name} not found in PT2 archive"),
        ));
    };
    let config = read_config(&config).map_err(|e| e.in_entry(&config_name))?;
    let files = build_file_map(archive, bytes, &config, section)?;
    let mut out = Vec::with_capacity(config.config.len());
    for (name, meta) in &config.config {
        if section == Section::Constants {
            let path = &meta.path_name;
            if path.starts_with(CUSTOM_OBJ_FILENAME_PREFIX)
                || path.starts_with(OPAQUE_OBJ_FILENAME_PREFIX)
            {
                return Err(Error::new(format!(
                    "the constant `{name}` is a pickled object (`{path}`), not a tensor"
                )));
            }
            if !path.starts_with(TENSOR_CONSTANT_FILENAME_PREFIX) {
                return Err(Error::python(
                    "RuntimeError",
                    format!("Unsupported constant type: {path}"),
                ));
            }
        }
        if meta.use_pickle {
            return Err(Error::new(format!(
                "the {} entry `{name}` is pickled (use_pickle: a tensor subclass saved with \
                 torch.save): reading it needs torch.load",
                section.name()
            )));
        }
        let Some(tm) = &meta.tensor_meta else {
            let what = match section {
                Section::StateDict => "weight",
                Section::Constants => "constant",
            };
            return Err(Error::python(
                "AssertionError",
                format!("tensor_meta cannot be None for non-pickled {what}"),
            ));
        };
        let Some((dtype, storage)) = files.get(&meta.path_name) else {
            return Err(Error::new(format!("no storage file `{}`", meta.path_name)));
        };
        let view = as_strided(name, section, *dtype, storage, tm)
            .map_err(|e| e.in_entry(&format!("{}{}", section.dir(), meta.path_name)))?;
        out.push(TensorView {
            is_param: section == Section::StateDict && meta.is_param,
            // (A loaded program's is a bool or None.)
            requires_grad: tm.requires_grad.typed().copied().unwrap_or(false),
            storage_name: meta.path_name.clone(),
            ..view
        });
    }
    Ok(out)
}

/// What `torch.export.load` raises where reading the tensors of `archive`
/// raised `e`, and the exception it logged before: `load_pt2`'s
/// `RuntimeError` is caught and logged (`e`), and the archive is read as
/// the pre-2.8 layout, whose refusal is what `torch.export.load` raises;
/// any other exception comes through, nothing logged. (An archive that is
/// both layouts would load the pre-2.8 program instead: `e` is returned,
/// the reference does not model it.)
pub fn torch_export_load_error(archive: &[u8], e: Error) -> (Error, Option<Error>) {
    if e.exception.as_deref() != Some("RuntimeError") {
        return (e, None);
    }
    match crate::archive::read_legacy_program(archive) {
        Err(legacy) => (legacy, Some(e)),
        Ok(_) => (e, None),
    }
}

fn read_config(bytes: &[u8]) -> Result<schema::PayloadConfig> {
    let text = schema::decode_utf8(bytes)?;
    let doc = torchspec_pyval::pyjson::text::Doc::new(text)?;
    let mut cx = schema::LoadCx::new(schema::Mode::Default);
    let mut path = schema::JsonPath::new();
    schema::PayloadConfig::from_pyjson(doc.root(), &mut path, &mut cx)
        .map_err(schema::LoadError::into_error)
}

type FileMap<'a> = std::collections::HashMap<String, (Dtype, std::sync::Arc<Storage<'a>>)>;

/// `_build_file_map`: each storage file once, as the flat storage of the
/// dtype of the first entry naming it.
fn build_file_map<'a>(
    archive: &mut Pt2Archive<&'a [u8]>,
    bytes: &'a [u8],
    config: &schema::PayloadConfig,
    section: Section,
) -> Result<FileMap<'a>> {
    let mut files: FileMap<'a> = FileMap::new();
    for (_, meta) in &config.config {
        if meta.use_pickle || files.contains_key(&meta.path_name) {
            continue;
        }
        let Some(tm) = &meta.tensor_meta else {
            return Err(Error::python(
                "AssertionError",
                "payload_meta.tensor_meta cannot be None",
            ));
        };
        let dtype = dtype_of(tm)?;
        let record = format!("{}{}", section.dir(), meta.path_name);
        // `get_record_size(record_name)`.
        let Some(data) = archive.entry_data(&record)? else {
            return Err(Error::python(
                "RuntimeError",
                crate::archive::miniz::failed(
                    "locating file ",
                    &record,
                    crate::archive::miniz::FILE_NOT_FOUND,
                ),
            ));
        };
        let storage = if data.size == 0 {
            // `torch.zeros(deserialize_size(tensor_meta.sizes))`.
            let sizes = ints(&tm.sizes)?;
            if sizes.iter().any(|&s| s < 0) {
                return Err(Error::python(
                    "RuntimeError",
                    "zeros: Dimension size must be non-negative.",
                ));
            }
            let numel = checked_numel(&sizes)
                .and_then(|n| n.checked_mul(dtype.itemsize()))
                .ok_or_else(|| {
                    Error::python(
                        "RuntimeError",
                        format!(
                            "Storage size calculation overflowed with sizes={}",
                            int_list(&sizes)
                        ),
                    )
                })?;
            Storage::Zeros(numel)
        } else {
            let element_size = dtype.itemsize() as u64;
            if data.size % element_size != 0 {
                return Err(Error::python(
                    "ValueError",
                    format!(
                        "Record {record}: size {} is not a multiple of element size \
                         {element_size} for dtype {dtype}",
                        data.size
                    ),
                ));
            }
            if data.stored {
                Storage::Bytes(Cow::Borrowed(data.slice(bytes)?))
            } else {
                // Decompressed, bounded as every entry read is.
                Storage::Bytes(Cow::Owned(archive.read_entry(&record)?))
            }
        };
        files.insert(
            meta.path_name.clone(),
            (dtype, std::sync::Arc::new(storage)),
        );
    }
    Ok(files)
}

fn dtype_of(tm: &schema::TensorMeta) -> Result<Dtype> {
    // A raw dtype is the value `_SERIALIZE_TO_TORCH_DTYPE` looks up.
    let v = tm
        .dtype
        .enum_key(|d| d.value())
        .map_err(|_| Error::new("an unknown dtype (a raw value torch cannot look up)"))?;
    Dtype::from_scalar_type(v).ok_or_else(|| {
        Error::new(format!(
            "dtype {v} is no dtype torch.export.save writes (a quantized tensor cannot be saved raw)"
        ))
    })
}

/// `deserialize_size` / `deserialize_stride`: plain ints only.
fn ints(v: &schema::Loose<Vec<schema::SymInt>>) -> Result<Vec<i64>> {
    let Some(v) = v.typed() else {
        return Err(Error::new("tensor sizes or strides that are not a list"));
    };
    v.iter().map(int).collect()
}

fn int(s: &schema::SymInt) -> Result<i64> {
    match s {
        schema::SymInt::AsInt(PyInt::Small(i)) => Ok(*i),
        schema::SymInt::AsInt(PyInt::Big(b)) => Err(Error::new(format!(
            "the size {b} does not fit a 64-bit integer"
        ))),
        schema::SymInt::Raw(_) => Err(Error::new("a size that is not an int")),
        schema::SymInt::AsExpr(_) => {
            let ty = "as_expr";
            Err(Error::python(
                "AssertionError",
                format!("Only as_int is supported, got {ty}"),
            ))
        }
    }
}

fn int_list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn checked_numel(sizes: &[i64]) -> Option<usize> {
    sizes.iter().try_fold(1usize, |n, &s| {
        let s = usize::try_from(s).ok()?;
        n.checked_mul(s)
    })
}

/// `computeStorageNbytes(sizes, strides, itemsize)` in unsigned 64-bit
/// arithmetic: a negative size wraps, which is its overflow; 0 for a
/// tensor with no elements.
fn compute_storage_nbytes(sizes: &[i64], strides: &[i64], itemsize: u64) -> Result<u64> {
    let overflowed = || storage_overflow(sizes, strides);
    if sizes.contains(&0) {
        return Ok(0);
    }
    let mut size: u64 = 1;
    for (&sz, &st) in sizes.iter().zip(strides) {
        let sz1 = u64::try_from(sz - 1).map_err(|_| overflowed())?;
        let strided = (st as u64).checked_mul(sz1).ok_or_else(overflowed)?;
        size = size.checked_add(strided).ok_or_else(overflowed)?;
    }
    let needed = size.checked_mul(itemsize).ok_or_else(overflowed)?;
    if needed > i64::MAX as u64 {
        return Err(overflowed());
    }
    Ok(needed)
}

/// The `RuntimeError` of a storage size that overflows.
fn storage_overflow(sizes: &[i64], strides: &[i64]) -> Error {
    Error::python(
        "RuntimeError",
        format!(
            "Storage size calculation overflowed with sizes={} and strides={}",
            int_list(sizes),
            int_list(strides)
        ),
    )
}

/// `torch.as_strided(flat, sizes, strides, storage_offset)` over a storage
/// of `storage.len()` bytes, with `setStrided`'s checks in its order
/// (aten/src/ATen/native/TensorShape.cpp, `checkInBoundsForStorage`,
/// `computeStorageNbytes`).
fn as_strided<'a>(
    name: &str,
    section: Section,
    dtype: Dtype,
    storage: &std::sync::Arc<Storage<'a>>,
    tm: &schema::TensorMeta,
) -> Result<TensorView<'a>> {
    let sizes = ints(&tm.sizes)?;
    let strides = ints(&tm.strides)?;
    let offset = int(&tm.storage_offset)?;
    if sizes.len() != strides.len() {
        return Err(Error::python(
            "RuntimeError",
            "mismatch in length of strides and shape",
        ));
    }
    if strides.iter().any(|&s| s < 0) {
        return Err(Error::python(
            "RuntimeError",
            format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {}",
                int_list(&strides)
            ),
        ));
    }
    let itemsize = dtype.itemsize() as u64;
    let overflowed = || storage_overflow(&sizes, &strides);
    let needed = compute_storage_nbytes(&sizes, &strides, itemsize)?;
    if needed != 0 {
        // In torch the byte offset is an int64 product; past that the
        // check itself overflows (and the view would read outside the
        // storage), so the reference refuses it.
        let Some(offset_bytes) = offset.checked_mul(itemsize as i64) else {
            return Err(Error::new(format!(
                "`{name}`: storage offset {offset} times itemsize {itemsize} overflows a \
                 64-bit integer"
            )));
        };
        let have = storage.len() as i128;
        let total = needed as i128 + offset_bytes as i128;
        if total > have {
            return Err(Error::python(
                "RuntimeError",
                format!(
                    "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize \
                     {itemsize} requiring a storage size of {total} are out of bounds for \
                     storage of size {have}",
                    int_list(&sizes),
                    int_list(&strides)
                ),
            ));
        }
    }
    if offset < 0 {
        return Err(Error::python(
            "RuntimeError",
            format!("Tensor: invalid storage offset {offset}"),
        ));
    }
    // In bounds: every size, stride and the offset fit the storage (or the
    // tensor has no elements; then only the sizes' product is used).
    // The copy `contiguous()` makes must be addressable too.
    if checked_numel(&sizes)
        .and_then(|n| n.checked_mul(dtype.itemsize()))
        .is_none()
    {
        return Err(overflowed());
    }
    let shape: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    Ok(TensorView {
        name: name.to_string(),
        section,
        dtype,
        shape,
        stride: strides.iter().map(|&s| s as usize).collect(),
        storage_offset: offset as usize,
        storage_name: String::new(),
        storage: storage.clone(),
        is_param: false,
        requires_grad: false,
    })
}

#[cfg(test)]
mod tests {
    //! Malformed weights: each is an error with its text, never a panic or
    //! an allocation sized by the config.
    use super::*;
    use std::io::Write;

    /// A `.pt2` holding only a weights config of one entry `w` (its
    /// `tensor_meta` JSON) over the storage file `weight_0` (`storage`), and
    /// an empty constants config; `stored` picks the compression.
    fn archive(tensor_meta: &str, storage: &[u8], stored: bool) -> Vec<u8> {
        let entry = format!(
            r#"{{"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": {tensor_meta}}}"#
        );
        archive_of(&entry, storage, stored)
    }

    /// A `.pt2` whose weights config has one entry `w`: `entry` (a
    /// `PayloadMeta` as JSON), over the storage file `weight_0`.
    fn archive_of(entry: &str, storage: &[u8], stored: bool) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let method = if stored {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        let config = format!(r#"{{"config": {{"w": {entry}}}}}"#);
        for (name, bytes) in [
            ("archive/archive_format", &b"pt2"[..]),
            ("archive/.data/version", &b"3\n"[..]),
            (
                "archive/data/weights/model_weights_config.json",
                config.as_bytes(),
            ),
            ("archive/data/weights/weight_0", storage),
            (
                "archive/data/constants/model_constants_config.json",
                br#"{"config": {}}"#,
            ),
        ] {
            zip.start_file(name, options).expect("entry");
            zip.write_all(bytes).expect("write");
        }
        zip.finish().expect("zip").into_inner()
    }

    fn meta(dtype: i64, sizes: &[i64], strides: &[i64], offset: i64) -> String {
        let ints = |v: &[i64]| {
            let items: Vec<String> = v.iter().map(|i| format!(r#"{{"as_int": {i}}}"#)).collect();
            format!("[{}]", items.join(", "))
        };
        format!(
            r#"{{"dtype": {dtype}, "sizes": {}, "requires_grad": true, "device": {{"type": "cpu", "index": null}}, "strides": {}, "storage_offset": {{"as_int": {offset}}}, "layout": 7}}"#,
            ints(sizes),
            ints(strides)
        )
    }

    /// The contiguous bytes of `w`, or the error's message (with the
    /// exception type, when it mirrors one).
    fn read(bytes: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
        let bytes = ArchiveBytes::Owned(bytes);
        let t = Tensors::read(&bytes, "model").map_err(|e| match &e.exception {
            Some(t) => format!("{t}: {}", e.message),
            None => e.message.clone(),
        })?;
        let w = &t.state_dict[0];
        w.to_contiguous()
            .map(|c| c.into_owned())
            .map_err(|e| e.message)
    }

    const F32: i64 = 7;
    const STORAGE: [u8; 24] = [
        0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0,
    ];

    #[test]
    fn views_read_as_torch_as_strided() {
        // (tensor_meta, row-major elements as the low byte of each f32 slot)
        let cases: &[(String, &[u8])] = &[
            (meta(F32, &[2, 3], &[3, 1], 0), &[0, 1, 2, 3, 4, 5]),
            (meta(F32, &[3, 2], &[1, 3], 0), &[0, 3, 1, 4, 2, 5]),
            (meta(F32, &[2], &[2], 1), &[1, 3]),
            (meta(F32, &[4], &[0], 5), &[5, 5, 5, 5]),
            (meta(F32, &[], &[], 2), &[2]),
            (meta(F32, &[0, 7], &[7, 1], 100), &[]),
        ];
        for (m, want) in cases {
            let got = read(archive(m, &STORAGE, true)).unwrap_or_else(|e| panic!("{m}: {e}"));
            let low: Vec<u8> = got.chunks(4).map(|c| c[0]).collect();
            assert_eq!(&low, want, "{m}");
        }
        // Compressed storage reads the same (decompressed, bounded).
        let got = read(archive(&meta(F32, &[3, 2], &[1, 3], 0), &STORAGE, false));
        let low: Vec<u8> = got.expect("deflated").chunks(4).map(|c| c[0]).collect();
        assert_eq!(low, [0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn a_zero_byte_record_is_zeros_of_the_shape() {
        // `_build_file_map`: `torch.zeros(size)` for a record of no bytes.
        let got = read(archive(&meta(F32, &[2, 2], &[1, 2], 0), &[], true));
        assert_eq!(got.expect("zeros"), vec![0u8; 16]);
        // Never allocated: a huge shape is torch.zeros' refusal, a
        // negative one too.
        let huge = 1i64 << 62;
        let got = read(archive(&meta(F32, &[huge, huge], &[1, 1], 0), &[], true));
        assert_eq!(
            got,
            Err("RuntimeError: Storage size calculation overflowed with sizes=[4611686018427387904, 4611686018427387904]".into())
        );
        let got = read(archive(&meta(F32, &[2, -3], &[1, 1], 0), &[], true));
        assert_eq!(
            got,
            Err("RuntimeError: zeros: Dimension size must be non-negative.".into())
        );
        // Zeros of 8 GB: the view is made, its copy is refused.
        let got = read(archive(&meta(F32, &[1 << 31], &[1], 0), &[], true));
        assert!(got.is_err_and(|e| e.contains("over the 1073741824-byte limit")));
    }

    #[test]
    fn malformed_weights_are_errors() {
        let huge = i64::MAX / 2;
        let cases: &[(String, usize, &str)] = &[
            // offset + size past the end of the storage
            (
                meta(F32, &[4], &[1], 3),
                24,
                "RuntimeError: setStorage: sizes [4], strides [1], storage offset 3, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24",
            ),
            // truncated storage: 20 bytes for six floats
            (
                meta(F32, &[2, 3], &[3, 1], 0),
                20,
                "RuntimeError: setStorage: sizes [2, 3], strides [3, 1], storage offset 0, and itemsize 4 requiring a storage size of 24 are out of bounds for storage of size 20",
            ),
            // not a whole number of elements
            (
                meta(F32, &[1], &[1], 0),
                6,
                "ValueError: Record data/weights/weight_0: size 6 is not a multiple of element size 4 for dtype torch.float32",
            ),
            // a huge shape over a small storage
            (
                meta(F32, &[huge, huge], &[1, 1], 0),
                24,
                "RuntimeError: Storage size calculation overflowed with sizes=[4611686018427387903, 4611686018427387903] and strides=[1, 1]",
            ),
            (
                meta(F32, &[-1], &[1], 0),
                24,
                "RuntimeError: Storage size calculation overflowed with sizes=[-1] and strides=[1]",
            ),
            (
                meta(F32, &[2], &[-1], 0),
                24,
                "RuntimeError: as_strided: Negative strides are not supported at the moment, got strides: [-1]",
            ),
            (
                meta(F32, &[2, 3], &[3, 1], -1),
                24,
                "RuntimeError: Tensor: invalid storage offset -1",
            ),
            (
                meta(F32, &[2, 3], &[1], 0),
                24,
                "RuntimeError: mismatch in length of strides and shape",
            ),
            (
                meta(F32, &[1], &[1], huge),
                24,
                "`w`: storage offset 4611686018427387903 times itemsize 4 overflows a 64-bit integer",
            ),
            // a dtype the schema has not (a quantized one)
            (
                meta(14, &[1], &[1], 0),
                24,
                "dtype 14 is no dtype torch.export.save writes (a quantized tensor cannot be saved raw)",
            ),
            // a zero stride repeating 4 bytes into 8 GB
            (
                meta(F32, &[1 << 31], &[0], 0),
                24,
                "`w` ([2147483648], strides [0]) is 8589934592 bytes contiguous, from a storage of 24 bytes: over the 1073741824-byte limit of an expanded tensor",
            ),
        ];
        for (m, len, want) in cases {
            let got = read(archive(m, &STORAGE[..*len], true));
            assert_eq!(got.as_ref().map_err(String::as_str), Err(*want), "{m}");
        }
    }

    #[test]
    fn pickled_and_missing_entries_are_refused() {
        let m = meta(F32, &[1], &[1], 0);
        let cases = [
            (
                format!(r#"{{"path_name": "weight_0", "is_param": true, "use_pickle": true, "tensor_meta": {m}}}"#),
                "the state_dict entry `w` is pickled (use_pickle: a tensor subclass saved with \
                 torch.save): reading it needs torch.load",
            ),
            (
                format!(r#"{{"path_name": "weight_9", "is_param": true, "use_pickle": false, "tensor_meta": {m}}}"#),
                "PytorchStreamReader failed locating file data/weights/weight_9: file not found. \
                 This is an internal miniz error. If you are seeing this error, there is a high \
                 likelihood that your checkpoint file is corrupted. This can happen if the \
                 checkpoint was not saved properly, was transferred incorrectly, or the file was \
                 modified after saving.",
            ),
            (
                r#"{"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": null}"#.to_string(),
                "payload_meta.tensor_meta cannot be None",
            ),
        ];
        for (entry, want) in cases {
            let bytes = ArchiveBytes::Owned(archive_of(&entry, &STORAGE, true));
            let e = Tensors::read(&bytes, "model").expect_err(want);
            assert_eq!(e.message, want);
        }
    }

    #[test]
    fn a_lying_entry_header_is_an_error() {
        let e = EntryData {
            name: "archive/data/weights/weight_0".into(),
            start: u64::MAX - 2,
            compressed_size: 8,
            size: 8,
            stored: true,
        };
        assert!(e.slice(&[0; 16]).is_err());
        let e = EntryData { start: 12, ..e };
        assert_eq!(
            e.slice(&[0; 16]).expect_err("past the end").message,
            "entry `archive/data/weights/weight_0` declares 8 bytes at offset 12, past the end \
             of the 16-byte archive"
        );
    }

    #[test]
    fn dtypes_round_trip_their_scalar_type() {
        for d in Dtype::ALL {
            let v = (0..64).find(|&v| Dtype::from_scalar_type(v) == Some(d));
            assert!(v.is_some(), "{d}");
        }
        assert_eq!(Dtype::Complex128.itemsize(), 16);
        assert_eq!(Dtype::BFloat16.name(), "torch.bfloat16");
    }
}
