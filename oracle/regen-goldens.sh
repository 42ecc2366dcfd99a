#!/usr/bin/env bash
# Regenerate every PyTorch golden: corpus/cases/*.jsonl -> corpus/goldens/torch-2.15.0/,
# corpus/regressions/*.jsonl (kept by `torchspec fuzz --live`) -> .../regressions/,
# corpus/programs/NAME.pt2 -> corpus/goldens/torch-2.15.0/programs/NAME.jsonl (the program
# report as loaded and after each pass pipeline), NAME.probes.jsonl and NAME.derived-probes.jsonl
# (the input probes corpus/programs/NAME.probes.jsonl, written by oracle/zoo.py, and
# NAME.derived-probes.jsonl, written by `torchspec probes`, run through ep.module()), and the
# tensors of corpus/programs/*.pt2 and corpus/weights/*.pt2 -> .../weights/NAME.jsonl.
#
# Usage (from any directory):
#   oracle/regen-goldens.sh [--torch X] [--programs-only | --cases-only]
#                                                       rewrite the goldens and METADATA.json,
#                                                       drop stale goldens
#   oracle/regen-goldens.sh --check [--programs-only]   re-capture into a temp dir and diff
#                                                       against the committed goldens; exit 1
#                                                       on any difference
#   oracle/regen-goldens.sh --check-single [NAME ...]   re-capture each program golden line
#                                                       with its own `capture.py --program` /
#                                                       `--probes` process (slow) and diff
#
# --programs-only skips the case files (minutes) and captures only the programs;
# --cases-only skips the programs (the slower half) and keeps their goldens as
# they are: for a new case file, when no program or pass changed.
#
# --torch X (default 2.15.0, the version the reference targets) captures the
# version matrix: the same cases and programs under torch X into
# corpus/goldens/torch-X/ (any mode above). For 2.15.0 the Python that runs real
# PyTorch is ${ORACLE_PYTHON:-.oracle/bin/python}; for any other X it is
# .oracle-X/bin/python, created when missing (`python3 -m venv .oracle-X` and
# `pip install torch==X`, about 5 GB). Paths are relative to the repo root.
# Output has no timestamps: re-running on unchanged cases reproduces every file
# byte for byte.
#
# At the end (write and --check, torch 2.15.0 only) it runs
# oracle/check_exception_texts.py: every Python exception text hard-coded in
# src/ must occur in torch's or CPython's sources or in the 2.15.0 goldens;
# a text not found makes the command exit 1 (the goldens are written anyway).
set -euo pipefail

DEFAULT_TORCH=2.15.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CASES_DIR=corpus/cases

PROGRAMS_DIR=corpus/programs

mode=write
programs_only=0
cases_only=0
only=()
TORCH_VERSION=$DEFAULT_TORCH
usage="usage: oracle/regen-goldens.sh [--torch X] [--check | --check-single [NAME ...]] [--programs-only | --cases-only]"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) mode=check ;;
    --check-single) mode=check-single ;;
    --programs-only) programs_only=1 ;;
    --cases-only) cases_only=1 ;;
    --torch)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "regen-goldens: --torch takes a version like 2.14.1" >&2; echo "$usage" >&2; exit 2; }
      TORCH_VERSION="$2"; shift ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) only+=("$1") ;;
  esac
  shift
done
if [[ $programs_only == 1 && $cases_only == 1 ]]; then
  echo "regen-goldens: --programs-only and --cases-only exclude each other" >&2; echo "$usage" >&2; exit 2
fi
GOLDENS_DIR="corpus/goldens/torch-$TORCH_VERSION"
if [[ $TORCH_VERSION == "$DEFAULT_TORCH" ]]; then
  PY="${ORACLE_PYTHON:-.oracle/bin/python}"
  PY_SHOWN='${ORACLE_PYTHON:-.oracle/bin/python}'
  COMMAND_SHOWN="oracle/regen-goldens.sh"
