//! CPython's `int`: unbounded, but nearly every int a case holds (a dim, a
//! bound, an index) fits a machine word. Those are kept inline, so copying
//! one (every `to_jsonable` does) allocates nothing; the rest are a shared
//! `BigInt`.

use std::fmt;
use std::rc::Rc;

use num_bigint::{BigInt, Sign};
use num_traits::ToPrimitive;

/// A Python `int`. Canonical: `Big` never holds a value that fits an `i64`,
/// so two equal ints always have the same variant.
///
/// ```
/// use num_bigint::BigInt;
/// use torchspec_pyval::Int;
/// let big = Int::from(BigInt::from(1u8) << 70); // 2**70
/// assert_eq!(big.to_string(), "1180591620717411303424");
/// assert_eq!((big.to_i64(), big.bits()), (None, 71)); // (2**70).bit_length()
/// assert_eq!(Int::from(-5).bits(), 3);
/// assert_eq!(Int::from(BigInt::from(7)), Int::from(7));
/// ```
#[derive(Clone)]
pub enum Int {
    /// An int that fits an `i64`.
    Small(i64),
    /// An int outside the `i64` range, shared by reference count.
    Big(Rc<BigInt>),
}

impl Int {
    /// The value as a `BigInt` (allocates for a nonzero small int: for
    /// arithmetic and the sympy model, not for copying).
    pub fn to_big(&self) -> BigInt {
        match self {
            Int::Small(i) => BigInt::from(*i),
            Int::Big(b) => BigInt::clone(b),
        }
    }

    /// The value if it fits an `i64`.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Int::Small(i) => Some(*i),
            Int::Big(_) => None,
        }
    }

    /// The value if it is a valid `usize` (an index).
    pub fn to_usize(&self) -> Option<usize> {
        match self {
            Int::Small(i) => usize::try_from(*i).ok(),
            Int::Big(b) => b.to_usize(),
        }
    }

    /// `x == 0`.
    pub fn is_zero(&self) -> bool {
        matches!(self, Int::Small(0))
    }

    /// `x < 0`.
    pub fn is_negative(&self) -> bool {
        match self {
            Int::Small(i) => *i < 0,
            Int::Big(b) => b.sign() == Sign::Minus,
        }
    }

    /// Significant bits of `abs(x)` (`int.bit_length()`).
    pub fn bits(&self) -> u64 {
        match self {
            Int::Small(i) => u64::from(64 - i.unsigned_abs().leading_zeros()),
            Int::Big(b) => b.bits(),
        }
    }
}

impl From<i64> for Int {
    fn from(i: i64) -> Int {
        Int::Small(i)
    }
}

impl From<BigInt> for Int {
    fn from(b: BigInt) -> Int {
        match b.to_i64() {
            Some(i) => Int::Small(i),
            None => Int::Big(Rc::new(b)),
        }
    }
}

impl From<&BigInt> for Int {
    fn from(b: &BigInt) -> Int {
        match b.to_i64() {
            Some(i) => Int::Small(i),
            None => Int::Big(Rc::new(b.clone())),
        }
    }
}

impl PartialEq for Int {
    fn eq(&self, other: &Int) -> bool {
        match (self, other) {
            (Int::Small(a), Int::Small(b)) => a == b,
            (Int::Big(a), Int::Big(b)) => a == b,
            // Canonical: a small and a big int are never equal.
            _ => false,
        }
    }
}
impl Eq for Int {}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Int) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Int {
    fn cmp(&self, other: &Int) -> std::cmp::Ordering {
        match (self, other) {
            (Int::Small(a), Int::Small(b)) => a.cmp(b),
            _ => self.to_big().cmp(&other.to_big()),
        }
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Small(i) => fmt::Display::fmt(i, f),
            Int::Big(b) => fmt::Display::fmt(&**b, f),
        }
    }
}

impl fmt::Debug for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_and_exact() {
        let big = BigInt::from(i64::MAX) + 1i64;
        assert!(matches!(Int::from(big.clone()), Int::Big(_)));
        assert!(matches!(Int::from(big - 1), Int::Small(i64::MAX)));
        assert_eq!(Int::Small(-8).bits(), 4);
        assert_eq!(Int::Small(i64::MIN).bits(), 64);
        assert_eq!(Int::Small(0).bits(), 0);
        assert_eq!(Int::Small(-1).to_usize(), None);
    }
}
