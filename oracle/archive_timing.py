"""Times in real PyTorch what benches/archive.rs times in the reference:
`torch.export.load` of a large archive and its program report
(`archive/report/NAME`), on the files oracle/big_archive.py writes into
target/bench/ (0.5 GB and 4 GB of weights, which torch.export.load reads
in full).

Usage: .oracle/bin/python oracle/archive_timing.py NAME... > timings.json
Prints {"archive/report/NAME": ns, ...}: the best of two calls, CPU time of
this process (as oracle/eval_timing.py measures).
"""

import json
import os
import sys
import time

import capture_programs  # noqa: E402  (the oracle's own program report)

BENCH_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                         "target", "bench")


def cpu_ns(fn) -> float:
    t = time.process_time_ns()
    fn()
    return float(time.process_time_ns() - t)


def main(names: list[str]) -> int:
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    capture_programs.import_torch()
    out = {}
    for name in names:
        path = os.path.join(BENCH_DIR, f"{name}.pt2")
        out[f"archive/report/{name}"] = min(
            cpu_ns(lambda: capture_programs.capture_program(path, [])) for _ in range(2))
    sys.stdout = real_stdout
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["big-0.5g", "big-4g"]))