else
  PY=".oracle-$TORCH_VERSION/bin/python"
  PY_SHOWN="$PY"
  COMMAND_SHOWN="oracle/regen-goldens.sh --torch $TORCH_VERSION"
  if [[ ! -x "$PY" ]]; then
    # The oracle venv of this version: torch X and nothing else (as oracle/requirements.txt
    # is for 2.15.0).
    echo "regen-goldens: creating .oracle-$TORCH_VERSION (torch==$TORCH_VERSION)" >&2
    python3 -m venv ".oracle-$TORCH_VERSION"
    ".oracle-$TORCH_VERSION/bin/pip" install -q "torch==$TORCH_VERSION" \
      || { echo "regen-goldens: pip install torch==$TORCH_VERSION failed" >&2; exit 1; }
  fi
fi
if [[ ${#only[@]} -gt 0 && $mode != check-single ]]; then
  echo "regen-goldens: program names are only taken by --check-single" >&2; exit 2
fi

if [[ ! -x "$PY" ]] && ! command -v "$PY" >/dev/null 2>&1; then
  echo "regen-goldens: no Python at '$PY' (set ORACLE_PYTHON; it needs oracle/requirements.txt)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# No invented exception texts in src/ (their corpus is torch 2.15.0's sources
# and goldens, so only with that torch).
check_texts() {
  [[ $TORCH_VERSION == "$DEFAULT_TORCH" ]] || return 0
  echo "check oracle/check_exception_texts.py" >&2
  "$PY" oracle/check_exception_texts.py >&2
}

shopt -s nullglob
case_files=()
while IFS= read -r f; do case_files+=("$f"); done < <(
  for f in "$CASES_DIR"/*.jsonl; do printf '%s\n' "$f"; done | LC_ALL=C sort)

# METADATA.json first: it also refuses to run under any torch but $TORCH_VERSION.
program_files=()
while IFS= read -r f; do program_files+=("$f"); done < <(
  for f in "$PROGRAMS_DIR"/*.pt2; do printf '%s\n' "$f"; done | LC_ALL=C sort)

if [[ $mode == check-single ]]; then
  # Each golden line of each program, re-captured by the single-program
  # commands the README documents, must equal the batch capture's line.
  # The golden pipelines, one a line (the first, no pass, empty): oracle/names.json.
  pipelines="$("$PY" oracle/names.py pipelines)"
  PIPELINES=()
  while IFS= read -r p; do PIPELINES+=("$p"); done <<<"$pipelines"
  status=0
  if [[ ${#only[@]} -gt 0 ]]; then
    program_files=(); for n in "${only[@]}"; do program_files+=("$PROGRAMS_DIR/$n.pt2"); done
  fi
  for f in "${program_files[@]}"; do
    name="$(basename "$f" .pt2)"
    golden="$GOLDENS_DIR/programs/$name.jsonl"
    i=0
    for pipeline in "${PIPELINES[@]}"; do
      i=$((i + 1))
      flags=(); for p in $pipeline; do flags+=(--pass "$p"); done
      want="$("$PY" -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.readlines()[int(sys.argv[1])])["report"], ensure_ascii=False, separators=(",",":")))' $((i - 1)) <"$golden")"
      got="$("$PY" oracle/capture.py --program "$f" "${flags[@]}" 2>/dev/null)"
      if [[ "$want" != "$got" ]]; then echo "differs: $name ${flags[*]}" >&2; status=1; fi
    done
    for kind in probes derived-probes; do
      [[ -e "$PROGRAMS_DIR/$name.$kind.jsonl" ]] || continue
      if ! "$PY" oracle/capture.py --probes "$f" "$PROGRAMS_DIR/$name.$kind.jsonl" 2>/dev/null \
          | diff -u "$GOLDENS_DIR/programs/$name.$kind.jsonl" - >&2; then
        echo "differs: $name $kind" >&2; status=1
      fi
    done
    echo "checked $name" >&2
  done
  exit $status
fi

names=()
for f in "${case_files[@]}"; do names+=("$(basename "$f")"); done
programs=()
for f in "${program_files[@]}"; do programs+=("$(basename "$f" .pt2)"); done
regressions=()
for f in corpus/regressions/*.jsonl; do regressions+=("$(basename "$f")"); done
"$PY" oracle/golden_metadata.py "$TORCH_VERSION" "$tmp/METADATA.json" "$PY_SHOWN" "$COMMAND_SHOWN" \
  "${#names[@]}" "${names[@]}" "${#regressions[@]}" "${regressions[@]}" "${programs[@]}" \
  2>"$tmp/.metadata.err" || { cat "$tmp/.metadata.err" >&2; exit 1; }
rm -f "$tmp/.metadata.err"

if [[ $programs_only == 0 ]]; then
for f in "${case_files[@]}"; do
  name="$(basename "$f")"
  echo "capture $f" >&2
  # capture.py's stderr carries PyTorch's warnings; show it only on failure.
  if ! "$PY" oracle/capture.py "$f" >"$tmp/$name" 2>"$tmp/.capture.err"; then
    cat "$tmp/.capture.err" >&2
    echo "regen-goldens: capture failed on $f; goldens left unchanged" >&2
    exit 1
  fi
done
fi

# Regressions kept by `torchspec fuzz --live` (corpus/regressions/NAME.jsonl,
# one shrunk case each) -> $GOLDENS_DIR/regressions/NAME.jsonl.
mkdir -p "$tmp/regressions"
for f in corpus/regressions/*.jsonl; do
  if [[ $programs_only == 1 ]]; then
    g="$GOLDENS_DIR/regressions/$(basename "$f")"; [[ -e "$g" ]] && cp "$g" "$tmp/regressions/"
    continue
  fi
  if ! "$PY" oracle/capture.py "$f" >"$tmp/regressions/$(basename "$f")" 2>"$tmp/.capture.err"; then
    cat "$tmp/.capture.err" >&2
    echo "regen-goldens: capture failed on $f; goldens left unchanged" >&2
    exit 1
  fi
done
rmdir "$tmp/regressions" 2>/dev/null || true

mkdir -p "$tmp/programs"
if [[ $cases_only == 1 ]]; then
  # Keep the committed program goldens: copied, compared, written back as they are.
  for g in "$GOLDENS_DIR"/programs/*.jsonl; do cp "$g" "$tmp/programs/"; done
elif [[ ${#program_files[@]} -gt 0 ]]; then
  echo "capture ${#program_files[@]} program(s) in $PROGRAMS_DIR" >&2
  if ! "$PY" oracle/capture.py --program-goldens "$tmp/programs" "${program_files[@]}" \
      2>"$tmp/.capture.err"; then
    cat "$tmp/.capture.err" >&2
    echo "regen-goldens: program capture failed; goldens left unchanged" >&2
    exit 1
  fi
fi
rm -f "$tmp/.capture.err"

# Weights goldens: the tensors of each zoo program and of the weights corpus
# (corpus/weights/NAME.pt2, oracle/weights_zoo.py) as torch.export.load
# gives them -> $GOLDENS_DIR/weights/NAME.jsonl (docs/weights-format.md).
weight_files=()
while IFS= read -r f; do weight_files+=("$f"); done < <(
  for f in "$PROGRAMS_DIR"/*.pt2 corpus/weights/*.pt2; do printf '%s\n' "$f"; done | LC_ALL=C sort)
mkdir -p "$tmp/weights"
if [[ $cases_only == 1 ]]; then
  for g in "$GOLDENS_DIR"/weights/*.jsonl; do cp "$g" "$tmp/weights/"; done
elif [[ ${#weight_files[@]} -gt 0 ]]; then
  echo "capture the tensors of ${#weight_files[@]} archive(s)" >&2
  if ! "$PY" oracle/weights.py --goldens "$tmp/weights" "${weight_files[@]}" 2>"$tmp/.weights.err"; then
    cat "$tmp/.weights.err" >&2
    echo "regen-goldens: weights capture failed; goldens left unchanged" >&2
    exit 1
  fi
fi
rm -f "$tmp/.weights.err"

# Mutants kept by `torchspec fuzz --live --mutate` (corpus/mutants/NAME.json:
# a zoo program with edits to its program JSON) -> $GOLDENS_DIR/mutants/NAME.json,
# what torch.export.load and the C++ deserializer do with each.
mutant_files=()
while IFS= read -r f; do mutant_files+=("$f"); done < <(
  for f in corpus/mutants/*.json; do [[ -e "$f" ]] && printf '%s\n' "$f"; done | LC_ALL=C sort)
mkdir -p "$tmp/mutants"
if [[ $cases_only == 1 ]]; then
  for g in "$GOLDENS_DIR"/mutants/*.json; do [[ -e "$g" ]] && cp "$g" "$tmp/mutants/"; done
elif [[ ${#mutant_files[@]} -gt 0 ]]; then
  echo "capture ${#mutant_files[@]} kept mutant(s)" >&2
  if ! PYTHONHASHSEED=0 "$PY" oracle/capture.py --mutant-goldens "$tmp/mutants" "${mutant_files[@]}" \
      2>"$tmp/.mutants.err"; then
    cat "$tmp/.mutants.err" >&2
    echo "regen-goldens: mutant capture failed; goldens left unchanged" >&2
    exit 1
  fi
fi
rm -f "$tmp/.mutants.err"
rmdir "$tmp/mutants" 2>/dev/null || true

# Pytree goldens are not case files: oracle/pytree_cases.py builds its
# TreeSpecs in PyTorch and writes them with their str/dumps/errors.
mkdir -p "$tmp/pytree"
echo "capture oracle/pytree_cases.py" >&2
if ! "$PY" oracle/pytree_cases.py >"$tmp/pytree/treespecs.jsonl" 2>"$tmp/.pytree.err"; then
  cat "$tmp/.pytree.err" >&2
  echo "regen-goldens: oracle/pytree_cases.py failed; goldens left unchanged" >&2
  exit 1
fi
rm -f "$tmp/.pytree.err"

if [[ $programs_only == 1 ]]; then
  # Compare and copy only what was captured: METADATA.json and programs/.
  for g in "$GOLDENS_DIR"/*.jsonl; do cp "$g" "$tmp/"; done
fi

if [[ $mode == check ]]; then
  status=0
  if diff -r -u "$GOLDENS_DIR" "$tmp" >&2; then
    echo "goldens reproducible: ${#case_files[@]} case file(s) and ${#program_files[@]} program(s) match $GOLDENS_DIR" >&2
  else
    echo "regen-goldens --check: goldens differ from a fresh capture (run oracle/regen-goldens.sh)" >&2
    status=1
  fi
  check_texts || status=1
  exit $status
fi

mkdir -p "$GOLDENS_DIR/programs"
# Drop goldens whose case file or program no longer exists.
for g in "$GOLDENS_DIR"/*.jsonl; do
  [[ -e "$CASES_DIR/$(basename "$g")" ]] || { echo "remove stale $g" >&2; rm -f "$g"; }
done
for g in "$GOLDENS_DIR"/programs/*.jsonl; do
  base="$(basename "$g" .jsonl)"; base="${base%.probes}"; base="${base%.derived-probes}"; base="${base%.serialized}"
  [[ -e "$PROGRAMS_DIR/$base.pt2" ]] || { echo "remove stale $g" >&2; rm -f "$g"; }
done
for g in "$GOLDENS_DIR"/programs/*.probes.jsonl "$GOLDENS_DIR"/programs/*.derived-probes.jsonl; do
  [[ -e "$tmp/programs/$(basename "$g")" ]] || { echo "remove stale $g" >&2; rm -f "$g"; }
done
cp "$tmp"/METADATA.json "$tmp"/*.jsonl "$GOLDENS_DIR"/
rm -rf "$GOLDENS_DIR/regressions"
captured=("$tmp"/regressions/*)
if [[ ${#captured[@]} -gt 0 ]]; then
  mkdir -p "$GOLDENS_DIR/regressions"; cp "${captured[@]}" "$GOLDENS_DIR"/regressions/
fi
mkdir -p "$GOLDENS_DIR/pytree"
cp "$tmp"/pytree/* "$GOLDENS_DIR"/pytree/
rm -rf "$GOLDENS_DIR/weights"
captured=("$tmp"/weights/*)
if [[ ${#captured[@]} -gt 0 ]]; then
  mkdir -p "$GOLDENS_DIR/weights"; cp "${captured[@]}" "$GOLDENS_DIR"/weights/
fi
rm -rf "$GOLDENS_DIR/mutants"
if [[ -d "$tmp/mutants" ]]; then
  mkdir -p "$GOLDENS_DIR/mutants"; cp "$tmp"/mutants/* "$GOLDENS_DIR"/mutants/
fi
captured=("$tmp"/programs/*)
if [[ ${#captured[@]} -gt 0 ]]; then cp "${captured[@]}" "$GOLDENS_DIR"/programs/; fi
echo "wrote ${#case_files[@]} case golden(s), ${#program_files[@]} program golden(s) and METADATA.json to $GOLDENS_DIR" >&2
check_texts || exit 1
