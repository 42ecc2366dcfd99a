//! Mirrors caffe2/serialize/inline_container.cc's `PyTorchStreamReader`
//! (what `torch._C.PyTorchFileReader` opens a `.pt2` with) over its vendored
//! miniz 3.0.2: `mz_zip_reader_read_central_dir` (the end-of-central-directory
//! record searched backwards from the end of the file, the archive always at
//! offset 0, no fallback to an earlier record), `init`'s root folder and
//! version record, and the record lookup (`mz_zip_reader_locate_file`: a
//! case-insensitive binary search over the heap-sorted names, so which of
//! duplicate entries is found is the sort's choice).
//!
//! Only the directory is read here; an entry's bytes are read by the zip
//! crate at the index this finds (`archive/mod.rs`). Every count and offset
//! is checked against the file's length before use: nothing is allocated by
//! what a header claims.

/// `mz_zip_get_error_string` of the miniz errors the reader can meet.
pub const NOT_AN_ARCHIVE: &str = "not a ZIP archive";
/// `MZ_ZIP_FAILED_FINDING_CENTRAL_DIR`.
pub const FAILED_FINDING_CENTRAL_DIR: &str = "failed finding central directory";
/// `MZ_ZIP_INVALID_HEADER_OR_CORRUPTED`.
pub const INVALID_HEADER: &str = "invalid header or archive is corrupted";
/// `MZ_ZIP_UNSUPPORTED_MULTIDISK`.
pub const UNSUPPORTED_MULTIDISK: &str = "unsupported multidisk archive";
/// `MZ_ZIP_TOO_MANY_FILES`.
pub const TOO_MANY_FILES: &str = "too many files";
/// `MZ_ZIP_UNSUPPORTED_CDIR_SIZE`.
pub const UNSUPPORTED_CDIR_SIZE: &str = "unsupported central directory size";
/// `MZ_ZIP_UNSUPPORTED_ENCRYPTION`.
pub const UNSUPPORTED_ENCRYPTION: &str = "unsupported encryption";
/// `MZ_ZIP_FILE_NOT_FOUND`.
pub const FILE_NOT_FOUND: &str = "file not found";
/// `MZ_ZIP_CRC_CHECK_FAILED`.
pub const CRC_CHECK_FAILED: &str = "CRC-32 check failed";
/// `MZ_ZIP_DECOMPRESSION_FAILED`.
pub const DECOMPRESSION_FAILED: &str = "decompression failed or archive is corrupted";
/// `MZ_ZIP_FILE_READ_FAILED`.
pub const FILE_READ_FAILED: &str = "file read failed";
/// `MZ_ZIP_UNEXPECTED_DECOMPRESSED_SIZE`.
pub const UNEXPECTED_DECOMPRESSED_SIZE: &str = "unexpected decompressed size";
/// `MZ_ZIP_UNSUPPORTED_METHOD`.
pub const UNSUPPORTED_METHOD: &str = "unsupported method";

/// What `PyTorchStreamReader::valid` appends to a miniz error.
const MINIZ_HINT: &str = ". This is an internal miniz error. If you are seeing this error, there \
    is a high likelihood that your checkpoint file is corrupted. This can happen if the \
    checkpoint was not saved properly, was transferred incorrectly, or the file was modified \
    after saving.";

/// `PyTorchStreamReader::valid(what, info)`'s message for miniz error `err`.
pub fn failed(what: &str, info: &str, err: &str) -> String {
    format!("PytorchStreamReader failed {what}{info}: {err}{MINIZ_HINT}")
}

const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD_SIZE: usize = 22;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
const ZIP64_LOCATOR_SIZE: usize = 20;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const ZIP64_EOCD_SIZE: usize = 56;
const CDH_SIG: u32 = 0x0201_4b50;
const CDH_SIZE: usize = 46;
const LOCAL_HEADER_SIZE: u64 = 30;
const ZIP64_EXTRA_ID: u16 = 0x0001;

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The central directory as miniz reads it.
#[derive(Debug)]
pub struct CentralDirectory {
    /// Where the directory starts (the archive is at offset 0).
    pub offset: u64,
    /// Each entry's raw name, in directory order.
    names: Vec<Vec<u8>>,
    /// Each entry's central directory header (46 bytes) and extra field.
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// Entry indices sorted as `mz_zip_reader_sort_central_dir_offsets_by_filename` leaves them.
    sorted: Vec<u32>,
}

