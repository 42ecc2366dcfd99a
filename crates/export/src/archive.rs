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

use torchspec_pyval::error::{Error, Result};

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
    pub fn map(path: &Path) -> Result<ArchiveBytes> {
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

/// An open `.pt2` archive.
pub struct Pt2Archive<R: Read + Seek> {
    zip: zip::ZipArchive<R>,
    /// The root folder every entry lives under (`archive` in
    /// `archive/models/model.json`), as PyTorch's reader takes it from the
    /// first entry.
    root: String,
    names: Vec<String>,
}

impl AsRef<[u8]> for ArchiveBytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Pt2Archive<std::io::Cursor<ArchiveBytes>> {
    /// Maps the archive at `path` ([`ArchiveBytes::map`]) and opens it:
    /// only the central directory is read here, and each entry when asked.
    pub fn open(path: &Path) -> Result<Self> {
        let bytes = ArchiveBytes::map(path)?;
        Self::from_reader(std::io::Cursor::new(bytes)).map_err(|e| e.in_file(path))
    }
}

impl<'a> Pt2Archive<std::io::Cursor<&'a [u8]>> {
    /// Opens an archive over bytes in memory or mapped.
    pub fn over(bytes: &'a [u8]) -> Result<Self> {
        Self::from_reader(std::io::Cursor::new(bytes))
    }
}

impl<R: Read + Seek> Pt2Archive<R> {
    /// Opens an archive from any seekable reader: the root is the first entry's
    /// top folder, and its `archive_format` must be `pt2`.
    pub fn from_reader(reader: R) -> Result<Self> {
        let zip = zip::ZipArchive::new(reader)
            .map_err(|e| Error::new(format!("not a readable zip archive: {e}")))?;
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        // file_names() is unordered; PyTorch takes the root from the first
        // entry in the central directory.
        let first = match zip.name_for_index(0) {
            Some(n) => n.to_string(),
            None => return Err(Error::new("empty zip archive: no `archive_format` entry")),
        };
        let root = first.split('/').next().unwrap_or("").to_string();
        let mut archive = Pt2Archive { zip, root, names };
        let format = archive.read_entry("archive_format")?;
        if format != b"pt2" {
            return Err(Error::new(format!(
                "`{}/archive_format` is {:?}, not \"pt2\": AssertionError: Invalid archive format",
                archive.root,
                String::from_utf8_lossy(&format)
            )));
        }
        Ok(archive)
    }

    /// The root folder every entry lives under (`archive` as PyTorch writes it).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Entry names relative to the root, in central-directory order.
    pub fn entries(&self) -> Vec<&str> {
        let prefix = format!("{}/", self.root);
        let mut out: Vec<(usize, &str)> = self
            .names
            .iter()
            .filter_map(|n| {
                let idx = self.zip.index_for_name(n)?;
                Some((idx, n.strip_prefix(&prefix)?))
            })
            .collect();
        out.sort();
        out.into_iter().map(|(_, n)| n).collect()
    }

    /// Whether the archive has entry `name` (relative to the root).
    pub fn contains(&self, name: &str) -> bool {
        self.zip
            .index_for_name(&format!("{}/{name}", self.root))
            .is_some()
    }

    /// The bytes of entry `name` (relative to the root), at most
    /// [`MAX_ENTRY_BYTES`].
    pub fn read_entry(&mut self, name: &str) -> Result<Vec<u8>> {
        let full = format!("{}/{name}", self.root);
        match read_bounded(&mut self.zip, &full)? {
            Some(buf) => Ok(buf),
            None => Err(Error::new(format!("archive has no entry `{full}`"))),
        }
    }

    /// Where the bytes of entry `name` (relative to the root) lie in the
    /// archive, without reading them: `None` when there is no such entry.
    /// The range is checked against nothing here; [`EntryData::slice`]
    /// checks it against the archive's bytes.
    pub fn entry_data(&mut self, name: &str) -> Result<Option<EntryData>> {
        let full = format!("{}/{name}", self.root);
        let Some(index) = self.zip.index_for_name(&full) else {
            return Ok(None);
        };
        let file = self
            .zip
            .by_index_raw(index)
            .map_err(|e| Error::new(format!("cannot read entry `{full}`: {e}")))?;
        if file.encrypted() {
            return Err(Error::new(format!("entry `{full}` is encrypted")));
        }
        let Some(start) = file.data_start() else {
            return Err(Error::new(format!(
                "cannot find the data of entry `{full}`"
            )));
        };
        Ok(Some(EntryData {
            name: full,
            start,
            compressed_size: file.compressed_size(),
            size: file.size(),
            stored: file.compression() == zip::CompressionMethod::Stored,
        }))
    }

    /// The bytes of entry `name` decompressed, at most [`MAX_ENTRY_BYTES`]
    /// (as [`Self::read_entry`]); `None` when there is no such entry.
    pub fn read_entry_if_present(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        read_bounded(&mut self.zip, &format!("{}/{name}", self.root))
    }

    /// The names of the programs under `models/` (`model` for `models/model.json`).
    pub fn model_names(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter_map(|n| n.strip_prefix("models/")?.strip_suffix(".json"))
            .map(str::to_string)
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
        let name = format!("data/weights/{model}_weights_config.json");
        if !self.contains(&name) {
            return Ok(None);
        }
        self.read_entry(&name).map(Some)
    }

    /// `data/constants/<model>_constants_config.json`, if present.
    pub fn read_constants_config(&mut self, model: &str) -> Result<Option<Vec<u8>>> {
        let name = format!("data/constants/{model}_constants_config.json");
        if !self.contains(&name) {
            return Ok(None);
        }
        self.read_entry(&name).map(Some)
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
        Err(e) => return Err(Error::new(format!("cannot read entry `{full}`: {e}"))),
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
        .map_err(|e| Error::new(format!("cannot read entry `{full}`: {e}")))?;
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

/// Whether `bytes` is a zip in the pre-2.8 layout (it has a root `version`
/// entry): the archives `torch.export.load`'s backward-compatible path reads.
pub fn is_legacy(bytes: &[u8]) -> bool {
    zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .is_ok_and(|z| z.index_for_name(LEGACY_VERSION).is_some())
}

/// The program JSON of a pre-2.8 archive, with `torch.export.load`'s
/// checks of that path in its order (errors as PyTorch words them).
pub fn read_legacy_program(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| Error::new(format!("not a readable zip archive: {e}")))?;
    let mut read = |name: &str| read_bounded(&mut zip, name);
    let Some(version) = read(LEGACY_VERSION)? else {
        return Err(Error::python(
            "RuntimeError",
            "We ran into an error when deserializing the saved file. Please check the \
             warnings above for possible errors. ",
        ));
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
        ));
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
/// `models/model.json` of a pt2 archive, or the pre-2.8 layout's
/// `serialized_exported_program.json`.
pub fn program_json(bytes: &[u8]) -> Result<Vec<u8>> {
    match Pt2Archive::from_reader(std::io::Cursor::new(bytes)) {
        Ok(mut a) => a.read_program(),
        Err(_) if is_legacy(bytes) => read_legacy_program(bytes),
        Err(e) => Err(e),
    }
}
