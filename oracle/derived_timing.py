"""Times in real PyTorch what benches/derived.rs times in the reference:
building and printing every case of benches/derived-inputs.jsonl (fresh
spec state and vars per case, then eval and repr; cases that raise count).

Usage: .oracle/bin/python oracle/derived_timing.py benches/derived-inputs.jsonl > timings.json
Prints {"derived/build_print_300": ns}: the best of several timeit repeats
of one pass over all cases, in nanoseconds.
"""

import json
import sys
import timeit

import capture_cases  # noqa: E402  (the oracle's own case evaluator)


def main(path):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # torch import chatter stays off the result
    capture_cases.import_torch()
    import logging
    logging.disable(logging.WARNING)  # "failed to eval" warnings on errors
    with open(path, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]

    def one_pass():
        n = 0
        for case in cases:
            try:
                capture_cases.reset_spec_state()
                vars_ = capture_cases.make_vars(case.get("vars", []))
                n += len(repr(capture_cases.eval_value(case["value"], vars_)))
            except Exception:
                pass
        return n

    best = min(timeit.repeat(one_pass, number=3, repeat=5)) / 3
    sys.stdout = real_stdout
    print(json.dumps({"derived/build_print_300": best * 1e9}, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
