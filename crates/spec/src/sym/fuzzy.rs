//! Mirrors sympy 1.14's fuzzy logic (sympy/core/logic.py `fuzzy_and`,
//! sympy/core/assumptions.py `_fuzzy_group`): three-valued `and` over
//! `Option<bool>`, which the assumption handlers and the commutativity
//! slots both use, below either.

/// `fuzzy_and(args)` (sympy/core/logic.py): False at the first False,
/// else unknown if any is unknown, else True.
pub(super) fn fuzzy_all(it: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let mut all = Some(true);
    for v in it {
        match v {
            Some(false) => return Some(false),
            None => all = None,
            Some(true) => {}
        }
    }
    all
}

/// `_fuzzy_group(args, quick_exit)` (sympy/core/assumptions.py): True when
/// all are True; unknown at the first unknown; False when some are False
/// (with `quick_exit`, exactly one: a second makes it unknown).
pub(super) fn fuzzy_group(
    it: impl Iterator<Item = Option<bool>>,
    quick_exit: bool,
) -> Option<bool> {
    let mut saw_other = false;
    for v in it {
        match v {
            Some(true) => {}
            None => return None,
            Some(false) if quick_exit && saw_other => return None,
            Some(false) => saw_other = true,
        }
    }
    Some(!saw_other)
}
