//! Mirrors torch/export/pt2_archive/_package.py's reading side
//! (`PT2ArchiveReader`, `load_pt2`): a `.pt2` is a zip whose entries share
//! one root folder of any name; `archive_format` says `pt2`, the program is
//! `models/<name>.json`, the weight and constant configs are JSON beside it.
//!
//! Reading is bounded: an entry is read only up to a limit whatever size
//! the zip declares, so a truncated archive, a lying header or a zip bomb
//! is an error naming the entry, never a large allocation or a panic.

use std::io::{Read, Seek};
use std::path::Path;

use torchspec_pyval::error::{Error, ErrorKind, Result};

/// The bytes of a `.pt2`: read into memory, or mapped from its file so
/// that only the pages of the entries read (the program JSON, the
/// configs) are ever loaded, whatever the size of the weights.
pub enum ArchiveBytes {
    /// Bytes the caller holds (an archive built or read in memory).
    Owned(Vec<u8>),
    /// The file, memory-mapped read-only.
    Mapped(memmap2::Mmap),
}

impl ArchiveBytes {
    /// Maps the file at `path`. Like every reader that maps a file
    /// (ripgrep, safetensors), this assumes no other process truncates or
    /// rewrites the file while the program is alive.
    pub fn map(path: impl AsRef<Path>) -> Result<ArchiveBytes> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        // SAFETY: the map is read-only and private to this process; the
        // file is not expected to change while it is mapped (see above).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Ok(ArchiveBytes::Mapped(map))
    }
}

impl std::ops::Deref for ArchiveBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ArchiveBytes::Owned(v) => v,
            ArchiveBytes::Mapped(m) => m,
        }
    }
}

impl std::fmt::Debug for ArchiveBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self {
            ArchiveBytes::Owned(_) => "Owned",
            ArchiveBytes::Mapped(_) => "Mapped",
        };
        write!(f, "ArchiveBytes::{how}({} bytes)", self.len())
    }
}

/// The largest entry read into memory (program JSON, configs).
pub const MAX_ENTRY_BYTES: u64 = 512 << 20;

pub mod miniz;
pub mod pyzip;

/// An open `.pt2` archive, read as `torch._C.PyTorchFileReader` reads it
/// ([`miniz`]): the zip at offset 0, its entries found as miniz finds them.
pub struct Pt2Archive<B: AsRef<[u8]>> {
    bytes: B,
    dir: miniz::CentralDirectory,
    /// The root folder every entry lives under (`archive` in
    /// `archive/models/model.json`), as PyTorch's reader takes it from the
    /// first entry.
    root: String,
}

impl AsRef<[u8]> for ArchiveBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// `kMinSupportedFileFormatVersion` and `kMaxSupportedFileFormatVersion`
/// of caffe2/serialize/versions.h (torch 2.15.0).
const MIN_FILE_FORMAT_VERSION: u64 = 1;
const MAX_FILE_FORMAT_VERSION: u64 = 10;

/// `PyTorchStreamReader::valid`'s `RuntimeError`.
fn stream_error(what: &str, info: &str, err: &str) -> Error {
    Error::python("RuntimeError", miniz::failed(what, info, err))
}

/// A `TORCH_CHECK` / `CAFFE_ENFORCE` of `inline_container.cc` at `line`.
fn enforce(line: u32, message: String) -> Error {
    Error::python(
        "RuntimeError",
        format!("[enforce fail at inline_container.cc:{line}] . {message}"),
    )
}

impl Pt2Archive<ArchiveBytes> {
    /// Maps the archive at `path` ([`ArchiveBytes::map`]) and opens it:
    /// only the central directory is read here, and each entry when asked.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = ArchiveBytes::map(path)?;
        Self::new(bytes).map_err(|e| e.in_file(path))
    }
}

impl<'a> Pt2Archive<&'a [u8]> {
    /// Opens an archive over bytes in memory or mapped.
    pub fn over(bytes: &'a [u8]) -> Result<Self> {
        Self::new(bytes)
    }

