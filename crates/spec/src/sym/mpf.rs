//! mpmath's binary floating point (mpmath/libmp/libmpf.py) for a sympy
//! `Float` whose precision is above a double's: what `ToFloat` of an
//! integer past 15 digits gives (`sympy.Float(int(n))` takes
//! `max(15, len(str(n)))` decimal digits, `dps_to_prec` of them in bits),
//! and what arithmetic with such a Float gives (`Float.__add__` works at the
//! larger of the two precisions, rounding to nearest, ties to even).
//!
//! Only the operations the spec ShapeEnv reaches are here: conversion from
//! an integer and from a double, `+`, `*`, negation, exact comparison, and
//! `to_str` (the digits `StrPrinter._print_Float` prints).

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

use torchspec_pyval::{PyResult, Raise};

/// An `mpf` with its sympy precision: the value is
/// `(-1)**neg * man * 2**exp`, `man` odd (mpmath's normalized form), and
/// `prec` the Float's `_prec` in bits (always above 53 here: a 53-bit
/// Float is a double, [`super::expr::Node::Float`]). Zero (`man == 0`,
/// `exp == 0`, not negative) is only ever a lone Float: arithmetic that
/// gives zero gives `S.Zero` (`Float._new`); `x % y` can give a Float zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mpf {
    /// The sign: `true` for a negative value.
    pub neg: bool,
    /// The mantissa, odd (zero only for the value zero).
    pub man: BigUint,
    /// The binary exponent.
    pub exp: i64,
    /// The Float's `_prec` in bits.
    pub prec: u32,
}

/// Exponent differences past this are not aligned exactly (a sum would
/// allocate a mantissa of that many bits): `unsupported` instead.
const MAX_ALIGN: i64 = 1 << 20;

/// The largest `|exp + bc|` kept: mpmath prints past 2**3500 through
/// logarithms (`to_digits_exp`), which are not modelled.
const MAX_MAGNITUDE: i64 = 3500;

/// `m`, or `unsupported` when its magnitude is past what is printed here.
pub fn in_range(m: Mpf) -> PyResult<Mpf> {
    if (m.exp + m.man.bits() as i64).abs() > MAX_MAGNITUDE {
        return Err(Raise::unsupported(
            "a high-precision Float past 2**3500 (mpmath prints it through logarithms)",
        ));
    }
    Ok(m)
}

/// `dps_to_prec(n)`: the bits that hold `n` decimal digits.
pub fn dps_to_prec(dps: u64) -> u32 {
    (((dps + 1) as f64 * 3.3219280948873626).round() as u32).max(1)
}

/// `prec_to_dps(n)`: the decimal digits `n` bits hold accurately.
pub fn prec_to_dps(prec: u32) -> usize {
    (((prec as f64 / 3.3219280948873626).round() as i64) - 1).max(1) as usize
}

/// mpmath's `normalize` with `round_nearest`: round `man * 2**exp` to
/// `prec` bits (ties to even) and strip trailing zero bits. `None` is zero.
fn normalize(neg: bool, mut man: BigUint, mut exp: i64, prec: u32) -> Option<Mpf> {
    if man.is_zero() {
        return None;
    }
    let bc = man.bits();
    if bc > prec as u64 {
        let shift = bc - prec as u64;
        let t = &man >> (shift - 1);
        let half_bit = t.bit(0);
        let mut q = t >> 1u32;
        if half_bit {
            // Exactly half only when every bit below the half bit is zero.
            let below_zero = man.trailing_zeros().is_some_and(|z| z >= shift - 1);
            if !below_zero || q.bit(0) {
                q += 1u32;
            }
        }
        man = q;
        exp += shift as i64;
    }
    let tz = man.trailing_zeros().unwrap_or(0);
    man >>= tz;
    exp += tz as i64;
    Some(Mpf {
        neg,
        man,
        exp,
        prec,
    })
}

impl Mpf {
    /// `from_int(n, prec, round_nearest)`; `None` for zero.
    pub fn from_int(n: &BigInt, prec: u32) -> Option<Mpf> {
        normalize(n.sign() == Sign::Minus, n.magnitude().clone(), 0, prec)
    }

