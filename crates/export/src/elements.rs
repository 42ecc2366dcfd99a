//! A tensor's elements as Rust values: [`TensorView::to_vec`] checked
//! against the tensor's dtype, and [`TensorView::values`], an iterator in
//! row-major order (what `t.flatten().tolist()` lists) that may stop
//! early. Nothing here mirrors PyTorch code; the float8 and half formats
//! decode as `torch` defines them (`c10/util/Float8_*.h`, `Half.h`,
//! `BFloat16.h`).
//!
//! ```
//! # fn main() -> torchspec_export::Result<()> {
//! let program = torchspec_export::open("../../corpus/programs/mlp-static.pt2")?;
//! let w = program.tensor("fc1.weight")?;
//! let all: Vec<f32> = w.to_vec()?;
//! assert_eq!(all.len(), w.numel());
//! // The wrong type is an error, never a panic.
//! let e = w.to_vec::<i64>().unwrap_err();
//! assert_eq!(e.kind(), torchspec_export::ErrorKind::DtypeMismatch);
//! // The first values, whatever the dtype.
//! let first: Vec<String> = w.values().take(3).map(|v| v.to_string()).collect();
//! assert_eq!(first.len(), 3);
//! # Ok(())
//! # }
//! ```

use std::fmt;

use crate::weights::{Dtype, TensorView};
use torchspec_pyval::{Error, ErrorKind, Result};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type a tensor's elements can be read as: [`TensorView::to_vec`]
/// needs the tensor's dtype to be [`Element::DTYPE`].
pub trait Element: sealed::Sealed + Copy {
    /// The dtype whose elements are this type.
    const DTYPE: Dtype;
    /// One element from its `DTYPE.itemsize()` little-endian bytes.
    fn read_le(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
            fn read_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}

element!(u8 => UInt8, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u16 => UInt16, u32 => UInt32, u64 => UInt64, f32 => Float32, f64 => Float64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: Dtype = Dtype::Bool;
    fn read_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// One element of any dtype, as [`TensorView::values`] yields it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A `torch.bool` element.
    Bool(bool),
    /// A signed integer element.
    Int(i64),
    /// An unsigned integer element.
    UInt(u64),
    /// A floating-point element (half, bfloat16 and float8 widened).
    Float(f64),
    /// A complex element: real and imaginary parts.
    Complex(f64, f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::UInt(u) => write!(f, "{u}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Complex(re, im) => write!(f, "{re}{im:+}i"),
        }
    }
}

/// IEEE half precision.
fn f16(bits: u16) -> f64 {
    small_float(u32::from(bits), 5, 10, 15, Special::Ieee)
}

/// How a small float format spells infinities and NaN.
#[derive(Clone, Copy)]
enum Special {
    /// All-ones exponent: infinity (mantissa 0) or NaN.
    Ieee,
    /// No infinity; all-ones exponent and mantissa is NaN (`e4m3fn`).
    Fn,
    /// No infinity, no negative zero; `0x80` is NaN (`fnuz`).
    Fnuz,
}

fn small_float(bits: u32, e_bits: u32, m_bits: u32, bias: i32, special: Special) -> f64 {
    let sign_bit = 1u32 << (e_bits + m_bits);
    let e_max = (1u32 << e_bits) - 1;
    let m_max = (1u32 << m_bits) - 1;
    let e = (bits >> m_bits) & e_max;
    let m = bits & m_max;
    let sign = if bits & sign_bit != 0 { -1.0 } else { 1.0 };
    match special {
        Special::Ieee if e == e_max => {
            return if m == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        Special::Fn if e == e_max && m == m_max => return f64::NAN,
        Special::Fnuz if bits == sign_bit => return f64::NAN,
        _ => {}
    }
    let frac = f64::from(m) / f64::from(1u32 << m_bits);
    let value = if e == 0 {
        frac * 2f64.powi(1 - bias)
    } else {
        (1.0 + frac) * 2f64.powi(e as i32 - bias)
    };
    sign * value
}

/// Element `bytes` (its `itemsize` bytes) of a tensor of `dtype`.
fn scalar(dtype: Dtype, b: &[u8]) -> Scalar {
    let u16le = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
    match dtype {
        Dtype::Bool => Scalar::Bool(b[0] != 0),
        Dtype::UInt8 => Scalar::UInt(u64::from(b[0])),
        Dtype::UInt16 => Scalar::UInt(u64::from(u16::read_le(b))),
        Dtype::UInt32 => Scalar::UInt(u64::from(u32::read_le(b))),
        Dtype::UInt64 => Scalar::UInt(u64::read_le(b)),
        Dtype::Int8 => Scalar::Int(i64::from(i8::read_le(b))),
        Dtype::Int16 => Scalar::Int(i64::from(i16::read_le(b))),
        Dtype::Int32 => Scalar::Int(i64::from(i32::read_le(b))),
        Dtype::Int64 => Scalar::Int(i64::read_le(b)),
        Dtype::Float16 => Scalar::Float(f16(u16le(b))),
        Dtype::BFloat16 => Scalar::Float(f64::from(f32::from_bits(u32::from(u16le(b)) << 16))),
        Dtype::Float32 => Scalar::Float(f64::from(f32::read_le(b))),
        Dtype::Float64 => Scalar::Float(f64::read_le(b)),
        Dtype::Complex32 => Scalar::Complex(f16(u16le(b)), f16(u16le(&b[2..]))),
        Dtype::Complex64 => {
            Scalar::Complex(f64::from(f32::read_le(b)), f64::from(f32::read_le(&b[4..])))
        }
        Dtype::Complex128 => Scalar::Complex(f64::read_le(b), f64::read_le(&b[8..])),
        Dtype::Float8E4M3fn => Scalar::Float(small_float(b[0].into(), 4, 3, 7, Special::Fn)),
        Dtype::Float8E5M2 => Scalar::Float(small_float(b[0].into(), 5, 2, 15, Special::Ieee)),
        Dtype::Float8E4M3fnuz => Scalar::Float(small_float(b[0].into(), 4, 3, 8, Special::Fnuz)),
        Dtype::Float8E5M2fnuz => Scalar::Float(small_float(b[0].into(), 5, 2, 16, Special::Fnuz)),
        // Exponent only: 2**(e - 127), 0xff is NaN.
        Dtype::Float8E8M0fnu => Scalar::Float(if b[0] == 0xff {
            f64::NAN
        } else {
            2f64.powi(i32::from(b[0]) - 127)
        }),
    }
}

/// The elements of a tensor in row-major order: see [`TensorView::values`].
#[derive(Clone, Debug)]
pub struct Values<'t, 'a> {
    tensor: &'t TensorView<'a>,
    /// The multi-index of the next element; `None` once past the end.
    index: Option<Vec<usize>>,
}

impl Iterator for Values<'_, '_> {
    type Item = Scalar;

    fn next(&mut self) -> Option<Scalar> {
        let t = self.tensor;
        let index = self.index.as_mut()?;
        let offset = t.storage_offset() + dot(index, t.stride());
        if !advance(index, t.shape()) {
            self.index = None;
        }
        let isz = t.dtype().itemsize();
        let zeros = [0u8; 16];
        let bytes = match t.storage_bytes() {
            // (Every element is inside the storage: checked when the view was made.)
            Some(b) => b.get(offset * isz..(offset + 1) * isz)?,
            None => &zeros[..isz],
        };
        Some(scalar(t.dtype(), bytes))
    }
}

/// The bytes of `t.contiguous()` in row-major order, in runs: see
/// [`TensorView::chunks`].
#[derive(Clone, Debug)]
pub struct Chunks<'t> {
    /// The storage's bytes (`None`: zero-filled).
    storage: Option<&'t [u8]>,
    shape: &'t [usize],
    stride: &'t [usize],
    storage_offset: usize,
    itemsize: usize,
    /// The outer dims walked element by element; the rest is one run.
    split: usize,
    /// Bytes per run.
    run: usize,
    /// The outer multi-index of the next run; `None` once past the end.
    index: Option<Vec<usize>>,
    /// Zero bytes still to yield of the current run (zero-filled storage).
    zeros_left: usize,
}

static ZEROS: [u8; 4096] = [0; 4096];

impl<'t> Iterator for Chunks<'t> {
    type Item = &'t [u8];

