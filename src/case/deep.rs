//! Stack for deeply nested cases. Reading, evaluating, `repr` and
//! `to_jsonable` recurse once per level of nesting; Python's `json` lets a
//! case line nest up to `read::MAX_DEPTH` levels, more than a 2 MB thread
//! stack holds. A deep case gets a stack of its own, sized by its depth.

/// Levels of nesting any thread's stack holds without help.
pub const SHALLOW: usize = 64;

/// Stack per level of nesting: generous (the deepest recursion, a spec's
/// `repr` inside an evaluation, takes a few KB per level); only the pages
/// used are ever touched.
const PER_LEVEL: usize = 64 * 1024;

/// Run `f` on a stack deep enough for `depth` levels of nesting.
pub fn with_stack_for<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    stacker::grow((1 << 20) + depth * PER_LEVEL, f)
}