    /// The archive's bytes, for as long as they are borrowed.
    pub fn bytes_ref(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<B: AsRef<[u8]>> Pt2Archive<B> {
    /// `PT2ArchiveReader(f)`: `PyTorchStreamReader::init` (the central
    /// directory, the root from the first entry, the version record), then
    /// `archive_format` must be `pt2`. A refusal of the stream reader is a
    /// `RuntimeError`, which `torch.export.load` catches.
    pub fn new(bytes: B) -> Result<Self> {
        let dir = miniz::CentralDirectory::read(bytes.as_ref())
            .map_err(|e| stream_error("reading zip archive", "", e))?;
        if dir.is_empty() {
            return Err(enforce(170, "archive does not contain any files".into()));
        }
        // `std::string` of the name up to its first NUL, as
        // `mz_zip_reader_get_filename` copies it.
        let first = dir.name(0);
        let first = &first[..first.iter().position(|&b| b == 0).unwrap_or(first.len())];
        let Some(slash) = first.iter().position(|&b| b == b'/') else {
            return Err(enforce(
                179,
                format!(
                    "file in archive is not in a subdirectory: {}",
                    String::from_utf8_lossy(first)
                ),
            ));
        };
        let root = String::from_utf8_lossy(&first[..slash]).into_owned();
        let mut archive = Pt2Archive { bytes, dir, root };
        let version = if archive.contains(".data/version") {
            archive.read_entry(".data/version")?
        } else if archive.contains("version") {
            archive.read_entry("version")?
        } else {
            return Err(Error::python(
                "RuntimeError",
                "Expected hasRecord(\"version\") to be true, but got false.  (Could this error \
                 message be improved?  If so, please report an enhancement request to PyTorch.)",
            ));
        };
        match miniz::parse_version(&version) {
            None => {
                return Err(enforce(
                    214,
                    format!(
                        "Couldn't parse the version {} as Long Long.",
                        String::from_utf8_lossy(&version)
                    ),
                ))
            }
            Some(v) if v < MIN_FILE_FORMAT_VERSION => {
                return Err(enforce(
                    218,
                    format!(
                        "Attempted to read a PyTorch file with version {v}, but the minimum \
                         supported version for reading is {MIN_FILE_FORMAT_VERSION}. Your PyTorch \
                         script module file is too old. Please regenerate it with latest version \
                         of PyTorch to mitigate this issue."
                    ),
                ))
            }
            Some(v) if v > MAX_FILE_FORMAT_VERSION => {
                return Err(enforce(
                    229,
                    format!(
                        "Attempted to read a PyTorch file with version {v}, but the maximum \
                         supported version for reading is {MAX_FILE_FORMAT_VERSION}. The version \
                         of your PyTorch installation may be too old, please upgrade PyTorch to \
                         latest version to mitigate this issue."
                    ),
                ))
            }
            Some(_) => {}
        }
        let format = archive.read_entry("archive_format")?;
        if format != b"pt2" {
            // `.decode()` of what is not UTF-8 raises before the comparison.
            crate::schema::decode_utf8(&format)?;
            return Err(Error::python("AssertionError", "Invalid archive format"));
        }
        Ok(archive)
    }

    /// The archive's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The root folder every entry lives under (`archive` as PyTorch writes it).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// `get_all_records()`: entry names relative to the root, in
    /// central-directory order, without `.debug_pkl` entries; an entry
    /// outside the root is the reader's `RuntimeError`.
    pub fn records(&self) -> Result<Vec<String>> {
        let prefix = format!("{}/", self.root);
        let mut out = Vec::with_capacity(self.dir.len());
        for i in 0..self.dir.len() {
            let name = self.dir.name(i);
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            let Some(rel) = name.strip_prefix(prefix.as_bytes()) else {
                return Err(enforce(
                    339,
                    format!(
                        "file in archive is not in a subdirectory {prefix}: {}",
                        String::from_utf8_lossy(name)
                    ),
                ));
            };
            if !rel.ends_with(b".debug_pkl") {
                out.push(String::from_utf8_lossy(rel).into_owned());
            }
        }
        Ok(out)
    }

    /// Entry names relative to the root, in central-directory order (the
    /// entries outside the root left out).
    pub fn entries(&self) -> Vec<String> {
        let prefix = format!("{}/", self.root);
        (0..self.dir.len())
            .filter_map(|i| {
                let rel = self.dir.name(i).strip_prefix(prefix.as_bytes())?;
                Some(String::from_utf8_lossy(rel).into_owned())
            })
            .collect()
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.dir.locate(format!("{}/{name}", self.root).as_bytes())
    }

    /// Whether the archive has entry `name` (relative to the root), found
    /// as `hasRecord` finds it (ASCII case ignored).
    pub fn contains(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    /// The bytes of entry `name` (relative to the root), at most
    /// [`MAX_ENTRY_BYTES`]: `getRecord`, whose refusals are `RuntimeError`s.
    pub fn read_entry(&mut self, name: &str) -> Result<Vec<u8>> {
        match self.read_entry_if_present(name)? {
            Some(buf) => Ok(buf),
            None => Err(stream_error("locating file ", name, miniz::FILE_NOT_FOUND)),
        }
    }

    /// Where the bytes of entry `name` (relative to the root) lie in the
    /// archive, without reading them: `None` when there is no such entry.
    /// [`EntryData::slice`] checks the range against the archive's bytes.
    pub fn entry_data(&mut self, name: &str) -> Result<Option<EntryData>> {
        let Some(index) = self.index(name) else {
            return Ok(None);
        };
        let full = format!("{}/{name}", self.root);
        let (start, stat) = self
            .dir
            .data_start(self.bytes.as_ref(), index)
            .map_err(|e| stream_error("reading file ", name, e))?;
        if stat.flags & 1 != 0 {
            return Err(stream_error(
                "reading file ",
                name,
                miniz::UNSUPPORTED_ENCRYPTION,
            ));
        }
        Ok(Some(EntryData {
            name: full,
            start,
            compressed_size: stat.comp_size,
            size: stat.uncomp_size,
            stored: stat.method == 0,
        }))
    }

    /// The bytes of entry `name` decompressed, at most [`MAX_ENTRY_BYTES`]
    /// (as [`Self::read_entry`]); `None` when there is no such entry.
    pub fn read_entry_if_present(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(index) = self.index(name) else {
            return Ok(None);
        };
        match self
            .dir
            .extract(self.bytes.as_ref(), index, MAX_ENTRY_BYTES)
        {
            Ok(Some(buf)) => Ok(Some(buf)),
            Ok(None) => Err(Error::new(format!(
                "entry `{}/{name}` declares more than the {MAX_ENTRY_BYTES}-byte limit",
                self.root
            ))),
            Err(e) => Err(stream_error("reading file ", name, e)),
        }
    }

    /// The names of the programs under `models/` (`model` for `models/model.json`).
    pub fn model_names(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter_map(|n| {
                Some(
                    n.strip_prefix("models/")?
                        .strip_suffix(".json")?
                        .to_string(),
                )
            })
            .collect()
    }

    /// The program JSON `torch.export.load` reads: `models/model.json`.
    pub fn read_program(&mut self) -> Result<Vec<u8>> {
        let models = self.model_names();
        if !models.iter().any(|m| m == "model") {
            return Err(Error::new(format!(
                "archive `{}` has no program `models/model.json` (programs: {})",
                self.root,
                if models.is_empty() {
                    "none".to_string()
                } else {
                    models.join(", ")
                }
            )));
        }
        self.read_entry("models/model.json")
    }

    /// `data/weights/<model>_weights_config.json`, if present.
    pub fn read_weights_config(&mut self, model: &str) -> Result<Option<Vec<u8>>> {
        self.read_entry_if_present(&format!("data/weights/{model}_weights_config.json"))
    }

    /// `data/constants/<model>_constants_config.json`, if present.
    pub fn read_constants_config(&mut self, model: &str) -> Result<Option<Vec<u8>>> {
        self.read_entry_if_present(&format!("data/constants/{model}_constants_config.json"))
    }
}

impl<'a> Pt2Archive<&'a [u8]> {
    /// [`Pt2Archive::read_program`] without a copy: the program JSON
    /// borrowed from the archive's bytes when stored (as `torch.export.save`
    /// stores it), after the same checks (size limit, CRC).
    pub fn read_program_in_place(&mut self) -> Result<std::borrow::Cow<'a, [u8]>> {
        let models = self.model_names();
        if !models.iter().any(|m| m == "model") {
            // (The same refusal.)
            return self.read_program().map(std::borrow::Cow::Owned);
        }
        let name = "models/model.json";
        let Some(index) = self.index(name) else {
            return Err(stream_error("locating file ", name, miniz::FILE_NOT_FOUND));
        };
        let bytes: &'a [u8] = self.bytes;
        match self.dir.extract_in_place(bytes, index, MAX_ENTRY_BYTES) {
            Ok(Some(buf)) => Ok(buf),
            Ok(None) => Err(Error::new(format!(
                "entry `{}/{name}` declares more than the {MAX_ENTRY_BYTES}-byte limit",
                self.root
            ))),
            Err(e) => Err(stream_error("reading file ", name, e)),
        }
    }
}

/// Where an entry's data lies in the archive ([`Pt2Archive::entry_data`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryData {
    /// The entry's full name (with the root folder).
    pub name: String,
    /// The offset of its (possibly compressed) data in the archive.
    pub start: u64,
    /// The bytes its data takes in the archive.
    pub compressed_size: u64,
    /// Its size once decompressed: the record size PyTorch's reader gives.
    pub size: u64,
    /// Whether it is stored (not compressed): only then is its data a
    /// slice of the archive.
    pub stored: bool,
}

impl EntryData {
    /// The entry's data in `archive` (the bytes it was found in), for a
    /// stored entry: `start + size` is checked against the archive's length
    /// without overflow, so a lying header is an error, never a panic.
    pub fn slice<'a>(&self, archive: &'a [u8]) -> Result<&'a [u8]> {
        if !self.stored || self.compressed_size != self.size {
            return Err(Error::new(format!(
                "entry `{}` is compressed: only a stored entry is a slice of the archive",
                self.name
            )));
        }
        let end = self.start.checked_add(self.size);
        match end {
            Some(end) if end <= archive.len() as u64 => {
                Ok(&archive[self.start as usize..end as usize])
            }
            _ => Err(Error::new(format!(
                "entry `{}` declares {} bytes at offset {}, past the end of the {}-byte archive",
                self.name,
                self.size,
                self.start,
                archive.len()
            ))),
        }
    }
}