    fn next(&mut self) -> Option<&'t [u8]> {
        if self.zeros_left > 0 {
            let n = self.zeros_left.min(ZEROS.len());
            self.zeros_left -= n;
            return Some(&ZEROS[..n]);
        }
        let index = self.index.as_mut()?;
        let offset = self.storage_offset + dot(index, self.stride);
        // The outer dims only: the last `ndim - split` are one contiguous run.
        if !advance(index, &self.shape[..self.split]) {
            self.index = None;
        }
        match self.storage {
            // (Every element is inside the storage: checked when the view was made.)
            Some(bytes) => bytes.get(offset * self.itemsize..offset * self.itemsize + self.run),
            None => {
                self.zeros_left = self.run;
                self.next()
            }
        }
    }
}

impl<'a> TensorView<'a> {
    /// The bytes of `t.contiguous()` in row-major order, as an iterator of
    /// runs (one slice for a contiguous tensor; else each longest run of
    /// elements contiguous in the storage), borrowed from the archive: stop
    /// when you like. An error when [`TensorView::nbytes`] is.
    ///
    /// ```
    /// # fn main() -> torchspec_export::Result<()> {
    /// let program = torchspec_export::open("../../corpus/weights/weights-shared-storage.pt2")?;
    /// for t in program.tensors()? {
    ///     let n: usize = t.chunks()?.map(<[u8]>::len).sum();
    ///     assert_eq!(n, t.nbytes()?);
    ///     let first = t.chunks()?.next(); // and no further
    ///     assert_eq!(first.is_none(), n == 0);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn chunks(&self) -> Result<Chunks<'_>> {
        let total = self.nbytes()?;
        let shape = self.shape();
        let stride = self.stride();
        // The trailing dims that are row-major among themselves form one run.
        let mut inner = 1usize;
        let mut split = shape.len();
        while split > 0 {
            let d = split - 1;
            if shape[d] != 1 && stride[d] != inner {
                break;
            }
            inner *= shape[d];
            split = d;
        }
        Ok(Chunks {
            storage: self.storage_bytes(),
            shape,
            stride,
            storage_offset: self.storage_offset(),
            itemsize: self.dtype().itemsize(),
            split,
            run: inner * self.dtype().itemsize(),
            index: (total > 0).then(|| vec![0; split]),
            zeros_left: 0,
        })
    }

    /// The elements in row-major order (what `t.flatten().tolist()`
    /// lists), each widened to a [`Scalar`]; read one at a time from the
    /// archive, so `.take(n)` reads `n`.
    pub fn values(&self) -> Values<'_, 'a> {
        Values {
            tensor: self,
            index: (self.numel() > 0).then(|| vec![0; self.shape().len()]),
        }
    }

    /// The elements as a `Vec<T>` in row-major order; an error of kind
    /// [`ErrorKind::DtypeMismatch`] when the tensor's dtype is not
    /// `T::DTYPE` (no conversion is made).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if self.dtype() != T::DTYPE {
            return Err(Error::new(format!(
                "`{}` is {}, not {}",
                self.name(),
                self.dtype(),
                T::DTYPE
            ))
            .of_kind(ErrorKind::DtypeMismatch));
        }
        let isz = T::DTYPE.itemsize();
        let mut out = Vec::with_capacity(self.numel());
        self.for_each_chunk(|c| out.extend(c.chunks_exact(isz).map(T::read_le)))?;
        Ok(out)
    }
}

