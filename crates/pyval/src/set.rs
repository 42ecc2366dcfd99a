//! Mirrors CPython 3.11's `set` of `str` (Objects/setobject.c) as far as
//! the order it iterates in, which `repr` prints: the open-addressing
//! table, `set_add_entry`'s linear probes and perturbation, resizing, the
//! two paths of `set_difference`, and `hash(str)` with `PYTHONHASHSEED=0`
//! (Python/pyhash.c: SipHash-1-3 with a zero key, over the string's PEP 393
//! buffer). The oracle's processes run with `PYTHONHASHSEED=0`, so a set of
//! names prints in one order, which this reproduces.

use siphasher::sip::SipHasher13;
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

/// `LINEAR_PROBES`: slots tried after the first before perturbing.
const LINEAR_PROBES: usize = 9;
/// `PERTURB_SHIFT`.
const PERTURB_SHIFT: u32 = 5;
/// `PySet_MINSIZE`: the small table's slots.
const MINSIZE: usize = 8;

/// `hash(s)` for a `str` in a process started with `PYTHONHASHSEED=0`
/// (CPython 3.11, `sys.hash_info.algorithm == "siphash13"`).
///
/// ```
/// use torchspec_pyval::set::str_hash;
/// assert_eq!(str_hash(""), 0);
/// assert_ne!(str_hash("x"), str_hash("y"));
/// ```
pub fn str_hash(s: &str) -> i64 {
    if s.is_empty() {
        return 0;
    }
    let mut h = SipHasher13::new_with_keys(0, 0);
    h.write(&pep393_buffer(s));
    match h.finish() as i64 {
        -1 => -2,
        x => x,
    }
}

/// The string as CPython stores it: one byte a character when every
/// character is below U+0100, two (UCS-2, little-endian) below U+10000,
/// else four.
fn pep393_buffer(s: &str) -> Vec<u8> {
    let widest = s.chars().map(|c| c as u32).max().unwrap_or(0);
    let kind = match widest {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        _ => 4,
    };
    let mut out = Vec::with_capacity(s.len() * kind);
    for c in s.chars() {
        out.extend_from_slice(&(c as u32).to_le_bytes()[..kind]);
    }
    out
}

/// One slot of the table.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Unused,
    /// A discarded key (`dummy`), which iteration skips.
    Dummy,
    /// An index into [`StrSet::keys`], with its hash.
    Active(usize, i64),
}

/// A `set` of strings, laid out as CPython lays it out.
struct StrSet<'a> {
    keys: Vec<&'a str>,
    table: Vec<Slot>,
    /// Active and dummy slots (`so->fill`).
    fill: usize,
    /// Active slots (`so->used`).
    used: usize,
}

impl<'a> StrSet<'a> {
    fn new() -> Self {
        StrSet {
            keys: Vec::new(),
            table: vec![Slot::Unused; MINSIZE],
            fill: 0,
            used: 0,
        }
    }

    /// `set(items)`: `set_add_key` of each in turn.
    fn from_iter(items: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = StrSet::new();
        for k in items {
            set.add(k, str_hash(k));
        }
        set
    }

    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// The active entries in table order (`set_next`).
    fn entries(&self) -> impl Iterator<Item = (&'a str, i64)> + '_ {
        self.table.iter().filter_map(|s| match *s {
            Slot::Active(k, h) => Some((self.keys[k], h)),
            _ => None,
        })
    }

    /// `set_add_entry`.
    fn add(&mut self, key: &'a str, hash: i64) {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        let mut perturb = hash as usize;
        let mut freeslot = None;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            for j in i..=i + probes {
                match self.table[j] {
                    Slot::Unused => {
                        return self.fill_unused(freeslot.unwrap_or(j), freeslot, key, hash)
                    }
                    Slot::Active(k, h) if h == hash && self.keys[k] == key => return,
                    Slot::Dummy if freeslot.is_none() => freeslot = Some(j),
                    _ => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb)) & mask;
        }
    }

