"""The names the oracle shares with the Rust code: the passes, the golden pass
pipelines, the bench pipeline and the case kinds with their keys, read from
oracle/names.json (written from the Rust declarations in src/names.rs; edit
those, and `cargo test --test it names` rewrites the file). Standard library
only: it is read under any Python, with or without torch.

Usage (for shell scripts):
    python3 oracle/names.py pipelines   # one golden pipeline a line, passes
                                        # space-separated (the first line empty)
"""

from __future__ import annotations

import json
import os
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "names.json"),
          encoding="utf-8") as _f:
    _NAMES = json.load(_f)

# The passes of shared/passes.md, in their declared order.
PASSES: tuple[str, ...] = tuple(_NAMES["passes"])

# The pass pipelines recorded in corpus/goldens/torch-X/programs/NAME.jsonl
# (and NAME.serialized.jsonl), after the line of the program as loaded (no pass).
GOLDEN_PIPELINES: tuple[tuple[str, ...], ...] = tuple(
    tuple(p) for p in _NAMES["golden_pipelines"])

# The pipeline benches/program.rs and oracle/program_timing.py time.
BENCH_PIPELINE: list[str] = list(_NAMES["bench_pipeline"])

# The case kinds, in the order the format lists them.
KINDS: tuple[str, ...] = tuple(k["name"] for k in _NAMES["case_kinds"])

# Top-level keys allowed per kind ("vars" is optional for every kind).
CASE_KEYS: dict[str, set[str]] = {k["name"]: set(k["keys"]) for k in _NAMES["case_kinds"]}

# Keys each kind requires, in the order they are checked.
REQUIRED_CASE_KEYS: dict[str, tuple[str, ...]] = {
    k["name"]: tuple(k["required"]) for k in _NAMES["case_kinds"]}


def main(argv: list[str]) -> int:
    if argv == ["pipelines"]:
        for pipeline in GOLDEN_PIPELINES:
            print(" ".join(pipeline))
        return 0
    print(__doc__.split("Usage (for shell scripts):\n")[1].rstrip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
