//! `data/sample_inputs/model.pt`: the example inputs `torch.export.save`
//! stores beside the program (`torch.save((args, kwargs))`, a zip with a
//! pickle and one entry per storage), read with the bounded
//! [`pickle`](crate::pickle) reader into probe-format VALUEs
//! (`shared/probe-format.md`): tuples, lists, dicts, scalars and tensors
//! with their data, as `oracle/zoo.py`'s `encode_value` writes them.
//!
//! ```no_run
//! let bytes = std::fs::read("corpus/programs/mlp-dynamic.pt2").unwrap();
//! let (args, kwargs) = torchspec_export::sample_inputs::read(&bytes, None).unwrap().unwrap();
//! assert!(args.get("tuple").is_some() && kwargs.get("dict").is_some());
//! ```

use std::io::Read;

use torchspec_pyval::pyjson::PyJson as Json;

use crate::archive::Pt2Archive;
use crate::pickle::{loads, Pickled};
use crate::weights::Dtype;
use torchspec_pyval::{Error, Result};

/// The most an entry of `model.pt` may inflate to, relative to its size.
const INFLATE_LIMIT: u64 = 64;

/// The sample inputs of the archive `bytes` (of `model`, `model` when
/// `None`, as `torch.export.load` reads `models/model.json`) as probe VALUEs `(args, kwargs)`; `None` when it has none.
pub fn read(bytes: &[u8], model: Option<&str>) -> Result<Option<(Json, Json)>> {
    let mut archive = Pt2Archive::over(bytes)?;
    let model = match model {
        Some(m) => m.to_string(),
        None => "model".to_string(),
    };
    let name = format!("data/sample_inputs/{model}.pt");
    let Some(pt) = archive.read_entry_if_present(&name)? else {
        return Ok(None);
    };
    let value = decode_torch_save(&pt).map_err(|e| e.in_entry(&name))?;
    match value.get("tuple") {
        Some(Json::List(pair)) if pair.len() == 2 => Ok(Some((pair[0].clone(), pair[1].clone()))),
        _ => Err(Error::new("sample inputs are not an (args, kwargs) pair").in_entry(&name)),
    }
}

/// A `torch.save` zip: its pickle, with every tensor read from its storage.
pub fn decode_torch_save(pt: &[u8]) -> Result<Json> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(pt))
        .map_err(|e| Error::new(format!("not a torch.save zip: {e}")))?;
    let pkl = (0..zip.len())
        .filter_map(|i| zip.name_for_index(i).map(str::to_string))
        .find(|n| n.ends_with("/data.pkl") && n.matches('/').count() == 1)
        .ok_or_else(|| Error::new("a torch.save zip without `<name>/data.pkl`"))?;
    let prefix = pkl.trim_end_matches("data.pkl").to_string();
    let limit = (pt.len() as u64).saturating_mul(INFLATE_LIMIT);
    let mut read_entry = |name: &str| -> Result<Vec<u8>> {
        let entry = zip
            .by_name(name)
            .map_err(|e| Error::new(format!("no entry `{name}`: {e}")))?;
        let mut out = Vec::new();
        entry
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| Error::new(format!("cannot read `{name}`: {e}")))?;
        if out.len() as u64 > limit {
            return Err(Error::new(format!("`{name}` inflates past {limit} bytes")));
        }
        Ok(out)
    };
    let value = loads(&read_entry(&pkl)?).map_err(|e| e.in_entry(&pkl))?;
    to_value(
        &value,
        &mut |key| read_entry(&format!("{prefix}data/{key}")),
        0,
    )
}

