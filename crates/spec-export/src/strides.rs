//! `ShapeEnv._compute_symbolic_stride` for the contiguous example tensors
//! a case builds (`torch.zeros(shape)`), and the stride half of dynamo's
//! guards on a later call: `TENSOR_MATCH`'s static strides and the shape
//! guards `L['x'].stride()[i] == ...` on the symbolic ones.
//!
//! A spec's tensors get `DimDynamic.INFER_STRIDE` strides: a stride of 0
//! or 1 that is not `size[i+1] * stride[i+1]` stays that number, any other
//! one takes the expression of an inner dim whose `size * stride` has its
//! value. A size-0 inner dim therefore leaves a static stride: `[0, 0]`
//! has strides `[1, 1]`, and a later `[0, 2]` (strides `[2, 1]`) fails
//! `tensor 'x' stride mismatch at index 0. expected 1, actual 2`.

use std::collections::HashMap;

use num_bigint::BigInt;
use torchspec_pyval::{PyResult, Raise};

use crate::wiring::Size;

/// One dim's stride as the first compile made it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stride {
    /// A number, checked by `TENSOR_MATCH`.
    Static(i64),
    /// `k * prod(sizes)`: the product of some dims' sizes (static or
    /// symbolic), checked by a shape guard.
    Product(i64, Vec<Size>),
}

/// `torch.zeros(shape).stride()`: each dim's stride is the product of the
/// inner sizes, a size 0 counted as 1.
pub(crate) fn contiguous(shape: &[i64]) -> Vec<i64> {
    let mut out = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1].saturating_mul(shape[i + 1].max(1));
    }
    out
}

/// `_compute_symbolic_stride(size, ex_size, ex_stride)` with every
/// stride `INFER_STRIDE`: strides visited by value, the right-most first
/// among equal ones.
pub(crate) fn symbolic(sizes: &[Size], ex_size: &[i64]) -> PyResult<Vec<Stride>> {
    let ex_stride = contiguous(ex_size);
    let n = ex_stride.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (ex_stride[i], std::cmp::Reverse(i)));
    let mut stride: Vec<Option<Stride>> = vec![None; n];
    let mut candidates: HashMap<i64, Stride> = HashMap::new();
    let all_static = sizes.iter().all(|s| matches!(s, Size::Static(_)));
    for i in order {
        let val = ex_stride[i];
        let contiguous_stride =
            i != n - 1 && val == ex_size[i + 1].saturating_mul(ex_stride[i + 1]);
        let out = if (val == 0 || val == 1) && !contiguous_stride {
            Stride::Static(val)
        } else if let Some(c) = candidates.get(&val) {
            c.clone()
        } else if all_static {
            Stride::Static(val)
        } else {
            return Err(Raise::unsupported(
                "a stride that is no inner dim's size times stride (a duck-sized stride symbol)",
            ));
        };
        // A later dim of the same product overwrites the entry (a size-1
        // dim's stride), as the dict does.
        candidates.insert(ex_size[i].saturating_mul(val), times(&sizes[i], &out));
        stride[i] = Some(out);
    }
    Ok(stride.into_iter().flatten().collect())
}

/// `size[i] * out_stride`.
fn times(size: &Size, stride: &Stride) -> Stride {
    let (k, mut dims) = match stride {
        Stride::Static(v) => (*v, Vec::new()),
        Stride::Product(k, d) => (*k, d.clone()),
    };
    match size {
        Size::Static(s) if dims.is_empty() => Stride::Static(k.saturating_mul(*s)),
        Size::Static(s) => Stride::Product(k.saturating_mul(*s), dims),
        Size::Sym(_) => {
            dims.push(size.clone());
            Stride::Product(k, dims)
        }
    }
}

/// What the guards say of a later call's tensor of this shape.
pub(crate) enum StrideCheck {
    Pass,
    /// `TENSOR_MATCH` fails on a static stride.
    Static {
        index: usize,
        expected: i64,
        actual: i64,
    },
    /// A shape guard on a symbolic stride fails.
    Symbolic,
}

/// The first stride guard that fails for a tensor now of `shape`, the
/// symbols' values read from the same call (`vals`).
pub(crate) fn check(strides: &[Stride], shape: &[i64], vals: &[Option<BigInt>]) -> StrideCheck {
    let actual = contiguous(shape);
    for (index, (s, a)) in strides.iter().zip(&actual).enumerate() {
        if let Stride::Static(expected) = s {
            if expected != a {
                return StrideCheck::Static {
                    index,
                    expected: *expected,
                    actual: *a,
                };
            }
        }
    }
    for (s, a) in strides.iter().zip(&actual) {
        if let Stride::Product(k, dims) = s {
            let mut v = BigInt::from(*k);
            for d in dims {
                v *= match d {
                    Size::Static(x) => BigInt::from(*x),
                    Size::Sym(j) => match vals.get(*j).cloned().flatten() {
                        Some(x) => x,
                        None => return StrideCheck::Symbolic,
                    },
                };
            }
            if v != BigInt::from(*a) {
                return StrideCheck::Symbolic;
            }
        }
    }
    StrideCheck::Pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_inner_size_leaves_static_strides() {
        let sizes = [Size::Sym(0), Size::Sym(1)];
        let s = symbolic(&sizes, &[0, 0]).unwrap();
        assert_eq!(s, vec![Stride::Static(1), Stride::Static(1)]);
        let vals = [Some(BigInt::from(0)), Some(BigInt::from(2))];
        assert!(matches!(
            check(&s, &[0, 2], &vals),
            StrideCheck::Static {
                index: 0,
                expected: 1,
                actual: 2
            }
        ));
    }

    #[test]
    fn contiguous_strides_follow_the_inner_sizes() {
        let sizes = [Size::Sym(0), Size::Sym(1), Size::Static(3)];
        let s = symbolic(&sizes, &[5, 4, 3]).unwrap();
        assert_eq!(
            s,
            vec![
                Stride::Product(3, vec![Size::Sym(1)]),
                Stride::Static(3),
                Stride::Static(1)
            ]
        );
        let vals = [Some(BigInt::from(2)), Some(BigInt::from(0))];
        assert!(matches!(
            check(&s, &[2, 0, 3], &vals),
            StrideCheck::Symbolic
        ));
    }
}
