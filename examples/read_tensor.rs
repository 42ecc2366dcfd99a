//! Reads the tensors of an exported program (`ep.state_dict`, then
//! `ep.constants`) as views over the mapped `.pt2`, and prints each one's
//! dtype, shape, strides, storage and first elements: nothing is copied
//! but the few elements printed.
//!
//! ```sh
//! cargo run --example read_tensor -- corpus/weights/weights-shared-storage.pt2
//! ```

use std::path::PathBuf;

use torchspec::export::weights::{Dtype, TensorView};
use torchspec::export::ExportedProgram;

fn main() -> Result<(), torchspec::Error> {
    let path: PathBuf = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| "corpus/weights/weights-shared-storage.pt2".into());
    let ep = ExportedProgram::load_path(&path)?;
    for t in ep.tensors()?.iter() {
        println!(
            "{} {:<28} {} shape {:?} stride {:?} offset {} in `{}` ({} bytes){}",
            t.section().name(),
            t.name(),
            t.dtype(),
            t.shape(),
            t.stride(),
            t.storage_offset(),
            t.storage_name(),
            t.storage().len(),
            if t.is_param() { " parameter" } else { "" },
        );
        println!("    {}", first_elements(t, 6)?);
    }
    Ok(())
}

/// The first `n` elements of `t` in row-major order, for the dtypes with a
/// Rust counterpart; the rest as hex bytes.
fn first_elements(t: &TensorView<'_>, n: usize) -> Result<String, torchspec::Error> {
    let isz = t.dtype().itemsize();
    let mut bytes = Vec::new();
    t.for_each_chunk(|c| {
        let room = (n * isz).saturating_sub(bytes.len());
        bytes.extend_from_slice(&c[..c.len().min(room)]);
    })?;
    let items: Vec<String> = bytes
        .chunks_exact(isz)
        .map(|e| match t.dtype() {
            Dtype::Float32 => f32::from_le_bytes(e.try_into().unwrap_or_default()).to_string(),
            Dtype::Float64 => f64::from_le_bytes(e.try_into().unwrap_or_default()).to_string(),
            Dtype::Int64 => i64::from_le_bytes(e.try_into().unwrap_or_default()).to_string(),
            Dtype::Int32 => i32::from_le_bytes(e.try_into().unwrap_or_default()).to_string(),
            Dtype::Bool => (e[0] != 0).to_string(),
            _ => e.iter().map(|b| format!("{b:02x}")).collect(),
        })
        .collect();
    Ok(format!("[{}]", items.join(", ")))
}
