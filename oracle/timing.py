"""Times in real PyTorch what benches/spec.rs times in the reference:
``repr(v)`` and ``v.to_jsonable()`` for each build case of benches/inputs.jsonl,
``lookup_spec_from_dynamo_source(source, spec)`` for each lookup case.

Usage: .oracle/bin/python oracle/timing.py benches/inputs.jsonl > timings.json
Prints {"repr/ID": ns, "to_jsonable/ID": ns, ...}: the best of several
timeit repeats, per call, in nanoseconds of process CPU time, as
benches/spec.rs measures thread CPU time (criterion's mean is compared
against it by oracle/bench-ratio.sh): the ratio holds on a loaded machine.
"""

import json
import sys
import time
import timeit

import capture_cases  # noqa: E402  (the oracle's own case evaluator)


def per_call_ns(fn, number):
    best = min(timeit.repeat(fn, number=number, repeat=7, timer=time.process_time))
    return best / number * 1e9


def main(path):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # torch import chatter stays off the result
    capture_cases.import_torch()
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            capture_cases.reset_spec_state()
            vars_ = capture_cases.make_vars(case.get("vars", []))
            if case["kind"] == "lookup":
                source = capture_cases.eval_source(case["source"], vars_)
                spec = capture_cases.eval_value(case["spec"], vars_)
                lookup = capture_cases.builder.lookup_spec_from_dynamo_source
                out[f"lookup/{case['id']}"] = per_call_ns(lambda: lookup(source, spec), 5000)
            if case["kind"] == "build":
                v = capture_cases.eval_value(case["value"], vars_)
                out[f"repr/{case['id']}"] = per_call_ns(lambda: repr(v), 2000)
                out[f"to_jsonable/{case['id']}"] = per_call_ns(lambda: v.to_jsonable(), 2000)
    sys.stdout = real_stdout
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