/// `mz_zip_reader_locate_header_sig`: the last end-of-central-directory
/// signature with a whole record after it, searched from the end back to
/// 64 KiB plus a record.
fn locate_eocd(bytes: &[u8]) -> Option<usize> {
    let size = bytes.len();
    let mut cur = size.saturating_sub(4096);
    loop {
        let n = (size - cur).min(4096);
        let window = &bytes[cur..cur + n];
        let mut i = n as isize - 4;
        while i >= 0 {
            let at = i as usize;
            if le32(window, at) == EOCD_SIG && size - (cur + at) >= EOCD_SIZE {
                return Some(cur + at);
            }
            i -= 1;
        }
        if cur == 0 || size - cur >= u16::MAX as usize + EOCD_SIZE {
            return None;
        }
        cur = cur.saturating_sub(4096 - 3);
    }
}

impl CentralDirectory {
    /// `mz_zip_reader_init` then `mz_zip_reader_read_central_dir`; the
    /// error is miniz's.
    pub fn read(bytes: &[u8]) -> Result<CentralDirectory, &'static str> {
        let size = bytes.len() as u64;
        if bytes.len() < EOCD_SIZE {
            return Err(NOT_AN_ARCHIVE);
        }
        let (eocd, zip64) = end_records(bytes, size)?;
        let span = DirSpan::read(eocd, zip64, size)?;
        // Bounded: `total_files * 46 <= cdir_size <= size`.
        let dir = &bytes[span.ofs as usize..(span.ofs + span.size) as usize];
        let mut names = Vec::with_capacity(span.total_files as usize);
        let mut headers = Vec::with_capacity(span.total_files as usize);
        let mut p = 0usize;
        for _ in 0..span.total_files {
            let n = dir.len() - p;
            if n < CDH_SIZE || le32(dir, p) != CDH_SIG {
                return Err(INVALID_HEADER);
            }
            let h = &dir[p..];
            let (name_len, extra_len, total) = check_header(h, n, span.num_this_disk, size)?;
            names.push(h[CDH_SIZE..CDH_SIZE + name_len].to_vec());
            headers.push((
                h[..CDH_SIZE].to_vec(),
                h[CDH_SIZE + name_len..CDH_SIZE + name_len + extra_len].to_vec(),
            ));
            p += total;
        }
        let mut sorted: Vec<u32> = (0..names.len() as u32).collect();
        heap_sort(&mut sorted, &names);
        Ok(CentralDirectory {
            offset: span.ofs,
            names,
            headers,
            sorted,
        })
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Entry `i`'s raw name.
    pub fn name(&self, i: usize) -> &[u8] {
        &self.names[i]
    }

    /// `mz_zip_locate_file_binary_search`: the index of the entry named
    /// `name`, compared ASCII-case-insensitively.
    pub fn locate(&self, name: &[u8]) -> Option<usize> {
        let (mut l, mut h) = (0i64, self.sorted.len() as i64 - 1);
        while l <= h {
            let m = l + ((h - l) >> 1);
            let index = self.sorted[m as usize] as usize;
            match compare(&self.names[index], name) {
                std::cmp::Ordering::Equal => return Some(index),
                std::cmp::Ordering::Less => l = m + 1,
                std::cmp::Ordering::Greater => h = m - 1,
            }
        }
        None
    }
}

/// The zip64 end-of-central-directory locator and record.
type Zip64Records<'a> = (&'a [u8], &'a [u8]);

