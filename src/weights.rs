//! `torchspec weights`: the tensors of an exported program as lines
//! (`docs/weights-format.md`: what `oracle/weights.py --sha256` prints
//! from `torch.export.load(p).state_dict` and `.constants`) and as a
//! safetensors file (what `safetensors.torch.load_file` reads back equal;
//! the writer is the reader crate's, behind its `safetensors` feature).

use serde_json::{json, Value as Json};

use crate::error::Result;
use crate::export::weights::TensorView;
use crate::export::ExportedProgram;

/// The sha256 of the bytes of `t.contiguous()`, in lowercase hex, hashed
/// chunk by chunk from the archive (no copy of the tensor).
pub fn contiguous_sha256(t: &TensorView<'_>) -> Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    t.for_each_chunk(|c| hasher.update(c))?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// One line of `docs/weights-format.md`: kind, name, dtype, shape,
/// stride, storage offset, and the sha256 of `t.contiguous()` when
/// `sha256` is set.
pub fn tensor_line(t: &TensorView<'_>, sha256: bool) -> Result<Json> {
    let mut line = json!({
        "kind": t.section().name(),
        "name": t.name(),
        "dtype": t.dtype().name(),
        "shape": t.shape(),
        "stride": t.stride(),
        "storage_offset": t.storage_offset(),
    });
    if sha256 {
        line["sha256"] = Json::String(contiguous_sha256(t)?);
    }
    Ok(line)
}

/// The lines of every tensor of `ep`: `ep.state_dict`, then `ep.constants`.
pub fn lines(ep: &ExportedProgram, sha256: bool) -> Result<Vec<Json>> {
    let tensors = ep.tensors()?;
    tensors.iter().map(|t| tensor_line(t, sha256)).collect()
}

pub use crate::export::safetensors::{safetensors_dtype, write_safetensors};