/// The bytes of the zip entry `full` (`None` when there is none), at most
/// [`MAX_ENTRY_BYTES`] whatever the zip declares.
fn read_bounded<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    full: &str,
) -> Result<Option<Vec<u8>>> {
    let mut file = match zip.by_name(full) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => {
            let message = format!("cannot read entry `{full}`: {e}");
            return Err(Error::new(message).caused_by(e));
        }
    };
    let declared = file.size();
    if declared > MAX_ENTRY_BYTES {
        return Err(Error::new(format!(
            "entry `{full}` declares {declared} bytes, over the {MAX_ENTRY_BYTES}-byte limit"
        )));
    }
    // Never trust the declared size for the allocation beyond a small
    // start; the limit bounds what is actually decompressed.
    let mut buf = Vec::with_capacity(declared.min(1 << 20) as usize);
    let read = (&mut file)
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::new(format!("cannot read entry `{full}`: {e}")).caused_by(e))?;
    if read as u64 > MAX_ENTRY_BYTES {
        return Err(Error::new(format!(
            "entry `{full}` inflates past the {MAX_ENTRY_BYTES}-byte limit"
        )));
    }
    Ok(Some(buf))
}

/// The root entries of the format `torch.export.save` wrote up to 2.7,
/// which `torch.export.load` still reads when the pt2 reader fails:
/// `version`, `serialized_exported_program.json` and the pickled state
/// dict, constants and example inputs, all at the zip's root.
pub const LEGACY_VERSION: &str = "version";
/// The legacy layout's program JSON entry.
pub const LEGACY_PROGRAM: &str = "serialized_exported_program.json";