/// The end-of-central-directory record, and the zip64 locator and record
/// when the locator is there and points at a record with its signature.
fn end_records(bytes: &[u8], size: u64) -> Result<(&[u8], Option<Zip64Records<'_>>), &'static str> {
    let eocd_at = locate_eocd(bytes).ok_or(FAILED_FINDING_CENTRAL_DIR)?;
    let eocd = &bytes[eocd_at..eocd_at + EOCD_SIZE];
    let mut zip64: Option<Zip64Records<'_>> = None;
    if eocd_at >= ZIP64_LOCATOR_SIZE + ZIP64_EOCD_SIZE {
        let locator = &bytes[eocd_at - ZIP64_LOCATOR_SIZE..eocd_at];
        if le32(locator, 0) == ZIP64_LOCATOR_SIG {
            let at = le64(locator, 8);
            if at > size - ZIP64_EOCD_SIZE as u64 {
                return Err(NOT_AN_ARCHIVE);
            }
            let record = &bytes[at as usize..at as usize + ZIP64_EOCD_SIZE];
            if le32(record, 0) == ZIP64_EOCD_SIG {
                zip64 = Some((locator, record));
            }
        }
    }
    Ok((eocd, zip64))
}

/// Where the central directory is and how many entries it holds, as the
/// end records give them.
struct DirSpan {
    total_files: u64,
    num_this_disk: u32,
    size: u64,
    ofs: u64,
}

impl DirSpan {
    /// The counts of the end-of-central-directory record (the zip64 one's
    /// when there is one), checked as `mz_zip_reader_read_central_dir`
    /// checks them before it reads a header.
    fn read(
        eocd: &[u8],
        zip64: Option<Zip64Records<'_>>,
        size: u64,
    ) -> Result<DirSpan, &'static str> {
        let mut total_files = u64::from(le16(eocd, 10));
        let mut on_this_disk = u64::from(le16(eocd, 8));
        let mut num_this_disk = u32::from(le16(eocd, 4));
        let mut cdir_disk = u32::from(le16(eocd, 6));
        let mut cdir_size = u64::from(le32(eocd, 12));
        let mut cdir_ofs = u64::from(le32(eocd, 16));
        if let Some((locator, record)) = zip64 {
            if le64(record, 4) < (ZIP64_EOCD_SIZE - 12) as u64 {
                return Err(INVALID_HEADER);
            }
            if le32(locator, 16) != 1 {
                return Err(UNSUPPORTED_MULTIDISK);
            }
            total_files = le64(record, 32);
            on_this_disk = le64(record, 24);
            if total_files > u64::from(u32::MAX) || on_this_disk > u64::from(u32::MAX) {
                return Err(TOO_MANY_FILES);
            }
            cdir_size = le64(record, 40);
            if cdir_size > u64::from(u32::MAX) {
                return Err(UNSUPPORTED_CDIR_SIZE);
            }
            num_this_disk = le32(record, 16);
            cdir_disk = le32(record, 20);
            cdir_ofs = le64(record, 48);
        }
        if total_files != on_this_disk {
            return Err(UNSUPPORTED_MULTIDISK);
        }
        if (num_this_disk | cdir_disk) != 0 && (num_this_disk != 1 || cdir_disk != 1) {
            return Err(UNSUPPORTED_MULTIDISK);
        }
        if cdir_size < total_files * CDH_SIZE as u64 {
            return Err(INVALID_HEADER);
        }
        match cdir_ofs.checked_add(cdir_size) {
            Some(end) if end <= size => {}
            _ => return Err(INVALID_HEADER),
        }
        Ok(DirSpan {
            total_files,
            num_this_disk,
            size: cdir_size,
            ofs: cdir_ofs,
        })
    }
}

/// miniz's checks of one central directory header `h` (`n` bytes left in
/// the directory): its name, extra and comment lengths and its whole size.
fn check_header(
    h: &[u8],
    n: usize,
    num_this_disk: u32,
    size: u64,
) -> Result<(usize, usize, usize), &'static str> {
    let comp = le32(h, 20);
    let decomp = le32(h, 24);
    let name_len = usize::from(le16(h, 28));
    let extra_len = usize::from(le16(h, 30));
    let comment_len = usize::from(le16(h, 32));
    let local_ofs = le32(h, 42);
    if extra_len > 0 && comp.max(decomp).max(local_ofs) == u32::MAX {
        // The walk over the extra fields only checks their lengths
        // (miniz reads the zip64 sizes when the entry is used).
        let extra_at = CDH_SIZE + name_len;
        if extra_at + extra_len > n {
            return Err(INVALID_HEADER);
        }
        check_extra(&h[extra_at..extra_at + extra_len])?;
    }
    if comp != u32::MAX && decomp != u32::MAX {
        // miniz reads 32 bits at the method's offset (method and
        // modification time), so a stored entry passes this check
        // with any sizes unless its time is also zero.
        if (le32(h, 10) == 0 && decomp != comp) || (decomp != 0 && comp == 0) {
            return Err(INVALID_HEADER);
        }
    }
    let disk = u32::from(le16(h, 34));
    if disk == u32::from(u16::MAX) || (disk != num_this_disk && disk != 1) {
        return Err(UNSUPPORTED_MULTIDISK);
    }
    if comp != u32::MAX && u64::from(local_ofs) + LOCAL_HEADER_SIZE + u64::from(comp) > size {
        return Err(INVALID_HEADER);
    }
    if le16(h, 8) & 0x2000 != 0 {
        return Err(UNSUPPORTED_ENCRYPTION);
    }
    let total = CDH_SIZE + name_len + extra_len + comment_len;
    if total > n {
        return Err(INVALID_HEADER);
    }
    Ok((name_len, extra_len, total))
}

