#!/usr/bin/env bash
# Run each example one-liner of `torchspec drift A B` with stock torch A and torch B
# (.oracle-A/bin/python, .oracle-B/bin/python; see oracle/regen-goldens.sh --torch)
# and check that it shows the change and reproduces both goldens.
#
# Usage (from any directory): oracle/check-drift-examples.sh 2.14.1 2.15.0
# (TORCHSPEC=path/to/torchspec uses a built binary instead of `cargo run --release --`)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: oracle/check-drift-examples.sh A B" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
for v in "$1" "$2"; do
  if [[ $v == 2.15.0 && ! -e .oracle-2.15.0 ]]; then py=.oracle/bin/python; else py=.oracle-$v/bin/python; fi
  [[ -x $py ]] || { echo "check-drift-examples: no $py (run oracle/regen-goldens.sh --torch $v)" >&2; exit 2; }
done
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# The 2.15.0 oracle is .oracle/ (oracle/requirements.txt); give it the versioned name too.
if [[ ! -e .oracle-2.15.0 ]]; then ln -s .oracle .oracle-2.15.0; trap 'rm -rf "$tmp"; rm -f .oracle-2.15.0' EXIT; fi
${TORCHSPEC:-cargo run --quiet --release --} drift "$1" "$2" --json >"$tmp/drift.json"
python3 oracle/check_drift_examples.py "$1" "$2" <"$tmp/drift.json"
