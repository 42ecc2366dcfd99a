"""Outcomes of mutated program files (oracle/mutate.py) in torch.export.load and
in `torchspec program`.

Usage:
    .oracle/bin/python oracle/mutant_outcomes.py target/mutants/s1 \
        [--out FILE] [--torchspec BIN] [--registrations FILE] [--timeout SECONDS]

Reads DIR/mutants.jsonl and writes FILE (default DIR/outcomes.jsonl), one line per
mutant, in the order of mutants.jsonl:

    {"id", "class", "outcome": "ok"}
    {"id", "class", "outcome": "error", "type", "message",
     "cause": {"type", "message"} | null, "context": {"type", "message"} | null,
     "inner": {"type", "message", "cause", "context"},
     "original": {"type", "message"}}
    {"id", "class", "outcome": "timeout" | "crash", ...}

and on every line "torchspec": {"status", "stderr"} (exit status of
`torchspec program FILE --registrations FILE`, first stderr line; status null
on a timeout).

type/message/cause/context are the exception torch.export.load raised and its
__cause__ / __context__. That exception is often not the informative one:
torch/export/__init__.py's load() wraps load_pt2 in `except RuntimeError:` and
only *logs* the error (`log.warning("Ran into the following error when
deserializing", exc_info=True)` on the logger "torch.export"), then tries the
pre-2.8 layout, which finds no root `version` entry and raises a fresh
`RuntimeError: We ran into an error when deserializing the saved file...` from
outside the except block, so its __cause__ and __context__ are both None.
Exceptions of other classes (KeyError, ValueError, AssertionError, TypeError,
...) are not caught there and reach the caller unchanged.

"inner" is therefore taken from that log record: a logging.Handler on the
"torch.export" logger keeps the exc_info of every record of the current load
(exactly the object load_pt2 raised, no second deserialization that could
differ from the first). When the raised exception is the generic wrapper, inner
is the logged exception; otherwise (a non-RuntimeError, or a pre-2.8 archive
whose own path raised) inner is the raised exception itself. "original" follows
inner's __cause__ chain to its end: serialize.py re-raises every failure inside
a node as `SerializeError(f"Failed deserializing node ... Original exception
<traceback>") from e`, and the `from e` is the original error (KeyError,
AssertionError, ...). That is the type the report compares with torchspec's.

The loads run in one warm worker process (this script with --worker; it imports
oracle/zoo_types.py first, as capture.py does, for the zoo's custom ops and
pytree types). A load that takes longer than --timeout seconds, or kills the
worker, is recorded as "timeout" / "crash" and the worker is restarted.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time

from golden_encoding import exception_message

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERIC = "We ran into an error when deserializing the saved file."
MAX_MESSAGE = 4000


def exc_json(e):
    if e is None:
        return None
    msg = exception_message(e)
    out = {"type": type(e).__name__,
           "message": msg if len(msg) <= MAX_MESSAGE else msg[:MAX_MESSAGE] + "...[truncated]"}
    return out


def exc_full(e):
    d = exc_json(e)
    d["cause"] = exc_json(e.__cause__)
    d["context"] = exc_json(e.__context__)
    return d


def original_of(e):
    seen = set()
    while e.__cause__ is not None and id(e) not in seen:
        seen.add(id(e))
        e = e.__cause__
    return e


def cache_schema_type_hints() -> None:
    """Memoize `typing.get_type_hints` for the classes of
    torch/_export/serde/schema.py, in this process only.

    `_dict_to_dataclass` (torch/_export/serde/serialize.py) calls
    `typing.get_type_hints(cls, globalns=vars(schema))` for every dict of
    the program JSON it converts, which re-evaluates the class's annotations
    each time: a third of a `torch.export.load` of a zoo program. The hints
    of a schema class are a pure function of the class (the dict is only
    read), so the cache changes no outcome; it only applies to exactly that
    call (the schema module's namespace, no localns, no extras), and every
    other call goes to typing unchanged. Measured on 400 mutants of seed 77:
    the same outcomes byte for byte, 28 ms -> 18 ms a mutant."""
    import typing

    from torch._export.serde import schema

    if getattr(typing.get_type_hints, "_schema_cache", None) is not None:
        return
    original = typing.get_type_hints
    namespace = vars(schema)
    cache: dict = {}

    def get_type_hints(obj, globalns=None, localns=None, include_extras=False):
        if (globalns is namespace and localns is None and not include_extras
                and getattr(obj, "__module__", None) == schema.__name__):
            hints = cache.get(obj)
            if hints is None:
                hints = cache[obj] = original(obj, globalns)
            return hints
        return original(obj, globalns, localns, include_extras)

    get_type_hints._schema_cache = cache
    typing.get_type_hints = get_type_hints


# ---------------------------------------------------------------------------
# The worker: one warm process, one path per stdin line, one JSON line out.
# ---------------------------------------------------------------------------

class KeepExceptions:
    """A handler on the "torch.export" logger that keeps the exc_info of every
    record (load() logs the real error before raising a generic one)."""

    def __init__(self):
        import logging

        class Keep(logging.Handler):
            def __init__(self):
                super().__init__(logging.DEBUG)
                self.excs = []

            def emit(self, record):
                if record.exc_info and record.exc_info[1] is not None:
                    self.excs.append(record.exc_info[1])

        self.handler = Keep()
        lg = logging.getLogger("torch.export")
        for h in list(lg.handlers):  # torch's own (it prints every traceback)
            lg.removeHandler(h)
        lg.addHandler(self.handler)
        lg.propagate = False
        lg.setLevel(logging.WARNING)

    def load(self, target) -> dict:
        """torch.export.load(target) as an outcome: {"outcome": "ok"} and "ep",
        or {"outcome": "error", type, message, cause, context, inner, original}."""
        import torch
        self.handler.excs.clear()
        self.last = None  # the exception the deserializer raised, for its traceback
        try:
            ep = torch.export.load(target)
            return {"outcome": "ok", "ep": ep}
        except BaseException as e:  # noqa: BLE001 - every failure is an outcome
            if isinstance(e, KeyboardInterrupt):
                raise
            res = {"outcome": "error"}
            res.update(exc_full(e))
            inner = e
            if str(e).startswith(GENERIC) and self.handler.excs:
                inner = self.handler.excs[-1]
            res["inner"] = exc_full(inner)
            res["original"] = exc_json(original_of(inner))
            self.last = inner
            return res


def worker() -> int:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever torch prints goes to stderr
    import warnings

    warnings.simplefilter("ignore")
    import zoo_types  # noqa: F401

    cache_schema_type_hints()
    keep = KeepExceptions()
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        res = keep.load(line.rstrip("\n"))
        res.pop("ep", None)
        out.write(json.dumps(res) + "\n")
    return 0


class Worker:
    def __init__(self, log):
        self.log = log
        self.p = None

    def start(self):
        self.p = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            text=True, bufsize=1, cwd=ROOT)
        first = self.p.stdout.readline()
        if not first:
            raise SystemExit("the torch worker did not start (see the stderr log)")

    def stop(self):
        if self.p is not None:
            try:
                self.p.kill()
            except ProcessLookupError:
                pass
            self.p.wait()
            self.p = None

    def load(self, path, timeout):
        if self.p is None:
            self.start()
        self.p.stdin.write(path + "\n")
        self.p.stdin.flush()
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return {"outcome": "timeout", "type": None, "message": f"no answer in {timeout}s"}
        line = self.p.stdout.readline()
        if not line:
            rc = self.p.wait()
            self.p = None
            return {"outcome": "crash", "type": None, "message": f"worker exited with {rc}"}
        return json.loads(line)


def run_torchspec(binary, path, registrations, timeout):
    try:
        r = subprocess.run([binary, "program", path, "--registrations", registrations],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"status": None, "stderr": f"timeout after {timeout}s"}
    err = r.stderr.decode("utf-8", "replace").splitlines()
    return {"status": r.returncode, "stderr": err[0] if err else ""}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    ap.add_argument("--torchspec", default=None,
                    help="the torchspec binary (default: $CARGO_TARGET_DIR/release/torchspec, "
                         "else target/release/torchspec)")
    ap.add_argument("--registrations",
                    default=os.path.join(ROOT, "corpus", "programs", "registrations.json"))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--no-torchspec", action="store_true")
    args = ap.parse_args(argv)
    if args.worker:
        return worker()
    if not args.dir:
        ap.error("DIR is required")

    binary = args.torchspec
    if binary is None:
        tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
        binary = os.path.join(tdir, "release", "torchspec")
    if not args.no_torchspec and not os.path.exists(binary):
        raise SystemExit(f"no torchspec binary at {binary} (--torchspec BIN)")

    with open(os.path.join(args.dir, "mutants.jsonl")) as f:
        mutants = [json.loads(x) for x in f if x.strip()]
    out_path = args.out or os.path.join(args.dir, "outcomes.jsonl")
    log = open(os.path.join(args.dir, "torch-stderr.log"), "w")
    w = Worker(log)
    t0 = time.time()
    n_ok = 0
    try:
        with open(out_path, "w") as out:
            for k, m in enumerate(mutants):
                path = os.path.abspath(os.path.join(args.dir, m["id"] + ".pt2"))
                res = {"id": m["id"], "class": m["class"]}
                res.update(w.load(path, args.timeout))
                n_ok += res["outcome"] == "ok"
                if not args.no_torchspec:
                    res["torchspec"] = run_torchspec(binary, path, args.registrations, args.timeout)
                out.write(json.dumps(res) + "\n")
                if (k + 1) % 200 == 0:
                    print(f"{k + 1}/{len(mutants)} ({time.time() - t0:.0f}s, {n_ok} ok)", file=sys.stderr)
    finally:
        w.stop()
    print(f"{len(mutants)} outcomes in {out_path} ({time.time() - t0:.0f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
