#!/usr/bin/env bash
# Runs the derived-expression criterion bench and the same work in PyTorch,
# and prints torchspec's speed-up over PyTorch.
# Usage: oracle/derived-bench-ratio.sh   (needs the oracle venv, see README)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${ORACLE_PYTHON:-.oracle/bin/python}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cargo bench --bench derived -- --noplot >"$tmp/criterion.txt" 2>&1 || { cat "$tmp/criterion.txt"; exit 1; }
"$PY" oracle/derived_timing.py benches/derived-inputs.jsonl >"$tmp/torch.json" 2>/dev/null
"$PY" - "$tmp/torch.json" <<'PYEOF'
import json, os, sys
torch = json.load(open(sys.argv[1]))
print(f"{'benchmark':<32} {'pytorch':>14} {'torchspec':>14} {'ratio':>8}")
for name, t_ns in torch.items():
    est = os.path.join("target", "criterion", name.replace("/", "_"), "new", "estimates.json")
    if not os.path.exists(est):
        print(f"{name:<32} {t_ns:>12.0f}ns {'(missing)':>14}")
        continue
    r_ns = json.load(open(est))["mean"]["point_estimate"]
    print(f"{name:<32} {t_ns:>12.0f}ns {r_ns:>12.0f}ns {t_ns / r_ns:>7.1f}x")
PYEOF
