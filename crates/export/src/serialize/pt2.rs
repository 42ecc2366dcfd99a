//! The `.pt2` writing side (`torch.export.save` through `PT2ArchiveWriter`
//! and `PyTorchFileWriter`): a zip of stored (uncompressed) entries under
//! one root folder, named after the file (`out.pt2` → `out/`), each entry's
//! data aligned to 64 bytes as `PyTorchFileWriter` aligns it.
//!
//! The program is the only part a pass changes (`state_dict`, constants and
//! example inputs are carried over by `_transform_do_not_use`), so every
//! other entry is the input archive's, byte for byte and in its order:
//! weights and their config, constants, sample inputs, `archive_format`,
//! `archive_version`, `.data/version`, `byteorder`,
//! `.data/serialization_id`; `models/model.json` is the new program JSON.

use std::io::Write;
use std::path::Path;

use crate::archive::Pt2Archive;
use torchspec_pyval::error::{Error, Result};

/// `PyTorchFileWriter`'s data alignment (`kFieldAlignment`).
const ALIGNMENT: u16 = 64;

/// The archive root `PyTorchFileWriter` derives from the output path: the
/// file name without its extension.
pub fn archive_root(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "archive".to_string())
}

/// A `.pt2` holding `program_json` as `models/model.json` and every other
/// entry of the archive `input` (the bytes the program was loaded from).
pub fn write_pt2(input: &[u8], root: &str, program_json: &[u8]) -> Result<Vec<u8>> {
    let mut archive = Pt2Archive::over(input)?;
    let names: Vec<String> = archive.entries();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .with_alignment(ALIGNMENT)
        .large_file(false);
    let err = |e: &dyn std::fmt::Display| Error::new(format!("cannot write the archive: {e}"));
    let mut wrote_program = false;
    for name in &names {
        let data = if name == "models/model.json" {
            wrote_program = true;
            program_json.to_vec()
        } else {
            archive.read_entry(name)?
        };
        zip.start_file(format!("{root}/{name}"), options)
            .map_err(|e| err(&e))?;
        zip.write_all(&data).map_err(|e| err(&e))?;
    }
    if !wrote_program {
        return Err(Error::new("the input archive has no `models/model.json`"));
    }
    let cursor = zip.finish().map_err(|e| err(&e))?;
    Ok(cursor.into_inner())
}