/// The lengths of the extra fields, up to the zip64 one.
fn check_extra(mut extra: &[u8]) -> Result<(), &'static str> {
    while !extra.is_empty() {
        if extra.len() < 4 {
            return Err(INVALID_HEADER);
        }
        let id = le16(extra, 0);
        let len = usize::from(le16(extra, 2));
        if len + 4 > extra.len() {
            return Err(INVALID_HEADER);
        }
        if id == ZIP64_EXTRA_ID {
            break;
        }
        extra = &extra[4 + len..];
    }
    Ok(())
}

/// An entry as `mz_zip_reader_file_stat` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Compression method (0 stored, 8 deflated).
    pub method: u16,
    /// General purpose bit flags.
    pub flags: u16,
    /// The CRC-32 of the uncompressed bytes.
    pub crc32: u32,
    /// Bytes in the archive.
    pub comp_size: u64,
    /// Bytes once decompressed: `get_record_size`.
    pub uncomp_size: u64,
    /// Where its local header is.
    pub local_header_ofs: u64,
    /// `mz_zip_reader_is_file_a_directory`.
    pub is_directory: bool,
}

impl CentralDirectory {
    /// `mz_zip_file_stat_internal`: the sizes and offset, from the zip64
    /// extended information field where the header has all ones.
    pub fn stat(&self, i: usize) -> Result<Stat, &'static str> {
        let (h, extra) = &self.headers[i];
        let mut stat = Stat {
            method: le16(h, 10),
            flags: le16(h, 8),
            crc32: le32(h, 16),
            comp_size: u64::from(le32(h, 20)),
            uncomp_size: u64::from(le32(h, 24)),
            local_header_ofs: u64::from(le32(h, 42)),
            is_directory: self.names[i].last() == Some(&b'/') || le32(h, 38) & 0x10 != 0,
        };
        let max = u64::from(u32::MAX);
        if stat
            .comp_size
            .max(stat.uncomp_size)
            .max(stat.local_header_ofs)
            == max
        {
            let mut rest: &[u8] = extra;
            while rest.len() >= 4 {
                let id = le16(rest, 0);
                let len = usize::from(le16(rest, 2));
                if len + 4 > rest.len() {
                    return Err(INVALID_HEADER);
                }
                if id == ZIP64_EXTRA_ID {
                    let mut field = &rest[4..4 + len];
                    for (value, wide) in [
                        (&mut stat.uncomp_size, true),
                        (&mut stat.comp_size, true),
                        (&mut stat.local_header_ofs, true),
                    ] {
                        if *value == max && wide {
                            if field.len() < 8 {
                                return Err(INVALID_HEADER);
                            }
                            *value = le64(field, 0);
                            field = &field[8..];
                        }
                    }
                    break;
                }
                rest = &rest[4 + len..];
            }
        }
        Ok(stat)
    }

    /// Where entry `i`'s data starts, past its local header, and its stat:
    /// the local header checks of `mz_zip_reader_extract_to_mem_no_alloc`.
    pub fn data_start(&self, bytes: &[u8], i: usize) -> Result<(u64, Stat), &'static str> {
        let stat = self.stat(i)?;
        let at = stat.local_header_ofs;
        let header = usize::try_from(at)
            .ok()
            .and_then(|a| bytes.get(a..a.checked_add(LOCAL_HEADER_SIZE as usize)?))
            .ok_or(FILE_READ_FAILED)?;
        if le32(header, 0) != 0x0403_4b50 {
            return Err(INVALID_HEADER);
        }
        let start =
            at + LOCAL_HEADER_SIZE + u64::from(le16(header, 26)) + u64::from(le16(header, 28));
        match start.checked_add(stat.comp_size) {
            Some(end) if end <= bytes.len() as u64 => Ok((start, stat)),
            _ => Err(INVALID_HEADER),
        }
    }

    /// `mz_zip_reader_extract_to_mem`: entry `i` decompressed and its CRC
    /// checked; `limit` bounds what is inflated, whatever the header says
    /// (`Ok(None)` past it).
    pub fn extract(
        &self,
        bytes: &[u8],
        i: usize,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, &'static str> {
        Ok(self
            .extract_in_place(bytes, i, limit)?
            .map(std::borrow::Cow::into_owned))
    }

    /// [`Self::extract`], a stored entry borrowed from `bytes` (same
    /// checks, CRC included), a deflated one decompressed.
    pub fn extract_in_place<'b>(
        &self,
        bytes: &'b [u8],
        i: usize,
        limit: u64,
    ) -> Result<Option<std::borrow::Cow<'b, [u8]>>, &'static str> {
        use std::borrow::Cow;
        let stat = self.stat(i)?;
        if stat.uncomp_size > limit {
            return Ok(None);
        }
        if stat.is_directory || stat.comp_size == 0 {
            // miniz returns the buffer untouched; a directory's declared
            // size is allocated but never written, which is not modelled.
            return Ok(Some(Cow::Borrowed(&[])));
        }
        if stat.flags & (0x1 | 0x40 | 0x20) != 0 {
            return Err(UNSUPPORTED_ENCRYPTION);
        }
        if stat.method != 0 && stat.method != 8 {
            return Err(UNSUPPORTED_METHOD);
        }
        let (start, _) = self.data_start(bytes, i)?;
        let start = start as usize;
        let out = if stat.method == 0 {
            // A stored entry is read at its uncompressed size.
            let end = start
                .checked_add(stat.uncomp_size as usize)
                .ok_or(FILE_READ_FAILED)?;
            Cow::Borrowed(bytes.get(start..end).ok_or(FILE_READ_FAILED)?)
        } else {
            let input = &bytes[start..start + stat.comp_size as usize];
            let mut out = Vec::with_capacity(stat.uncomp_size.min(1 << 20) as usize);
            let mut inflate = flate2::read::DeflateDecoder::new(input);
            std::io::Read::read_to_end(
                &mut std::io::Read::take(&mut inflate, stat.uncomp_size + 1),
                &mut out,
            )
            .map_err(|_| DECOMPRESSION_FAILED)?;
            if out.len() as u64 != stat.uncomp_size {
                return Err(if (out.len() as u64) < stat.uncomp_size {
                    DECOMPRESSION_FAILED
                } else {
                    UNEXPECTED_DECOMPRESSED_SIZE
                });
            }
            Cow::Owned(out)
        };
        if crc32fast::hash(&out) != stat.crc32 {
            return Err(CRC_CHECK_FAILED);
        }
        Ok(Some(out))
    }
}

