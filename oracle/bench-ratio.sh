#!/usr/bin/env bash
# Runs the criterion benches and the same operations in PyTorch, in one run,
# and prints torchspec's speed-up over PyTorch per benchmark.
# Usage: oracle/bench-ratio.sh [spec|derived|eval|bigtree|export_spec|program|archive]...   (default: spec derived eval bigtree; needs the oracle venv, see README)
#   archive  load + report of the 0.5 GB and 4 GB archives oracle/big_archive.py writes into
#            target/bench/ (written first when missing; about 5 GB of disk)
#   program  load + report, load + passes + report of zoo programs, check-inputs on their probes
#            (oracle/program_timing.py; decoder-5k is the program of 5,071 nodes)
#   spec     repr / to_jsonable / lookup on benches/inputs.jsonl   (oracle/timing.py)
#   derived  build and print random expressions                     (oracle/derived_timing.py)
#   eval     a whole generated case file of 10,000 mixed cases      (oracle/eval_timing.py;
#            CPU time on both sides, start-up excluded: capture.py's reading and per-case loop)
#   bigtree  the same on oracle/make_bench_cases.py's 6,000 cases: large spec trees with derived
#            expressions (2,190 builds, 2,780 lookups, 1,030 source names), written into the target dir
#   export_spec  the same on 200 generated export_spec cases (gen --kind export_spec --seed 3):
#            what a spec does to export, make_fx and compile; PyTorch traces each case
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
benches=("$@"); [[ ${#benches[@]} -gt 0 ]] || benches=(spec derived eval bigtree)
for b in "${benches[@]}"; do
  bench="$b"
  case "$b" in
    spec) timing=oracle/timing.py; inputs=benches/inputs.jsonl ;;
    derived) timing=oracle/derived_timing.py; inputs=benches/derived-inputs.jsonl ;;
    program) timing=oracle/program_timing.py; inputs="large-mlp attention decoder-5k" ;;
    archive)
      timing=oracle/archive_timing.py; inputs="big-0.5g big-4g"
      mkdir -p target/bench
      [[ -e target/bench/big-0.5g.pt2 ]] || "$PY" oracle/big_archive.py target/bench/big-0.5g.pt2
      [[ -e target/bench/big-4g.pt2 ]] || "$PY" oracle/big_archive.py target/bench/big-4g.pt2 --layers 60 ;;
    eval)
      # The file benches/eval.rs builds by itself, written out for PyTorch's side.
      timing=oracle/eval_timing.py; inputs="$tmp/mixed10k.jsonl"
      cargo build --release --quiet
      for kind in build derived lookup source_name; do
        "${CARGO_TARGET_DIR:-target}/release/torchspec" gen --kind "$kind" --seed 7 --count 2500
      done >"$inputs"
      export TORCHSPEC_EVAL_FILE="$inputs" ;;
    bigtree)
      bench=eval; timing=oracle/eval_timing.py
      inputs="${CARGO_TARGET_DIR:-target}/bench/bigtree.jsonl"
      mkdir -p "$(dirname "$inputs")"
      "$PY" oracle/make_bench_cases.py >"$inputs"
      export TORCHSPEC_EVAL_FILE="$inputs" ;;
    export_spec)
      bench=eval; timing=oracle/eval_timing.py; inputs="$tmp/export-spec.jsonl"
      cargo build --release --quiet
      "${CARGO_TARGET_DIR:-target}/release/torchspec" gen --kind export_spec --seed 3 --count 200 >"$inputs"
      export TORCHSPEC_EVAL_FILE="$inputs" ;;
    *) echo "usage: oracle/bench-ratio.sh [spec|derived|eval|bigtree|export_spec|program|archive]..." >&2; exit 2 ;;
  esac
  cargo bench --bench "$bench" -- --noplot >"$tmp/criterion-$b.txt" 2>&1 || { cat "$tmp/criterion-$b.txt"; exit 1; }
  # shellcheck disable=SC2086  # program names are words
  "$PY" "$timing" $inputs >"$tmp/torch-$b.json" 2>/dev/null
done
CRITERION="${CARGO_TARGET_DIR:-target}/criterion" "$PY" - "$tmp"/torch-*.json <<'PYEOF'
import json, os, sys
print(f"{'benchmark':<52} {'pytorch':>12} {'torchspec':>12} {'ratio':>8}")
for path in sys.argv[1:]:
    for name, t_ns in json.load(open(path)).items():
        # criterion names a benchmark's directory with its `/` turned into `_`.
        # ...and a group's benchmark `group/function` is two directories.
        root = os.environ["CRITERION"]
        est = os.path.join(root, name.replace("/", "_"), "new", "estimates.json")
        if not os.path.exists(est):
            est = os.path.join(root, *name.split("/", 1), "new", "estimates.json")
        if not os.path.exists(est):
            print(f"{name:<52} {t_ns:>10.0f}ns {'(missing)':>12}")
            continue
        r_ns = json.load(open(est))["mean"]["point_estimate"]
        print(f"{name:<52} {t_ns:>10.0f}ns {r_ns:>10.0f}ns {t_ns / r_ns:>7.1f}x")
PYEOF
