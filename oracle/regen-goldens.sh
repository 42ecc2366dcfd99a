#!/usr/bin/env bash
# Regenerate every PyTorch golden: corpus/cases/*.jsonl -> corpus/goldens/torch-2.15.0/.
#
# Usage (from any directory):
#   oracle/regen-goldens.sh           rewrite the goldens and METADATA.json, drop stale goldens
#   oracle/regen-goldens.sh --check   re-capture into a temp dir and diff against the
#                                     committed goldens; exit 1 on any difference
#
# The Python that runs real PyTorch is ${ORACLE_PYTHON:-.oracle/bin/python}
# (relative to the repo root). Output has no timestamps: re-running on
# unchanged cases reproduces every file byte for byte.
set -euo pipefail

TORCH_VERSION=2.15.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
CASES_DIR=corpus/cases
GOLDENS_DIR="corpus/goldens/torch-$TORCH_VERSION"

mode=write
case "${1-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: oracle/regen-goldens.sh [--check]" >&2; exit 2 ;;
esac

if [[ ! -x "$PY" ]] && ! command -v "$PY" >/dev/null 2>&1; then
  echo "regen-goldens: no Python at '$PY' (set ORACLE_PYTHON; it needs oracle/requirements.txt)" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

shopt -s nullglob
case_files=()
while IFS= read -r f; do case_files+=("$f"); done < <(
  for f in "$CASES_DIR"/*.jsonl; do printf '%s\n' "$f"; done | LC_ALL=C sort)

# METADATA.json first: it also refuses to run under any torch but $TORCH_VERSION.
names=()
for f in "${case_files[@]}"; do names+=("$(basename "$f")"); done
"$PY" - "$TORCH_VERSION" "$tmp/METADATA.json" "${names[@]}" <<'PYEOF' 2>"$tmp/.metadata.err" || { cat "$tmp/.metadata.err" >&2; exit 1; }
import json, platform, sys
want, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
import torch
if torch.__version__.split("+")[0] != want:
    sys.exit(f"regen-goldens: torch {torch.__version__} is installed, goldens are for torch {want}")
meta = {
    "torch": torch.__version__,
    "python": sys.version.split()[0],
    "platform": {"system": platform.system(), "machine": platform.machine()},
    "case_format": "v1",
    "command": "oracle/regen-goldens.sh",
    "capture": "${ORACLE_PYTHON:-.oracle/bin/python} oracle/capture.py "
               f"corpus/cases/NAME.jsonl > corpus/goldens/torch-{want}/NAME.jsonl",
    "cases": names,
}
with open(out, "w", encoding="utf-8") as f:
    f.write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
PYEOF
rm -f "$tmp/.metadata.err"

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
rm -f "$tmp/.capture.err"

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

if [[ $mode == check ]]; then
  if diff -r -u "$GOLDENS_DIR" "$tmp" >&2; then
    echo "goldens reproducible: ${#case_files[@]} case file(s) match $GOLDENS_DIR" >&2
    exit 0
  fi
  echo "regen-goldens --check: goldens differ from a fresh capture (run oracle/regen-goldens.sh)" >&2
  exit 1
fi

mkdir -p "$GOLDENS_DIR"
# Drop goldens whose case file no longer exists.
for g in "$GOLDENS_DIR"/*.jsonl; do
  [[ -e "$CASES_DIR/$(basename "$g")" ]] || { echo "remove stale $g" >&2; rm -f "$g"; }
done
cp -r "$tmp"/* "$GOLDENS_DIR"/
echo "wrote ${#case_files[@]} golden(s) and METADATA.json to $GOLDENS_DIR" >&2
