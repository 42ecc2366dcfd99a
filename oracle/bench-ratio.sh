#!/usr/bin/env bash
# Runs the criterion benches and the same operations in PyTorch, in one run,
# and prints torchspec's speed-up over PyTorch per benchmark.
# Usage: oracle/bench-ratio.sh   (needs the oracle venv, see README)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cargo bench --bench spec -- --noplot >"$tmp/criterion.txt" 2>&1 || { cat "$tmp/criterion.txt"; exit 1; }
"$PY" oracle/timing.py benches/inputs.jsonl >"$tmp/torch.json" 2>/dev/null
"$PY" - "$tmp/torch.json" <<'PYEOF'
import json, os, sys
torch = json.load(open(sys.argv[1]))
print(f"{'benchmark':<52} {'pytorch':>12} {'torchspec':>12} {'ratio':>8}")
for name, t_ns in torch.items():
    # criterion names a benchmark's directory with its `/` turned into `_`.
    est = os.path.join("target", "criterion", name.replace("/", "_"), "new", "estimates.json")
    if not os.path.exists(est):
        print(f"{name:<52} {t_ns:>10.0f}ns {'(missing)':>12}")
        continue
    r_ns = json.load(open(est))["mean"]["point_estimate"]
    print(f"{name:<52} {t_ns:>10.0f}ns {r_ns:>10.0f}ns {t_ns / r_ns:>7.1f}x")
PYEOF