/// `mz_zip_filename_compare` / `mz_zip_reader_filename_less`: bytewise
/// after ASCII lowercasing, a prefix before the longer name.
fn compare(l: &[u8], r: &[u8]) -> std::cmp::Ordering {
    let n = l.len().min(r.len());
    for i in 0..n {
        let (a, b) = (l[i].to_ascii_lowercase(), r[i].to_ascii_lowercase());
        if a != b {
            return a.cmp(&b);
        }
    }
    l.len().cmp(&r.len())
}

/// `mz_zip_reader_sort_central_dir_offsets_by_filename`, step for step (a
/// heap sort is not stable: the order of equal names is its own).
fn heap_sort(idx: &mut [u32], names: &[Vec<u8>]) {
    let size = idx.len();
    if size <= 1 {
        return;
    }
    let less = |idx: &[u32], a: usize, b: usize| {
        compare(&names[idx[a] as usize], &names[idx[b] as usize]) == std::cmp::Ordering::Less
    };
    let sift = |idx: &mut [u32], mut root: usize, end: usize| loop {
        let mut child = (root << 1) + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && less(idx, child, child + 1) {
            child += 1;
        }
        if !less(idx, root, child) {
            break;
        }
        idx.swap(root, child);
        root = child;
    };
    let mut start = (size - 2) >> 1;
    loop {
        sift(idx, start, size);
        if start == 0 {
            break;
        }
        start -= 1;
    }
    let mut end = size - 1;
    while end > 0 {
        idx.swap(end, 0);
        sift(idx, 0, end);
        end -= 1;
    }
}

/// `caffe2::stoull` as `PyTorchStreamReader::init` parses the version
/// record: `std::stoull`'s leading blanks, optional `+`, decimal digits.
pub fn parse_version(text: &[u8]) -> Option<u64> {
    let s = text
        .iter()
        .position(|b| !b" \t\n\x0b\x0c\r".contains(b))
        .map_or(&text[text.len()..], |i| &text[i..]);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    std::str::from_utf8(&s[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_lookup_is_case_insensitive() {
        let names: Vec<Vec<u8>> = ["a/B", "a/a", "a/c"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let mut sorted: Vec<u32> = (0..3).collect();
        heap_sort(&mut sorted, &names);
        let headers = vec![(vec![0; CDH_SIZE], Vec::new()); 3];
        let cd = CentralDirectory {
            offset: 0,
            names,
            headers,
            sorted,
        };
        assert_eq!(cd.locate(b"A/b"), Some(0));
        assert_eq!(cd.locate(b"a/c"), Some(2));
        assert_eq!(cd.locate(b"a/d"), None);
    }

    #[test]
    fn versions_parse_as_stoull() {
        assert_eq!(parse_version(b"1\n"), Some(1));
        assert_eq!(parse_version(b" +3x"), Some(3));
        assert_eq!(parse_version(b"abc"), None);
        assert_eq!(parse_version(b""), None);
    }
}