    /// `sympy.Float(int(n))`: precision from the digit count.
    pub fn from_int_digits(n: &BigInt) -> Option<Mpf> {
        let digits = n.magnitude().to_string().len() as u64;
        Mpf::from_int(n, dps_to_prec(digits.max(15)))
    }

    /// A double, exactly, at precision `prec`; `None` for zero or a
    /// non-finite double.
    pub fn from_f64(f: f64, prec: u32) -> Option<Mpf> {
        if f == 0.0 || !f.is_finite() {
            return None;
        }
        let bits = f.to_bits();
        let neg = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (man, exp) = if biased == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), biased - 1075)
        };
        normalize(neg, BigUint::from(man), exp, prec)
    }

    fn signed(&self) -> BigInt {
        BigInt::from_biguint(
            if self.neg { Sign::Minus } else { Sign::Plus },
            self.man.clone(),
        )
    }

    /// The two mantissas, signed, scaled to the smaller exponent.
    fn aligned(a: &Mpf, b: &Mpf) -> PyResult<(BigInt, BigInt, i64)> {
        let e = a.exp.min(b.exp);
        let (da, db) = (a.exp - e, b.exp - e);
        if da > MAX_ALIGN || db > MAX_ALIGN {
            return Err(Raise::unsupported(
                "high-precision Float arithmetic across exponents far apart",
            ));
        }
        Ok((a.signed() << da as usize, b.signed() << db as usize, e))
    }

    /// `mpf_add(a, b, prec, round_nearest)`; `None` is zero.
    pub fn add(a: &Mpf, b: &Mpf, prec: u32) -> PyResult<Option<Mpf>> {
        let (x, y, e) = Mpf::aligned(a, b)?;
        let s = x + y;
        Ok(normalize(
            s.sign() == Sign::Minus,
            s.magnitude().clone(),
            e,
            prec,
        ))
    }

    /// `mpf_mul(a, b, prec, round_nearest)`.
    pub fn mul(a: &Mpf, b: &Mpf, prec: u32) -> Option<Mpf> {
        normalize(a.neg != b.neg, &a.man * &b.man, a.exp + b.exp, prec)
    }

    /// `mpf_div(a, b, prec, round_nearest)`: the quotient rounded once
    /// (two guard bits and a sticky bit below the `prec` kept).
    pub fn div(a: &Mpf, b: &Mpf, prec: u32) -> Option<Mpf> {
        if b.is_zero() {
            return None;
        }
        let (sbc, tbc) = (a.man.bits() as i64, b.man.bits() as i64);
        let k = (prec as i64 + 3 + tbc - sbc).max(0);
        let (q, r) = (&a.man << k as usize).div_rem(&b.man);
        let q = (q << 1u32) + u32::from(!r.is_zero());
        normalize(a.neg != b.neg, q, a.exp - b.exp - k - 1, prec)
    }

    /// `mpf_mod(a, b, prec)`: the exact floor remainder (the sign of `b`)
    /// rounded to `prec`; `None` is zero.
    pub fn modulo(a: &Mpf, b: &Mpf, prec: u32) -> PyResult<Option<Mpf>> {
        let (x, y, e) = Mpf::aligned(a, b)?;
        let m = x.mod_floor(&y);
        Ok(normalize(
            m.sign() == Sign::Minus,
            m.magnitude().clone(),
            e,
            prec,
        ))
    }

    /// `Float(0, precision=prec)`.
    pub fn zero(prec: u32) -> Mpf {
        Mpf {
            neg: false,
            man: BigUint::zero(),
            exp: 0,
            prec,
        }
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.man.is_zero()
    }

    /// `normalize` to another precision (`mpf_add(x, fzero, prec)`).
    pub fn round_to(&self, prec: u32) -> Option<Mpf> {
        normalize(self.neg, self.man.clone(), self.exp, prec)
    }

    /// Exact comparison with a double (`None` for nan).
    pub fn cmp_f64(&self, f: f64) -> Option<Ordering> {
        if f.is_nan() {
            return None;
        }
        if f.is_infinite() {
            return Some(if f > 0.0 {
                Ordering::Less
            } else {
                Ordering::Greater
            });
        }
        match Mpf::from_f64(f, 53) {
            None => Some(if self.neg {
                Ordering::Less
            } else {
                Ordering::Greater
            }),
            Some(m) => Mpf::cmp_value(self, &m).ok(),
        }
    }

    /// `Float.__neg__` (zero stays zero).
    pub fn neg(&self) -> Mpf {
        Mpf {
            neg: !self.neg && !self.is_zero(),
            ..self.clone()
        }
    }

    /// Exact comparison of the two values.
    pub fn cmp_value(a: &Mpf, b: &Mpf) -> PyResult<Ordering> {
        let (x, y, _) = Mpf::aligned(a, b)?;
        Ok(x.cmp(&y))
    }

    /// Exact comparison with an integer.
    pub fn cmp_int(&self, n: &BigInt) -> PyResult<Ordering> {
        match Mpf::from_int(n, n.bits().max(1) as u32) {
            None => Ok(if self.neg {
                Ordering::Less
            } else {
                Ordering::Greater
            }),
            Some(m) => Mpf::cmp_value(self, &m),
        }
    }

    /// Whether the value is an integer (`int_valued`).
    pub fn is_integer_valued(&self) -> bool {
        self.exp >= 0
    }

    /// `to_float`: the nearest double (infinite past the double range).
    pub fn to_f64(&self) -> f64 {
        let Some(r) = normalize(self.neg, self.man.clone(), self.exp, 53) else {
            return 0.0;
        };
        let m = r.man.to_f64().unwrap_or(f64::INFINITY);
        let v = if r.exp > 1100 {
            f64::INFINITY
        } else if r.exp < -1200 {
            0.0
        } else {
            // Two steps keep each power of two a normal double.
            let half = r.exp / 2;
            m * 2f64.powi(half as i32) * 2f64.powi((r.exp - half) as i32)
        };
        if r.neg {
            -v
        } else {
            v
        }
    }

    /// `to_digits_exp(s, dps)`: the sign, `dps`-ish decimal digits rounded
    /// toward zero, and the decimal exponent of the first digit.
    fn to_digits_exp(&self, dps: usize) -> (bool, String, i64) {
        // [`in_range`] keeps `|exp + bc|` within 3500, where mpmath takes
        // no logarithms.
        let bc = self.man.bits() as i64;
        let bitprec = (dps as f64 * std::f64::consts::LOG2_10) as i64 + 10;
        let fixprec = (bitprec - self.exp - bc).max(0);
        let fixdps = (fixprec as f64 / std::f64::consts::LOG2_10 + 0.5) as u32;
        // to_fixed of the magnitude (the sign was taken off first).
        let offset = self.exp + fixprec;
        let sf = if offset >= 0 {
            &self.man << offset as usize
        } else {
            &self.man >> (-offset) as usize
        };
        // bin_to_radix: floor(sf * 10**fixdps / 2**fixprec).
        let sd = (sf * num_traits::pow(BigUint::from(10u32), fixdps as usize)) >> fixprec as usize;
        let digits = sd.to_string();
        let exponent = digits.len() as i64 - fixdps as i64 - 1;
        (self.neg, digits, exponent)
    }

    /// `to_str(s, dps, strip_zeros)` with mpmath's default fixed-point
    /// window, as `StrPrinter._print_Float` calls it.
    pub fn to_str(&self, dps: usize, strip_zeros: bool) -> String {
        if self.is_zero() {
            return "0.0".into();
        }
        let min_fixed = (-((dps / 3) as i64)).min(-5);
        let max_fixed = dps as i64;
        let (neg, digits, mut exponent) = self.to_digits_exp(dps + 3);
        let mut digits = digits.into_bytes();
        if digits.len() > dps && digits[dps] >= b'5' {
            digits.truncate(dps);
            let mut i = dps as i64 - 1;
            while i >= 0 && digits[i as usize] == b'9' {
                i -= 1;
            }
            if i >= 0 {
                let i = i as usize;
                digits[i] += 1;
                for d in &mut digits[i + 1..] {
                    *d = b'0';
                }
            } else {
                digits = std::iter::once(b'1')
                    .chain(std::iter::repeat_n(b'0', dps - 1))
                    .collect();
                exponent += 1;
            }
        } else {
            digits.truncate(dps);
        }
        let mut digits = String::from_utf8(digits).expect("ascii digits");
        let split;
        if min_fixed < exponent && exponent < max_fixed {
            if exponent < 0 {
                digits = "0".repeat((-exponent) as usize) + &digits;
                split = 1;
            } else {
                split = exponent as usize + 1;
                if split > dps {
                    digits.push_str(&"0".repeat(split - dps));
                }
            }
            exponent = 0;
        } else {
            split = 1;
        }
        let mut s = format!("{}.{}", &digits[..split], &digits[split..]);
        if strip_zeros {
            while s.ends_with('0') {
                s.pop();
            }
            if s.ends_with('.') {
                s.push('0');
            }
        }
        let sign = if neg { "-" } else { "" };
        if exponent == 0 {
            format!("{sign}{s}")
        } else if exponent > 0 {
            format!("{sign}{s}e+{exponent}")
        } else {
            format!("{sign}{s}e{exponent}")
        }
    }

    /// `str(Float)` at this precision (`_print_Float`).
    pub fn sympy_str(&self, strip_zeros: bool) -> String {
        self.to_str(prec_to_dps(self.prec), strip_zeros)
    }

    /// Whether the value is odd/even is never asked of a Float; an integer
    /// value's parity is (for `is_even`): `None` when not an integer.
    pub fn integer_value(&self) -> Option<BigInt> {
        if self.exp < 0 {
            return None;
        }
        if self.exp > MAX_ALIGN {
            return None;
        }
        Some(self.signed() << self.exp as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> BigInt {
        s.parse().unwrap()
    }

    #[test]
    fn precision_of_an_integer_follows_its_digits() {
        assert_eq!(dps_to_prec(15), 53);
        assert_eq!(prec_to_dps(53), 15);
        let m = Mpf::from_int_digits(&big("75557863725914323419139")).unwrap();
        assert_eq!(m.prec, dps_to_prec(23));
        assert_eq!(prec_to_dps(m.prec), 23);
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        // At 53 bits the last place of 2**60 is 2**8: 2**60 + 1 rounds
        // down; 2**60 + 2**7 is a tie and keeps the even mantissa 2**52;
        // 2**60 + 3*2**7 is a tie between mantissas 2**52 + 1 and 2**52 + 2
        // and takes the even one.
        let p = BigInt::from(1u64 << 60);
        let a = Mpf::from_int(&(&p + 1), 53).unwrap();
        assert_eq!(a.integer_value().unwrap(), p);
        let b = Mpf::from_int(&(&p + 128), 53).unwrap();
        assert_eq!(b.integer_value().unwrap(), p);
        let c = Mpf::from_int(&(&p + 384), 53).unwrap();
        assert_eq!(c.integer_value().unwrap(), &p + 512);
    }

    #[test]
    fn digits_round_like_mpmath() {
        let m =
            Mpf::from_int_digits(&big("713623846352979940529610499006551663067529219")).unwrap();
        // `str(sympy.Float(n))` at the top level keeps the bare point;
        // nested, trailing zeros are stripped and one zero comes back.
        assert_eq!(
            m.sympy_str(false),
            "713623846352979940529610499006551663067529219."
        );
        assert_eq!(
            m.sympy_str(true),
            "713623846352979940529610499006551663067529219.0"
        );
        // 1/3 at 60 bits: the quotient is rounded once, to nearest.
        let three = Mpf::from_int(&BigInt::from(3), 60).unwrap();
        let one = Mpf::from_int(&BigInt::from(1), 60).unwrap();
        let third = Mpf::div(&one, &three, 60).unwrap();
        assert_eq!(third.to_str(17, true), "0.33333333333333333");
        let seven = Mpf::from_int(&BigInt::from(-7), 60).unwrap();
        let two = Mpf::from_int(&BigInt::from(2), 60).unwrap();
        let m = Mpf::modulo(&seven, &two, 60).unwrap().unwrap();
        assert_eq!(m.integer_value().unwrap(), BigInt::from(1));
        let f = Mpf::from_f64(0.1, 60).unwrap();
        assert_eq!(f.to_str(15, true), "0.1");
    }
}
