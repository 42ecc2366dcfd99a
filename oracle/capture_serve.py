"""Serve mode of oracle/capture.py (``--serve``, the live fuzzer's persistent
oracle), the kept mutants' goldens (``--mutant-goldens``) and sharding
(``--shard k/n``): apart from capture_cases.py so that the case path stays
exactly what writes the goldens.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import capture_programs
from capture_cases import (
    CaseFileError, _object_no_duplicates, _reject_constant, _stdout_to_stderr, _write_line,
    check_case, evaluate, import_torch, read_cases,
)


# ---------------------------------------------------------------------------
# Shards of a case file (--shard k/n).
# ---------------------------------------------------------------------------

def shard_of(case_id: str, n: int) -> int:
    """The 0-based shard of a case id among n: FNV-1a 64 of its UTF-8 bytes, mod n.

    The same function as torchspec's `--shard k/n` (src/shard.rs), so
    `capture.py --shard k/n` and `torchspec check --shard k/n` take the same cases.
    """
    h = 0xcbf29ce484222325
    for b in case_id.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h % n


def parse_shard(text: str) -> tuple[int, int] | None:
    """``k/n`` with 1 <= k <= n, as (k - 1, n); None when malformed."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit():
        return None
    k_, n_ = int(k), int(n)
    return (k_ - 1, n_) if 1 <= k_ <= n_ else None


def main_shard(argv: list[str]) -> int:
    """``capture.py --shard k/n CASES.jsonl``: the result lines of the cases in shard k of n."""
    shard = parse_shard(argv[0]) if len(argv) == 2 else None
    if shard is None or argv[1].startswith("-"):
        print("usage: capture.py --shard k/n CASES.jsonl   (1 <= k <= n)", file=sys.stderr)
        return 2
    k, n = shard
    cases = [c for c in read_cases(argv[1]) if shard_of(c["id"], n) == k]
    real_stdout = _stdout_to_stderr()
    if cases:
        import_torch()
    for case in cases:
        real_stdout.write(evaluate(case).encode("utf-8", "backslashreplace") + b"\n")
    real_stdout.flush()
    return 0


# ---------------------------------------------------------------------------
# Serve mode (torchspec fuzz --live): case lines and program requests.
# ---------------------------------------------------------------------------

def serve_case_line(raw: bytes) -> dict[str, Any] | str:
    """One request of serve mode: the result line (str), or an ``invalid`` reply.

    Exactly the checks of read_cases, for one line: a case that read_cases
    would refuse gets ``{"id": ID or null, "invalid": MESSAGE}``, never an exit.
    """
    case_id = None
    try:
        text = raw.decode("utf-8")
        case = json.loads(text, object_pairs_hook=_object_no_duplicates,
                          parse_constant=_reject_constant)
        if isinstance(case, dict) and isinstance(case.get("id"), str):
            case_id = case["id"]
        check_case(case)
    except UnicodeDecodeError as e:
        return {"id": None, "invalid": f"not valid UTF-8: {e}"}
    except RecursionError:
        return {"id": case_id, "invalid": "invalid JSON: nested too deeply"}
    except CaseFileError as e:
        return {"id": case_id, "invalid": str(e)}
    except ValueError as e:
        return {"id": case_id, "invalid": f"invalid JSON: {e}"}
    return evaluate(case)


# Request kinds of serve mode other than case lines: name -> module in oracle/
# whose ``serve(request) -> dict`` answers it (imported on first use).
REQUESTS = {
    "mutant": "serve_mutants",
    "mutant_load": "serve_mutants",
    "mutant_lanes": "serve_mutants",
    "plan": "serve_plans",
    "plan_probes": "serve_plans",
    "plan_goldens": "serve_plans",
}


def serve_request(raw: bytes) -> dict[str, Any]:
    """A line ``{"request": KIND, "id": ID, ...}``: the reply of KIND's module.

    Every reply carries the request's ``id``; an unknown kind or a malformed
    line is answered ``{"id": ..., "invalid": MESSAGE}``.
    """
    try:
        req = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return {"id": None, "invalid": f"invalid JSON: {e}"}
    rid = req.get("id") if isinstance(req, dict) else None
    module = REQUESTS.get(req.get("request")) if isinstance(req, dict) else None
    if module is None:
        return {"id": rid, "invalid": f"unknown request {req.get('request')!r}"}
    import importlib
    # The module gets capture_programs as ORACLE (its golden writers), so it
    # need not import the capture modules back.
    reply = importlib.import_module(module).serve(req, capture_programs)
    reply["id"] = rid
    return reply


def main_serve() -> int:
    """``capture.py --serve``: a persistent oracle speaking JSON Lines.

    Prints ``{"ready": true, "torch": VERSION}`` once PyTorch is imported,
    then reads one case line per stdin line and writes, flushed, the very
    result line capture.py writes for that case in a file (fresh uid counter
    and spec ShapeEnv per case), or ``{"id": ..., "invalid": MESSAGE}`` for a
    line capture.py would refuse. A line that starts ``{"request"`` is a
    program request instead (REQUESTS: mutated program files, ...). A blank line is answered ``{"id": null,
    "invalid": "blank line"}``. Ends at EOF.
    """
    out = _stdout_to_stderr()
    capture_programs.import_torch()  # the case path's torch too
    _write_line(out, {"ready": True, "torch": capture_programs.torch.__version__})
    out.flush()
    for raw in sys.stdin.buffer:
        raw = raw.rstrip(b"\r\n")
        if not raw.strip():
            reply: dict[str, Any] | str = {"id": None, "invalid": "blank line"}
        else:
            try:
                reply = serve_request(raw) if raw.startswith(b'{"request"') \
                    else serve_case_line(raw)
            except Exception as e:  # never lose the stream to one request
                reply = {"id": None, "invalid": f"{type(e).__name__}: {e}"}
        if isinstance(reply, str):
            out.write(reply.encode("utf-8", "backslashreplace") + b"\n")
        else:
            _write_line(out, reply)
        out.flush()
    return 0


def main_mutant_goldens(out_dir: str, files: list[str]) -> int:
    """``--mutant-goldens OUT_DIR corpus/mutants/NAME.json ...``: OUT_DIR/NAME.json,
    what torch.export.load and the C++ deserializer do with each kept mutant
    (oracle/serve_mutants.py), one line each."""
    out = _stdout_to_stderr()
    import_torch()
    import serve_mutants
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        with open(path, encoding="utf-8") as f:
            mutant = json.load(f)
        line = serve_mutants.golden_of(mutant)
        with open(os.path.join(out_dir, mutant["name"] + ".json"), "wb") as f:
            f.write(line.encode("utf-8", "backslashreplace") + b"\n")
    out.flush()
    return 0
