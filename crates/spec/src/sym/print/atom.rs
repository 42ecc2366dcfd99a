//! Mirrors sympy 1.14's `StrPrinter` for atoms (sympy/printing/str.py
//! `_print_Integer`, `_print_Float`, `_print_Symbol`, the singletons, and
//! torch's `int_oo`): the only printing `Basic.sort_key` reads (`str` of an
//! atom), so it sits below both the printer and the orderings.

use crate::sym::basic::{Ex, Node};

/// `str(atom)` of an atom (`expr.is_Atom`); a Float's trailing zeros are
/// stripped when `strip` (below the top level). Empty for any other node.
pub fn atom_str(e: &Ex, strip: bool) -> String {
    match &**e {
        Node::Int(i) => i.to_string(),
        Node::Float(f) => float_str(*f, strip),
        Node::BigFloat(m) => m.sympy_str(strip),
        Node::IntOo { neg } => (if *neg { "-int_oo" } else { "int_oo" }).into(),
        Node::Inf { neg } => (if *neg { "-oo" } else { "oo" }).into(),
        Node::NaN => "nan".into(),
        Node::Sym(s) => s.name.clone(),
        Node::True => "True".into(),
        Node::False => "False".into(),
        _ => String::new(),
    }
}

/// mpmath `to_str`'s 15 digits of a positive finite `f` and the exponent of
/// the first: 18 digits rounded toward zero (`to_digits_exp(s, dps+3)`),
/// then up when the 16th is 5 or more (`275854.7353515625` is
/// `275854.735351563`, where a correctly rounded 15 digits would end in
/// 2). The 18 are the first of 31 correctly rounded digits, unless a
/// carry may have reached them (the 13 after are all zeros) where the
/// 16th to 18th are `500`: then `None`.
fn mpmath_digits(f: f64) -> Option<(String, i32)> {
    let s = format!("{f:.30e}");
    let (mant, exp) = s.split_once('e')?;
    let mut exp: i32 = exp.parse().ok()?;
    let all: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    let (head, tail) = all.split_at(18);
    if tail.iter().all(|&d| d == b'0') && &head[15..] == b"500" {
        return None;
    }
    let mut digits = head[..15].to_vec();
    if head[15] >= b'5' {
        match digits.iter().rposition(|&d| d != b'9') {
            Some(i) => {
                digits[i] += 1;
                digits[i + 1..].fill(b'0');
            }
            None => {
                digits.fill(b'0');
                digits[0] = b'1';
                exp += 1;
            }
        }
    }
    Some((String::from_utf8(digits).ok()?, exp))
}

/// `StrPrinter._print_Float`: mpmath `to_str` with 15 significant digits;
/// trailing zeros stripped except at the top level (`full_prec="auto"`).
pub fn float_str(f: f64, strip: bool) -> String {
    if f == 0.0 {
        // mpmath has no negative zero.
        return "0.0".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f.is_nan() {
        return "nan".into();
    }
    let Some((digits, exp)) = mpmath_digits(f.abs()) else {
        // A tie the fast digits cannot tell from a near one: exactly.
        return crate::sym::mpf::Mpf::from_f64(f, 53)
            .map_or_else(String::new, |m| m.to_str(15, strip));
    };
    let sign = if f < 0.0 { "-" } else { "" };
    // mpmath: fixed notation when min_fixed < exp < max_fixed, with
    // min_fixed = min(-dps/3, -5) = -5 and max_fixed = dps = 15.
    let mut body = if -5 < exp && exp < 15 {
        if exp >= 0 {
            let (int_part, frac) = digits.split_at((exp + 1) as usize);
            format!("{int_part}.{frac}")
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        }
    } else {
        format!(
            "{}.{}e{}{}",
            &digits[..1],
            &digits[1..],
            if exp < 0 { "-" } else { "+" },
            exp.abs()
        )
    };
    if strip {
        // strip_zeros: drop trailing zeros of the mantissa, keep one digit.
        let (m, e) = match body.find('e') {
            Some(i) => (body[..i].to_string(), body[i..].to_string()),
            None => (body.clone(), String::new()),
        };
        let mut m = m.trim_end_matches('0').to_string();
        if m.ends_with('.') {
            m.push('0');
        }
        body = m + &e;
    }
    format!("{sign}{body}")
}
