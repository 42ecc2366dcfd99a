//! `--shard k/n`: a deterministic partition of the work among `n` machines,
//! every case in exactly one shard.
//!
//! Corpus cases (`check`, `oracle/capture.py --shard`) go by their id: FNV-1a
//! 64 of its UTF-8 bytes, mod `n` (stable when cases are added or moved).
//! Generated cases (`fuzz --live`) go by their index in the seed's sequence:
//! shard `k` runs indices `k-1, k-1+n, k-1+2n, ...`, each case generated from
//! `(seed, index)` alone, so the shards of one seed together are exactly the
//! unsharded run.

use std::fmt;
use std::str::FromStr;

/// Shard `k` of `n` (1 ≤ k ≤ n).
///
/// ```
/// use torchspec::shard::Shard;
///
/// let s: Shard = "2/3".parse()?;
/// // Generated cases: shard 2 of 3 runs indices 1, 4, 7, ...
/// assert_eq!([s.index(0), s.index(1), s.index(2)], [1, 4, 7]);
/// assert!(s.has_index(4) && !s.has_index(5));
/// // Corpus cases go by their id: each id is in exactly one shard.
/// let owners = (1..=3).filter(|&k| Shard { k, n: 3 }.has_id("build-vars-001"));
/// assert_eq!(owners.count(), 1);
/// assert!("0/3".parse::<Shard>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl Shard {
    /// The whole: shard 1 of 1.
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    /// Whether the corpus case `id` belongs to this shard.
    pub fn has_id(&self, id: &str) -> bool {
        fnv1a64(id.as_bytes()) % self.n == self.k - 1
    }

    /// The global index of this shard's `j`-th generated case.
    pub fn index(&self, j: u64) -> u64 {
        (self.k - 1) + self.n * j
    }

    /// Whether the generated case `index` belongs to this shard.
    pub fn has_index(&self, index: u64) -> bool {
        index % self.n == self.k - 1
    }
}

/// FNV-1a, 64 bits (also `shard_of` in `oracle/capture.py`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: expected k/n with 1 <= k <= n (e.g. 2/8)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u64 = k.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { k: 2, n: 8 }));
        for bad in ["0/3", "4/3", "1/0", "1", "a/b", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fnv_matches_the_python_side() {
        // Values of oracle/capture.py's shard_of before the `% n`.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
