"""Times in real PyTorch what benches/program.rs times in the reference, on
the same zoo archives: loading a program and computing its report
(`program/report/NAME`), and loading it, running the pass pipeline and
computing the report of the result (`program/passes/NAME`).

Usage: .oracle/bin/python oracle/program_timing.py NAME... > timings.json
Prints {"program/report/NAME": ns, ...}: best of several repeats, per call.
"""

import json
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402  (the oracle's own program report)

# Keep in step with benches/program.rs.
PIPELINE = [
    "remove-runtime-assertions",
    "dce",
    "common-getitem-elimination",
    "remove-unnecessary-copy",
]


def per_call_ns(fn, number, repeat=5):
    best = min(timeit.repeat(fn, number=number, repeat=repeat))
    return best / number * 1e9


def main(names):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    capture.import_torch()
    out = {}
    for name in names:
        path = os.path.join("corpus", "programs", f"{name}.pt2")
        capture.capture_program(path, [])  # warm up imports and caches
        out[f"program/report/{name}"] = per_call_ns(lambda: capture.capture_program(path, []), 3)
        out[f"program/passes/{name}"] = per_call_ns(lambda: capture.capture_program(path, PIPELINE), 3)
    sys.stdout = real_stdout
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:] or ["large-mlp"])