/// A pickled value as a probe VALUE (`storage(key)` reads a storage's bytes).
fn to_value(
    v: &Pickled,
    storage: &mut dyn FnMut(&str) -> Result<Vec<u8>>,
    depth: usize,
) -> Result<Json> {
    if depth > 100 {
        return Err(Error::new("sample inputs nested too deeply"));
    }
    let mut all = |items: &[Pickled]| -> Result<Vec<Json>> {
        items
            .iter()
            .map(|x| to_value(x, storage, depth + 1))
            .collect()
    };
    Ok(match v {
        Pickled::None => Json::Null,
        Pickled::Bool(b) => Json::Bool(*b),
        Pickled::Int(i) => Json::from(*i),
        Pickled::Float(f) => finite(*f)?,
        Pickled::Str(s) => Json::Str(s.clone()),
        Pickled::List(items) => Json::List(all(items)?),
        Pickled::Tuple(items) => Json::object([("tuple", Json::List(all(items)?))]),
        Pickled::Dict(items) => {
            let mut pairs = Vec::new();
            for (k, x) in items {
                pairs.push(Json::List(vec![
                    to_value(k, storage, depth + 1)?,
                    to_value(x, storage, depth + 1)?,
                ]));
            }
            Json::object([("dict", Json::List(pairs))])
        }
        Pickled::Call(f, args) => match f.as_ref() {
            Pickled::Global(m, n)
                if m == "collections" && n == "OrderedDict" && args.is_empty() =>
            {
                Json::object([("dict", Json::List(Vec::new()))])
            }
            Pickled::Global(m, n) if m == "torch._utils" && n == "_rebuild_tensor_v2" => {
                rebuild_tensor(args, storage)?
            }
            // `_rebuild_from_type_v2(func, torch.Tensor, args, state)`: a plain
            // tensor with Python state (export's `_specialize_on` marks).
            Pickled::Global(m, n) if m == "torch._tensor" && n == "_rebuild_from_type_v2" => {
                match args.as_slice() {
                    [func, Pickled::Global(tm, tn), Pickled::Tuple(inner), _state]
                        if tm == "torch" && tn == "Tensor" =>
                    {
                        let call = Pickled::Call(Box::new(func.clone()), inner.clone());
                        to_value(&call, storage, depth + 1)?
                    }
                    _ => return Err(Error::new("a tensor subclass in the sample inputs")),
                }
            }
            other => {
                return Err(Error::new(format!(
                    "sample inputs call {other:?}, not a tensor"
                )))
            }
        },
        other => {
            return Err(Error::new(format!(
                "a sample input of no probe form: {other:?}"
            )))
        }
    })
}

fn finite(f: f64) -> Result<Json> {
    if f.is_finite() {
        Ok(Json::Float(f))
    } else {
        Err(Error::new(format!(
            "a non-finite float ({f}) has no JSON form"
        )))
    }
}

fn int_of(v: &Pickled) -> Result<i64> {
    match v {
        Pickled::Int(i) => Ok(*i),
        other => Err(Error::new(format!("expected an integer, got {other:?}"))),
    }
}

fn ints(v: &Pickled) -> Result<Vec<i64>> {
    match v {
        Pickled::Tuple(items) => items.iter().map(int_of).collect(),
        other => Err(Error::new(format!(
            "expected a tuple of integers, got {other:?}"
        ))),
    }
}

/// `_rebuild_tensor_v2(storage, storage_offset, size, stride, ...)`.
fn rebuild_tensor(
    args: &[Pickled],
    storage: &mut dyn FnMut(&str) -> Result<Vec<u8>>,
) -> Result<Json> {
    let [pid, offset, size, stride, ..] = args else {
        return Err(Error::new("_rebuild_tensor_v2 with too few arguments"));
    };
    let Pickled::PersistentId(rec) = pid else {
        return Err(Error::new("a tensor whose storage is not a persistent id"));
    };
    let Pickled::Tuple(rec) = rec.as_ref() else {
        return Err(Error::new("a storage record that is not a tuple"));
    };
    let (Some(Pickled::Global(_, kind)), Some(Pickled::Str(key))) = (rec.get(1), rec.get(2)) else {
        return Err(Error::new("a storage record without its type and key"));
    };
    let dtype = storage_dtype(kind)?;
    let (offset, size, stride) = (int_of(offset)?, ints(size)?, ints(stride)?);
    if size.len() != stride.len() || size.iter().chain(&stride).any(|&d| d < 0) || offset < 0 {
        return Err(Error::new(
            "a tensor with negative or mismatched sizes and strides",
        ));
    }
    let bytes = storage(key)?;
    let elems = elements(&bytes, dtype, offset as u64, &size, &stride)?;
    let mut t = vec![
        ("shape", Json::from(size.clone())),
        ("dtype", dtype.name().trim_start_matches("torch.").into()),
    ];
    if elems.iter().any(|e| !e.is_zero()) {
        t.push(("data", nest(&elems, &size)?));
    }
    Ok(Json::object([("tensor", Json::object(t))]))
}

/// An element read from a storage.
#[derive(Clone, Copy, Debug)]
enum Elem {
    F(f64),
    I(i64),
    B(bool),
    /// A complex number: only whether it is zero (JSON has no complex).
    C(bool),
}

impl Elem {
    fn is_zero(&self) -> bool {
        match *self {
            Elem::F(f) => f == 0.0,
            Elem::I(i) => i == 0,
            Elem::B(b) => !b,
            Elem::C(zero) => zero,
        }
    }
    fn json(&self) -> Result<Json> {
        match *self {
            Elem::F(f) => finite(f),
            Elem::I(i) => Ok(Json::from(i)),
            Elem::B(b) => Ok(Json::Bool(b)),
            Elem::C(_) => Err(Error::new(
                "complex sample tensors must be zeros (JSON has no complex)",
            )),
        }
    }
}

