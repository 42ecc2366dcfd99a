//! Mirrors CPython 3.11's `zipfile.ZipFile(f, "r")` table of contents
//! (`_EndRecData`, `_EndRecData64`, `_RealGetContents`,
//! `ZipInfo._decodeExtra`): the zip `torch.export.load` opens when its pt2
//! reader failed, to look for the pre-2.8 layout's root `version` entry.
//! Unlike miniz it allows bytes before the archive (`concat`), and its
//! refusals are `zipfile.BadZipFile` with CPython's text.

use torchspec_pyval::error::Error;

const END_SIG: &[u8; 4] = b"PK\x05\x06";
const END_SIZE: usize = 22;
const END64_LOCATOR_SIG: &[u8; 4] = b"PK\x06\x07";
const END64_LOCATOR_SIZE: usize = 20;
const END64_SIG: &[u8; 4] = b"PK\x06\x06";
const END64_SIZE: usize = 56;
const CD_SIG: &[u8; 4] = b"PK\x01\x02";
const CD_SIZE: usize = 46;
/// `zipfile.MAX_EXTRACT_VERSION`.
const MAX_EXTRACT_VERSION: u8 = 63;

fn le16(b: &[u8], at: usize) -> u64 {
    u64::from(u16::from_le_bytes([b[at], b[at + 1]]))
}
fn le32(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn bad_zip(message: &str) -> Error {
    Error::python("BadZipFile", message)
}

/// The archive's table of contents as `zipfile` reads it.
#[derive(Debug)]
pub struct ZipFile {
    /// Where the central directory starts (`self.start_dir`).
    pub start_dir: u64,
    /// The bytes before the archive (`concat`): its offsets are relative to it.
    pub concat: u64,
    /// The entries' names, in directory order.
    pub names: Vec<String>,
}

/// `_EndRecData` (with `_EndRecData64`): the end record's
/// `(signature is zip64, directory size, directory offset, location)`.
fn end_rec_data(bytes: &[u8]) -> Result<Option<(bool, u64, u64, u64)>, Error> {
    let size = bytes.len();
    if size < END_SIZE {
        // `fpin.seek(-sizeEndCentDir, 2)` raises OSError on a file.
        return Ok(None);
    }
    let tail = &bytes[size - END_SIZE..];
    if &tail[..4] == END_SIG && tail[20..] == [0, 0] {
        return end_rec_data64(bytes, size - END_SIZE, tail);
    }
    let max_comment_start = size.saturating_sub((1 << 16) + END_SIZE);
    let data = &bytes[max_comment_start..];
    let Some(start) = data.windows(4).rposition(|w| w == END_SIG) else {
        return Ok(None);
    };
    if data.len() - start < END_SIZE {
        // "Zip file is corrupted."
        return Ok(None);
    }
    let at = max_comment_start + start;
    end_rec_data64(bytes, at, &bytes[at..at + END_SIZE])
}

fn end_rec_data64(
    bytes: &[u8],
    at: usize,
    rec: &[u8],
) -> Result<Option<(bool, u64, u64, u64)>, Error> {
    let plain = Some((false, le32(rec, 12), le32(rec, 16), at as u64));
    // `fpin.seek(offset - sizeEndCentDir64Locator, 2)` before the start
    // raises OSError, caught: the plain record.
    let Some(loc_at) = at.checked_sub(END64_LOCATOR_SIZE) else {
        return Ok(plain);
    };
    let loc = &bytes[loc_at..at];
    if &loc[..4] != END64_LOCATOR_SIG {
        return Ok(plain);
    }
    if le32(loc, 4) != 0 || le32(loc, 16) > 1 {
        return Err(bad_zip(
            "zipfiles that span multiple disks are not supported",
        ));
    }
    // This seek is outside the `try`: before the start it is an OSError,
    // which `_RealGetContents` turns into "File is not a zip file".
    let Some(rec_at) = loc_at.checked_sub(END64_SIZE) else {
        return Err(bad_zip("File is not a zip file"));
    };
    let rec64 = &bytes[rec_at..loc_at];
    if &rec64[..4] != END64_SIG {
        return Ok(plain);
    }
    Ok(Some((true, le64(rec64, 40), le64(rec64, 48), at as u64)))
}

impl ZipFile {
    /// `zipfile.ZipFile(io.BytesIO(bytes))`'s reading of the directory.
    pub fn read(bytes: &[u8]) -> Result<ZipFile, Error> {
        let Some((zip64, size_cd, offset_cd, location)) = end_rec_data(bytes)? else {
            return Err(bad_zip("File is not a zip file"));
        };
        let mut concat = i128::from(location) - i128::from(size_cd) - i128::from(offset_cd);
        if zip64 {
            concat -= (END64_SIZE + END64_LOCATOR_SIZE) as i128;
        }
        let start_dir = i128::from(offset_cd) + concat;
        if start_dir < 0 {
            return Err(bad_zip("Bad offset for central directory"));
        }
        // `fp.read(size_cd)` from `start_dir`: whatever is there, maybe less.
        let from = usize::try_from(start_dir)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let to = from
            .saturating_add(usize::try_from(size_cd).unwrap_or(usize::MAX))
            .min(bytes.len());
        let dir = &bytes[from..to];
        let mut names = Vec::new();
        let (mut total, mut p) = (0u64, 0usize);
        while total < size_cd {
            // `fp.read(n)` on the BytesIO of `dir`: short at its end.
            if dir.len().saturating_sub(p) < CD_SIZE {
                return Err(bad_zip("Truncated central directory"));
            }
            let h = &dir[p..p + CD_SIZE];
            if &h[..4] != CD_SIG {
                return Err(bad_zip("Bad magic number for central directory"));
            }
            let (name_len, extra_len, comment_len) = (
                le16(h, 28) as usize,
                le16(h, 30) as usize,
                le16(h, 32) as usize,
            );
            let read =
                |at: usize, n: usize| &dir[at.min(dir.len())..at.saturating_add(n).min(dir.len())];
            let name = read(p + CD_SIZE, name_len);
            let extra = read(p + CD_SIZE + name_len, extra_len);
            let name = if le16(h, 8) & 0x800 != 0 {
                match std::str::from_utf8(name) {
                    Ok(s) => s.to_string(),
                    // CPython raises UnicodeDecodeError here; the reference
                    // does not compose its text.
                    Err(_) => {
                        return Err(
                            Error::new("a zip entry name flagged UTF-8 that is not UTF-8")
                                .of_kind(torchspec_pyval::ErrorKind::Unsupported),
                        )
                    }
                }
            } else {
                cp437(name)
            };
            if h[6] > MAX_EXTRACT_VERSION {
                return Err(Error::python(
                    "NotImplementedError",
                    format!("zip file version {:.1}", f64::from(h[6]) / 10.0),
                ));
            }
            decode_extra(extra, le32(h, 24), le32(h, 20), le32(h, 42))?;
            names.push(name);
            total += (CD_SIZE + name_len + extra_len + comment_len) as u64;
            p = p.saturating_add(CD_SIZE + name_len + extra_len + comment_len);
        }
        Ok(ZipFile {
            start_dir: start_dir as u64,
            concat: concat.max(0) as u64,
            names,
        })
    }
}

/// `ZipInfo._decodeExtra`: only its refusals matter here.
fn decode_extra(
    mut extra: &[u8],
    file_size: u64,
    compress_size: u64,
    header_offset: u64,
) -> Result<(), Error> {
    while extra.len() >= 4 {
        let (tp, ln) = (le16(extra, 0), le16(extra, 2) as usize);
        if ln + 4 > extra.len() {
            return Err(bad_zip(&format!(
                "Corrupt extra field {tp:04x} (size={ln})"
            )));
        }
        if tp == 1 {
            let mut data = &extra[4..ln + 4];
            let mut take = |field: &str| -> Result<(), Error> {
                if data.len() < 8 {
                    return Err(bad_zip(&format!(
                        "Corrupt zip64 extra field. {field} not found."
                    )));
                }
                data = &data[8..];
                Ok(())
            };
            if file_size == 0xFFFF_FFFF {
                take("File size")?;
            }
            if compress_size == 0xFFFF_FFFF {
                take("Compress size")?;
            }
            if header_offset == 0xFFFF_FFFF {
                take("Header offset")?;
            }
        }
        extra = &extra[ln + 4..];
    }
    Ok(())
}

/// Bytes decoded as code page 437 (`bytes.decode("cp437")`), which never fails.
fn cp437(b: &[u8]) -> String {
    const HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";
    b.iter()
        .map(|&c| {
            if c < 0x80 {
                c as char
            } else {
                HIGH.chars().nth(usize::from(c - 0x80)).unwrap_or('?')
            }
        })
        .collect()
}
