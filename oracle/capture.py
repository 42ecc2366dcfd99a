"""PyTorch oracle: evaluate a case file (case format v1, JSON Lines) with real PyTorch
(2.15.0, the version the reference targets; older versions for the version matrix of
`oracle/regen-goldens.sh --torch X`, where an API missing in that version is what Python
raises at its point of use, e.g. an AttributeError, as that case's error result).

Usage:
    python oracle/capture.py CASES.jsonl > RESULTS.jsonl
    python oracle/capture.py --program PATH [--pass NAME ...]   # program report (one line)
    python oracle/capture.py --program-goldens OUTDIR P.pt2 ...  # program goldens (regen-goldens.sh)
    python oracle/capture.py --probes PROGRAM.pt2 PROBES.jsonl   # run input probes
    python oracle/capture.py --serve                   # persistent oracle (see main_serve)
    python oracle/capture.py --shard k/n CASES.jsonl   # only the cases of shard k of n

This file is the command line; the modes live in three modules: case files in
capture_cases.py (the case language, its validation and evaluation), program
and probe mode and the program goldens in capture_programs.py (following
/work/shared/program-report.md and /work/shared/passes.md; probe mode is
described at run_probe and decode_probe_value there), serve mode, the kept
mutants' goldens and sharding in capture_serve.py.

The contract is /work/shared/case-format.md (case format v1). For each case line
this prints exactly one result line on stdout, in order, with the same id:

    {"id": ID, "ok": {"repr": ..., "jsonable": ...}}    build / lookup
    {"id": ID, "ok": {"name": ...}}                     source_name
    {"id": ID, "error": {"type": ..., "message": ...}}  evaluation raised

The whole file is validated structurally before anything is evaluated. A
malformed file prints ``FILE:LINE: what is wrong`` on stderr, nothing on stdout,
and exits 1. stdout carries only result lines: everything PyTorch prints, warns
or logs goes to stderr (file descriptor 1 itself is pointed at stderr while
PyTorch runs; results are written through a saved duplicate of the real stdout).
Output is deterministic: the same case file always gives the same bytes.

This file is written against the PyTorch API only (dynamic_spec.py,
_dynamo/source.py, lookup_spec_from_dynamo_source), independently of the
Rust reimplementation.
"""

from __future__ import annotations

import sys

from capture_cases import USAGE, _stdout_to_stderr, evaluate, import_torch, read_cases
from capture_programs import main_probes, main_program, main_program_goldens
from capture_serve import main_mutant_goldens, main_serve, main_shard


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        return main_serve()
    if argv and argv[0] == "--shard":
        return main_shard(argv[1:])
    if argv and argv[0] == "--program":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        return main_program(argv[1:])
    if argv and argv[0] == "--program-goldens":
        if len(argv) < 3 or not all(p.endswith(".pt2") for p in argv[2:]):
            print(USAGE, file=sys.stderr)
            return 2
        return main_program_goldens(argv[1], argv[2:])
    if argv and argv[0] == "--mutant-goldens":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        return main_mutant_goldens(argv[1], argv[2:])
    if argv and argv[0] == "--probes":
        if len(argv) != 3:
            print(USAGE, file=sys.stderr)
            return 2
        return main_probes(argv[1], argv[2])
    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    path = argv[0]
    cases = read_cases(path)
    real_stdout = _stdout_to_stderr()
    if cases:
        import_torch()
    for case in cases:
        line = evaluate(case)
        # See _write_line: a lone surrogate goes back out as its JSON escape.
        real_stdout.write(line.encode("utf-8", "backslashreplace") + b"\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