/// The storage offset of a multi-index: `sum(i * stride)`.
fn dot(index: &[usize], stride: &[usize]) -> usize {
    index.iter().zip(stride).map(|(i, s)| i * s).sum()
}

/// Steps `index` to the next multi-index within `shape`, last dim fastest;
/// false once it has passed the last one.
fn advance(index: &mut [usize], shape: &[usize]) -> bool {
    for d in (0..shape.len()).rev() {
        index[d] += 1;
        if index[d] < shape[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_floats_decode_as_torch_defines_them() {
        assert_eq!(f16(0x3c00), 1.0);
        assert_eq!(f16(0xc000), -2.0);
        assert_eq!(f16(0x7c00), f64::INFINITY);
        assert_eq!(f16(0x0001), 2f64.powi(-24));
        let e4m3 = |b: u8| small_float(b.into(), 4, 3, 7, Special::Fn);
        assert_eq!(e4m3(0x38), 1.0);
        assert_eq!(e4m3(0x7e), 448.0);
        assert!(e4m3(0x7f).is_nan());
        let e5m2 = |b: u8| small_float(b.into(), 5, 2, 15, Special::Ieee);
        assert_eq!(e5m2(0x3c), 1.0);
        assert_eq!(e5m2(0x7b), 57344.0);
        let fnuz = |b: u8| small_float(b.into(), 4, 3, 8, Special::Fnuz);
        assert_eq!(fnuz(0x40), 1.0);
        assert!(fnuz(0x80).is_nan());
        assert_eq!(scalar(Dtype::Float8E8M0fnu, &[127]), Scalar::Float(1.0));
        assert_eq!(scalar(Dtype::BFloat16, &[0x80, 0x3f]), Scalar::Float(1.0));
    }
}