    /// `found_unused_or_dummy` / `found_unused`, then the resize check.
    fn fill_unused(&mut self, at: usize, freeslot: Option<usize>, key: &'a str, hash: i64) {
        self.keys.push(key);
        self.table[at] = Slot::Active(self.keys.len() - 1, hash);
        self.used += 1;
        if freeslot.is_some() {
            return;
        }
        self.fill += 1;
        if self.fill * 5 >= self.mask() * 3 {
            let minused = if self.used > 50000 {
                self.used * 2
            } else {
                self.used * 4
            };
            self.resize(minused);
        }
    }

    /// `set_table_resize`: the smallest power of two above `minused`,
    /// entries reinserted in table order by `set_insert_clean`.
    fn resize(&mut self, minused: usize) {
        let mut size = MINSIZE;
        while size <= minused {
            size <<= 1;
        }
        let old: Vec<(usize, i64)> = self
            .table
            .iter()
            .filter_map(|s| match *s {
                Slot::Active(k, h) => Some((k, h)),
                _ => None,
            })
            .collect();
        self.table = vec![Slot::Unused; size];
        for (k, h) in old {
            self.insert_clean(k, h);
        }
        self.fill = self.used;
    }

    /// `set_insert_clean`: the first empty slot of the probe sequence.
    fn insert_clean(&mut self, key: usize, hash: i64) {
        let mask = self.mask();
        let mut i = hash as usize & mask;
        let mut perturb = hash as usize;
        loop {
            let probes = if i + LINEAR_PROBES <= mask {
                LINEAR_PROBES
            } else {
                0
            };
            if let Some(j) = (i..=i + probes).find(|&j| self.table[j] == Slot::Unused) {
                self.table[j] = Slot::Active(key, hash);
                return;
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb)) & mask;
        }
    }

    /// `set_copy` (`make_new_set` then `set_merge` into an empty set).
    fn copy(&self) -> StrSet<'a> {
        let mut new = StrSet::new();
        if self.used == 0 {
            return new;
        }
        if self.used * 5 >= new.mask() * 3 {
            new.resize(self.used * 2);
        }
        if new.mask() == self.mask() && self.fill == self.used {
            new.keys = self.keys.clone();
            new.table = self.table.clone();
        } else {
            new.keys = self.keys.clone();
            for s in &self.table {
                if let Slot::Active(k, h) = *s {
                    new.insert_clean(k, h);
                }
            }
        }
        new.fill = self.used;
        new.used = self.used;
        new
    }

    /// `set_difference`: a copy with `other`'s keys discarded (their
    /// slots become dummies) when this set has more than four times as
    /// many, else a new set of the keys not in `other`, added in this
    /// set's table order.
    fn difference(&self, other: &StrSet<'a>) -> StrSet<'a> {
        if (self.used >> 2) > other.used {
            let mut result = self.copy();
            let slots: HashMap<&str, usize> = result
                .table
                .iter()
                .enumerate()
                .filter_map(|(at, s)| match *s {
                    Slot::Active(k, _) => Some((result.keys[k], at)),
                    _ => None,
                })
                .collect();
            for (k, _) in other.entries() {
                if let Some(&at) = slots.get(k) {
                    result.table[at] = Slot::Dummy;
                    result.used -= 1;
                }
            }
            return result;
        }
        let others: HashSet<&str> = other.entries().map(|(k, _)| k).collect();
        let mut result = StrSet::new();
        for (k, h) in self.entries() {
            if !others.contains(k) {
                result.add(k, h);
            }
        }
        result
    }
}

/// The iteration order of `set(a) - set(b)`, as a process started with
/// `PYTHONHASHSEED=0` iterates (and `repr` prints) it.
///
/// ```
/// use torchspec_pyval::set::set_difference_order;
/// let d = set_difference_order(&["x", "n", "y"], &["y"]);
/// assert_eq!(d.len(), 2);
/// assert!(d.contains(&"x") && d.contains(&"n"));
/// ```
pub fn set_difference_order<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<&'a str> {
    let a = StrSet::from_iter(a.iter().copied());
    let b = StrSet::from_iter(b.iter().copied());
    a.difference(&b).entries().map(|(k, _)| k).collect()
}
