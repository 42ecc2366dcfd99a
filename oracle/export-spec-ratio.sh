#!/usr/bin/env bash
# The reference's `eval` beside the oracle's capture of the same export_spec case file, as
# whole processes (start-up included on both sides: torchspec's is a few milliseconds,
# PyTorch's import a few seconds), timed by /usr/bin/time: user + system CPU seconds and
# wall seconds of each run, and the CPU ratio of the medians.
# Usage: oracle/export-spec-ratio.sh [FILE] [RUNS]
#   FILE  default corpus/cases/export-spec-gen-s3.jsonl (gen --kind export_spec --seed 3 --count 5000)
#   RUNS  runs of each side (default 3; the oracle takes minutes a run on 5,000 cases)
# Needs the oracle venv (see README) and a release build (cargo build --release).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
FILE="${1:-corpus/cases/export-spec-gen-s3.jsonl}"
RUNS="${2:-3}"
BIN="${CARGO_TARGET_DIR:-target}/release/torchspec"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
export PYTHONHASHSEED=0
for i in $(seq "$RUNS"); do
  /usr/bin/time -f '%U %S %e' -o "$tmp/a.$i" "$BIN" eval "$FILE" >/dev/null
  /usr/bin/time -f '%U %S %e' -o "$tmp/b.$i" "$PY" oracle/capture.py "$FILE" >/dev/null 2>&1
done
python3 - "$tmp" "$RUNS" "$FILE" <<'PYEOF'
import statistics, sys
tmp, runs, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def read(side):
    rows = [list(map(float, open(f"{tmp}/{side}.{i}").read().split()[-3:])) for i in range(1, runs + 1)]
    return statistics.median(u + s for u, s, _ in rows), statistics.median(w for _, _, w in rows)
a_cpu, a_wall = read("a")
b_cpu, b_wall = read("b")
print(f"{path}: {runs} run(s) a side, medians")
print(f"  torchspec eval       cpu {a_cpu:9.3f} s  wall {a_wall:9.3f} s")
print(f"  oracle/capture.py    cpu {b_cpu:9.3f} s  wall {b_wall:9.3f} s")
print(f"  ratio (cpu)          {b_cpu / max(a_cpu, 1e-3):9.1f}x")
PYEOF
