"""Times in real PyTorch what benches/eval.rs times in the reference: a whole
case file through `oracle/capture.py`'s per-case work (read and validate
each line, evaluate it, encode its result line), start-up excluded (Python
and the torch import are not timed; the file's bytes are read once, before).

Usage: .oracle/bin/python oracle/eval_timing.py CASES.jsonl > timings.json
Prints {"eval/FILE": ns}: the best of several runs of the whole file, in
nanoseconds of process CPU time, as benches/eval.rs measures thread CPU time
(criterion's mean is compared against it by oracle/bench-ratio.sh): the
ratio holds on a loaded machine.
"""

import io
import json
import os
import sys
import time

import capture_cases  # noqa: E402  (the oracle's own reader and evaluator)


def run(path):
    # capture_cases.read_cases: split, decode, json.loads, check_case, duplicate ids.
    cases = capture_cases.read_cases(path)
    out = io.BytesIO()
    for case in cases:
        line = capture_cases.evaluate(case)
        out.write(line.encode("utf-8", "backslashreplace") + b"\n")
    return out


def main(path, repeat=3):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # torch import chatter stays off the result
    capture_cases.import_torch()
    run(path)  # warm-up: lazy imports and caches inside torch and sympy
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time_ns()
        run(path)
        best = min(best, time.process_time_ns() - t0)
    sys.stdout = real_stdout
    name = os.path.basename(path).rsplit(".", 1)[0]
    print(json.dumps({f"eval/{name}": best}, indent=2))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
