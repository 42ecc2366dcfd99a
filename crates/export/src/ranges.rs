//! Mirrors the range constraints `torch.export.load` rebuilds
//! (`ExportedProgramDeserializer.deserialize_range_constraints`) and how
//! `str(ep.range_constraints)` prints them: `{s77: VR[2, 128], u0: VR[0, int_oo]}`.

use std::fmt;

use num_bigint::BigInt;

/// One end of a `ValueRanges`: an integer or torch's `int_oo` / `-int_oo`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// A finite integer bound.
    Int(BigInt),
    /// `int_oo`: no upper bound.
    IntOo,
    /// `-int_oo`: no lower bound.
    NegIntOo,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Int(i) => write!(f, "{i}"),
            Bound::IntOo => f.write_str("int_oo"),
            Bound::NegIntOo => f.write_str("-int_oo"),
        }
    }
}

/// `ValueRanges(lower, upper)`, printed `VR[lower, upper]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueRanges {
    /// `ValueRanges.lower`.
    pub lower: Bound,
    /// `ValueRanges.upper`.
    pub upper: Bound,
}

impl fmt::Display for ValueRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VR[{}, {}]", self.lower, self.upper)
    }
}

/// `ep.range_constraints`: symbol name → range, in the serialized order of
/// the symbols that survived loading.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeConstraints(pub Vec<(String, ValueRanges)>);

impl RangeConstraints {
    /// `range_constraints[symbol]`, if the symbol has a range.
    pub fn get(&self, symbol: &str) -> Option<&ValueRanges> {
        self.0.iter().find(|(s, _)| s == symbol).map(|(_, r)| r)
    }
}

impl fmt::Display for RangeConstraints {
    /// `str(dict)`: a sympy symbol's repr is its name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (sym, vr)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{sym}: {vr}")?;
        }
        f.write_str("}")
    }
}
