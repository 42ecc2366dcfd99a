"""Times in real PyTorch what benches/program.rs times in the reference, on
the same zoo archives: loading a program and computing its report
(`program/report/NAME`), and loading it, running the pass pipeline and
computing the report of the result (`program/passes/NAME`); and the input
checks of `ep.module()` on the probes of the large programs, up to the
first kernel (`program/check-inputs/NAME`).

Usage: .oracle/bin/python oracle/program_timing.py NAME... > timings.json
Prints {"program/report/NAME": ns, ...}: best of several repeats, per call.
"""

import json
import os
import sys
import timeit

import capture_programs  # noqa: E402  (the oracle's own program report)
import names  # noqa: E402

# The pipeline benches/program.rs runs too (oracle/names.json).
PIPELINE = names.BENCH_PIPELINE


# Keep in step with benches/program.rs: the programs whose probes are
# timed, and the one of thousands of nodes.
CHECK_INPUTS = ["large-mlp", "decoder-5k"]
MANY_NODES = ["decoder-5k"]


def per_call_ns(fn, number, repeat=5):
    best = min(timeit.repeat(fn, number=number, repeat=repeat))
    return best / number * 1e9


class _StopBeforeKernel(Exception):
    """Raised by the marker ``capture_programs.run_probe`` places before the first kernel."""


def _stop() -> None:
    raise _StopBeforeKernel()


def check_inputs_callable(name):
    """What ``check-inputs`` does, in PyTorch: each probe of NAME through
    ``ep.module()`` up to its first kernel. The module is built once; a
    marker call, inserted where ``capture_programs.run_probe`` inserts its own (before
    the graph's first node that is not a placeholder, get_attr or the
    ``_guards_fn`` call), raises so no kernel runs: what is timed is the
    pytree and kwarg checks, the flattening and the input guards."""
    import torch
    path = os.path.join("corpus", "programs", f"{name}.pt2")
    probes = capture_programs.read_probes(os.path.join("corpus", "programs", f"{name}.probes.jsonl"))
    module = torch.export.load(path).module()
    graph = module.graph
    first = next(n for n in graph.nodes
                 if n.op not in ("placeholder", "get_attr")
                 and not (n.op == "call_module" and n.target == "_guards_fn"))
    with graph.inserting_before(first):
        graph.call_function(_stop)
    module.recompile()

    def run():
        for _, args, kwargs, _ in probes:
            try:
                module(*args, **kwargs)
            except Exception:  # _StopBeforeKernel: the checks passed
                pass
    return run


def main(names):
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    capture_programs.import_torch()
    out = {}
    for name in names:
        path = os.path.join("corpus", "programs", f"{name}.pt2")
        capture_programs.capture_program(path, [])  # warm up imports and caches
        # A many-node program takes seconds a call: fewer calls, same best-of.
        number, repeat = (1, 3) if name in MANY_NODES else (3, 5)
        out[f"program/report/{name}"] = per_call_ns(
            lambda: capture_programs.capture_program(path, []), number, repeat)
        out[f"program/passes/{name}"] = per_call_ns(
            lambda: capture_programs.capture_program(path, PIPELINE), number, repeat)
    for name in CHECK_INPUTS:
        if name in names:
            run = check_inputs_callable(name)
            run()
            out[f"program/check-inputs/{name}"] = per_call_ns(run, 50)
    sys.stdout = real_stdout
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:] or ["large-mlp", "decoder-5k"])