/// The dtype of a typed storage `torch.save` names (`torch.FloatStorage`).
fn storage_dtype(kind: &str) -> Result<Dtype> {
    Ok(match kind {
        "FloatStorage" => Dtype::Float32,
        "DoubleStorage" => Dtype::Float64,
        "HalfStorage" => Dtype::Float16,
        "BFloat16Storage" => Dtype::BFloat16,
        "LongStorage" => Dtype::Int64,
        "IntStorage" => Dtype::Int32,
        "ShortStorage" => Dtype::Int16,
        "CharStorage" => Dtype::Int8,
        "ByteStorage" => Dtype::UInt8,
        "BoolStorage" => Dtype::Bool,
        "ComplexFloatStorage" => Dtype::Complex64,
        "ComplexDoubleStorage" => Dtype::Complex128,
        other => return Err(Error::new(format!("a sample input in a {other}"))),
    })
}

/// One element of `dtype` at the start of `b` (`b` holds at least
/// `dtype.itemsize()` bytes; only the storages of [`storage_dtype`] occur).
fn read_elem(dtype: Dtype, b: &[u8]) -> Elem {
    let le = |n: usize| {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(a)
    };
    match dtype {
        Dtype::Float32 => Elem::F(f32::from_bits(le(4) as u32) as f64),
        Dtype::Float64 => Elem::F(f64::from_bits(le(8))),
        Dtype::Float16 => Elem::F(f16_to_f32(le(2) as u16) as f64),
        Dtype::BFloat16 => Elem::F(f32::from_bits((le(2) as u32) << 16) as f64),
        Dtype::Int64 => Elem::I(le(8) as i64),
        Dtype::Int32 => Elem::I(le(4) as u32 as i32 as i64),
        Dtype::Int16 => Elem::I(le(2) as u16 as i16 as i64),
        Dtype::Int8 => Elem::I(b[0] as i8 as i64),
        Dtype::Bool => Elem::B(b[0] != 0),
        // Complex: only whether both parts are zero (±0.0).
        Dtype::Complex64 => Elem::C(le(8) & 0x7fff_ffff_7fff_ffff == 0),
        Dtype::Complex128 => Elem::C(
            b[..16]
                .iter()
                .enumerate()
                .all(|(i, &x)| x == 0 || (x == 0x80 && (i == 7 || i == 15))),
        ),
        Dtype::UInt8 => Elem::I(b[0] as i64),
        // No typed storage of `storage_dtype` has another dtype.
        _ => Elem::I(0),
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: normalize.
            let shift = f.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((f << shift) & 0x3ff) << 13)
        }
        (31, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 112) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

/// The elements of a strided view, in row-major order, bounds-checked
/// against the storage (the element count is bounded by the storage: a
/// view with more elements than bytes is a repeat the caller would not see).
fn elements(
    bytes: &[u8],
    dtype: Dtype,
    offset: u64,
    size: &[i64],
    stride: &[i64],
) -> Result<Vec<Elem>> {
    let numel = size
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .filter(|&n| n <= bytes.len() as u64 * 8 + 64)
        .ok_or_else(|| Error::new("a sample tensor with more elements than its storage allows"))?;
    let w = dtype.itemsize() as u64;
    let mut out = Vec::with_capacity(numel as usize);
    let mut index = vec![0i64; size.len()];
    for _ in 0..numel {
        let at = index
            .iter()
            .zip(stride)
            .try_fold(offset, |a, (&i, &s)| {
                a.checked_add((i as u64).checked_mul(s as u64)?)
            })
            .and_then(|e| e.checked_mul(w))
            .filter(|&b| b + w <= bytes.len() as u64)
            .ok_or_else(|| Error::new("a sample tensor reads past its storage"))?;
        out.push(read_elem(dtype, &bytes[at as usize..]));
        for d in (0..size.len()).rev() {
            index[d] += 1;
            if index[d] < size[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(out)
}

/// Row-major elements as nested lists of `size` (`tensor.tolist()`).
fn nest(elems: &[Elem], size: &[i64]) -> Result<Json> {
    match size.split_first() {
        None => elems.first().map_or(Ok(Json::Null), Elem::json),
        Some((&n, rest)) => {
            let chunk = rest.iter().product::<i64>().max(0) as usize;
            let mut out = Vec::with_capacity(n as usize);
            for k in 0..n as usize {
                let part = elems.get(k * chunk..(k + 1) * chunk).unwrap_or(&[]);
                out.push(nest(part, rest)?);
            }
            Ok(Json::List(out))
        }
    }
}