/// `zipfile.ZipFile(f)` over `bytes` ([`pyzip`]): the zip
/// `torch.export.load` falls back to, opened with the zip crate at the
/// offset CPython finds (bytes before the archive allowed) and checked to
/// read the same central directory.
fn python_zip(bytes: &[u8]) -> Result<(pyzip::ZipFile, zip::ZipArchive<std::io::Cursor<&[u8]>>)> {
    let toc = pyzip::ZipFile::read(bytes)?;
    let config = zip::read::Config {
        archive_offset: zip::read::ArchiveOffset::Known(toc.concat),
    };
    let zip = zip::ZipArchive::with_config(config, std::io::Cursor::new(bytes))
        .ok()
        .filter(|z| z.central_directory_start() == toc.start_dir && z.offset() == toc.concat)
        .ok_or_else(|| {
            Error::new(
                "a zip CPython's zipfile reads and the zip crate does not read alike \
                 (not modelled)",
            )
            .of_kind(ErrorKind::Unsupported)
        })?;
    Ok((toc, zip))
}

/// Whether `bytes` is a zip in the pre-2.8 layout (`zipfile` finds a root
/// `version` entry): the archives `torch.export.load`'s backward-compatible
/// path reads.
pub fn is_legacy(bytes: &[u8]) -> bool {
    pyzip::ZipFile::read(bytes).is_ok_and(|t| t.names.iter().any(|n| n == LEGACY_VERSION))
}

