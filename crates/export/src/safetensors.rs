//! Writes `ep.state_dict` and `ep.constants` as one safetensors file, as
//! `safetensors.torch.save_file` would write the tensors
//! `torch.export.load` returns (names, dtypes, shapes, the bytes of each
//! `t.contiguous()`); behind the `safetensors` feature.
//!
//! ```
//! # fn main() -> torchspec_export::Result<()> {
//! let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
//! let out = std::env::temp_dir().join("torchspec-doc-mlp-static.safetensors");
//! let n = torchspec_export::safetensors::write_safetensors(&program.exported().tensors()?, &out)?;
//! assert_eq!(n, 4);
//! # std::fs::remove_file(out).ok();
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;
use std::path::Path;

use crate::weights::{Dtype, TensorView, Tensors};
use torchspec_pyval::{Error, Result};

/// The safetensors dtype of a torch dtype (`safetensors.torch._TYPES`);
/// `None` for the two safetensors has none for.
pub fn safetensors_dtype(d: Dtype) -> Option<::safetensors::Dtype> {
    use ::safetensors::Dtype as S;
    Some(match d {
        Dtype::Bool => S::BOOL,
        Dtype::UInt8 => S::U8,
        Dtype::Int8 => S::I8,
        Dtype::Int16 => S::I16,
        Dtype::Int32 => S::I32,
        Dtype::Int64 => S::I64,
        Dtype::UInt16 => S::U16,
        Dtype::UInt32 => S::U32,
        Dtype::UInt64 => S::U64,
        Dtype::Float16 => S::F16,
        Dtype::BFloat16 => S::BF16,
        Dtype::Float32 => S::F32,
        Dtype::Float64 => S::F64,
        Dtype::Complex64 => S::C64,
        Dtype::Float8E4M3fn => S::F8_E4M3,
        Dtype::Float8E5M2 => S::F8_E5M2,
        Dtype::Float8E4M3fnuz => S::F8_E4M3FNUZ,
        Dtype::Float8E5M2fnuz => S::F8_E5M2FNUZ,
        Dtype::Float8E8M0fnu => S::F8_E8M0,
        Dtype::Complex32 | Dtype::Complex128 => return None,
    })
}

/// A tensor as safetensors writes it: its `contiguous()` bytes, made when
/// the writer asks (one tensor at a time), borrowed from the archive when
/// the tensor is contiguous there.
struct SafeView<'t, 'a> {
    tensor: &'t TensorView<'a>,
    dtype: ::safetensors::Dtype,
    nbytes: usize,
}

impl ::safetensors::View for SafeView<'_, '_> {
    fn dtype(&self) -> ::safetensors::Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        self.tensor.shape()
    }
    fn data(&self) -> Cow<'_, [u8]> {
        // `nbytes` was checked when the view was made, so this cannot fail;
        // an empty answer would make the writer refuse the length.
        self.tensor.to_contiguous().unwrap_or(Cow::Borrowed(&[]))
    }
    fn data_len(&self) -> usize {
        self.nbytes
    }
}

/// Writes `ep.state_dict` and `ep.constants` to `path` as one safetensors
/// file, under their names; returns how many tensors it holds. A dtype
/// safetensors has no name for, or a name in both dicts, is an error and
/// nothing is written.
pub fn write_safetensors(tensors: &Tensors<'_>, path: &Path) -> Result<usize> {
    let mut views = Vec::new();
    let mut names = std::collections::HashSet::new();
    for t in tensors.iter() {
        let Some(dtype) = safetensors_dtype(t.dtype()) else {
            return Err(Error::new(format!(
                "`{}` is {}, which safetensors has no dtype for",
                t.name(),
                t.dtype()
            )));
        };
        if !names.insert(t.name()) {
            return Err(Error::new(format!(
                "`{}` is in both the state dict and the constants: a safetensors file \
                 holds each name once",
                t.name()
            )));
        }
        let nbytes = t.nbytes()?;
        views.push((
            t.name().to_string(),
            SafeView {
                tensor: t,
                dtype,
                nbytes,
            },
        ));
    }
    let n = views.len();
    ::safetensors::tensor::serialize_to_file(views, None, path)
        .map_err(|e| Error::new(format!("cannot write the safetensors file: {e}")).in_file(path))?;
    Ok(n)
}
