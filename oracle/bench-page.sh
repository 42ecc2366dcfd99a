#!/usr/bin/env bash
# Writes docs/performance.md: one run of oracle/bench-ratio.sh (spec, derived, eval, bigtree),
# each figure beside PyTorch's, with the machine, the command and what bounds each figure.
# Usage: oracle/bench-page.sh   (needs the oracle venv, see README; takes about 15 minutes)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
table="$(oracle/bench-ratio.sh spec derived eval bigtree)"
cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
torch="$("$PY" -c 'import torch, sys; print(torch.__version__, "on CPython", sys.version.split()[0])' 2>/dev/null)"
{
  cat <<MD
# Performance

The reference beside PyTorch $torch, from one run of
\`oracle/bench-ratio.sh spec derived eval bigtree\`. Regenerate this page with
\`oracle/bench-page.sh\` (it writes this file; nothing here is typed by hand).

- machine: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr); load average at the start of the run: $(cut -d' ' -f1-3 /proc/loadavg)
- toolchain: $(rustc --version), release profile, mimalloc (the CLI's allocator)
- date: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)
- times are CPU time (the bench thread's; PyTorch's process), so a loaded
  machine moves them less than wall time; PyTorch's figure is the best of
  several runs, torchspec's the criterion mean

| benchmark | pytorch | torchspec | ratio |
|---|---:|---:|---:|
MD
  echo "$table" | tail -n +2 | awk '{printf "| `%s` | %s | %s | %s |\n", $1, $2, $3, $4}'
  cat <<'MD'

## What each figure is, and what bounds it

- `repr/ID`, `to_jsonable/ID`, `lookup/ID` (`benches/spec.rs`, PyTorch side
  `oracle/timing.py`): one call on the cases of `benches/inputs.jsonl`.
  `to_jsonable` is timed as `eval` runs it: straight to the result's JSON
  text (`src/case/text.rs`, `enc` included) into a reused buffer, where
  PyTorch builds the dict. Bounded by the walk itself: one virtual call per
  spec node (its type), the key search in each node's dict (linear; nodes
  are small), the writes into the output. For `repr`, the copies into the
  text (a `memcpy` per line's indentation and per leaf; a var's repr is
  printed once and kept with whether it is one plain line) and the check
  that other leaves' text is plain. For `to_jsonable`, the same copies and
  the `str`-collision check of `DictSpec` keys. For a lookup that succeeds,
  a chain of dependent loads: each source node's base (17 nodes at depth 8,
  half of them `NNModuleSource` markers), then per spec level the node, its
  fields and the key's bytes, about 4 ns a level (perf: the walk down the
  source chain 33%, `Dict::get_str` 29%, the type check 18%); then the
  returned value's reference count. The lookup bench looks at its result in
  place, as `eval` does (moving it out through `black_box` timed a 40-byte
  copy too).
- `derived/build_print_300` (`benches/derived.rs`, `oracle/derived_timing.py`):
  building and printing random derived expressions; bounded by sympy's
  canonical forms (term ordering keys, flattening) and the printer.
- `eval/mixed10k` (`benches/eval.rs`, `oracle/eval_timing.py`): a whole
  10,000-case file of `torchspec gen` (build, derived, lookup, source name),
  read from memory, results to memory, start-up excluded on both sides.
- `eval/bigtree`: the same on the 6,000 cases of
  `oracle/make_bench_cases.py` (2,190 builds, 2,780 lookups, 1,030 source
  names; spec trees of about 1.9 KB of case JSON, most leaves tensors whose
  dims are derived expressions). Bounded, in about equal thirds, by reading
  the case lines (JSON into the case's wire types), building the derived
  expressions (sympy's canonicalization: sort keys, the symbolic-op memo),
  and printing (`repr` of the trees and expressions, the JSON text); the
  rest is allocation and freeing of the per-case trees.
MD
} >docs/performance.md
echo "wrote docs/performance.md"
# The peak-heap figures (a counting allocator; no PyTorch beside them).
oracle/memory-page.sh