/// What `torch.export.load` does once `load_pt2` raised a `RuntimeError`:
/// `zipfile.ZipFile(f)` (`BadZipFile` when it is no zip), the pre-2.8
/// layout's `version` entry, and that layout's program JSON, with the
/// checks of that path in its order (errors as PyTorch words them).
pub fn read_legacy_program(bytes: &[u8]) -> Result<Vec<u8>> {
    let (toc, mut zip) = match pyzip::ZipFile::read(bytes) {
        Ok(t) if !t.names.iter().any(|n| n == LEGACY_VERSION) => {
            return Err(Error::python(
                "RuntimeError",
                "We ran into an error when deserializing the saved file. Please check the \
                 warnings above for possible errors. ",
            ))
        }
        Ok(_) => python_zip(bytes)?,
        Err(e) => return Err(e),
    };
    drop(toc);
    let mut read = |name: &str| read_bounded(&mut zip, name);
    let Some(version) = read(LEGACY_VERSION)? else {
        return Err(
            Error::new("the zip crate finds no `version` entry where zipfile does")
                .of_kind(ErrorKind::Unsupported),
        );
    };
    // `zipf.read("version").decode().split(".")`.
    let text = crate::schema::decode_utf8(&version)?;
    let parts: Vec<&str> = text.split('.').collect();
    let (major, minor) = crate::schema::SCHEMA_VERSION;
    if parts.len() != 2 {
        return Err(Error::python(
            "AssertionError",
            "Version in the saved file has incorrect length, double check if the file is \
             generated by torch.export.save()",
        ));
    }
    if parts[0] != major.to_string() {
        let shown: Vec<String> = parts
            .iter()
            .map(|p| torchspec_pyval::repr::str_repr(p))
            .collect();
        return Err(Error::python(
            "RuntimeError",
            format!(
                "Serialized version [{}] does not match our current schema version ({major}, {minor}).",
                shown.join(", ")
            ),
        )
        .of_kind(ErrorKind::SchemaVersion));
    }
    let program = read(LEGACY_PROGRAM)?;
    let present = |names: &[&str], zip: &zip::ZipArchive<_>| {
        names.iter().any(|n| zip.index_for_name(n).is_some())
    };
    let Some(program) = program else {
        return Err(Error::python(
            "AssertionError",
            "serialized_exported_program is None",
        ));
    };
    for (names, what) in [
        (
            &["serialized_state_dict.json", "serialized_state_dict.pt"][..],
            "serialized_state_dict",
        ),
        (
            &["serialized_constants.json", "serialized_constants.pt"][..],
            "serialized_constants",
        ),
        (
            &["serialized_example_inputs.pt"][..],
            "serialized_example_inputs",
        ),
    ] {
        if !present(names, &zip) {
            return Err(Error::python("AssertionError", format!("{what} is None")));
        }
    }
    Ok(program)
}

/// The program JSON `torch.export.load` reads from the archive `bytes`:
/// `models/model.json` of a pt2 archive, or, when the pt2 reader raised a
/// `RuntimeError`, the pre-2.8 layout's `serialized_exported_program.json`.
pub fn program_json(bytes: &[u8]) -> Result<Vec<u8>> {
    match Pt2Archive::over(bytes) {
        Ok(mut a) => a.read_program(),
        Err(e) if e.exception.as_deref() == Some("RuntimeError") => read_legacy_program(bytes),
        Err(e) => Err(e),
    }
}
