"""Round trips of program files through PyTorch's two readers and writers (issue 35 item 1).

Usage:
    .oracle/bin/python oracle/round_trip.py [FILE.pt2 ...] [--mutants DIR] [--timeout S]
        [--out target/round-trip/results.jsonl] [--findings docs/upstream/round-trip.jsonl]
    .oracle/bin/python oracle/round_trip.py --fuzz-log STATE.round-trips.jsonl --fuzz-state STATE
        (the round-trip findings of a `torchspec fuzz --live --mutate` run, judged and
        grouped by oracle/round_trip_fuzz.py into docs/upstream/round-trip-fuzz-sSEED.jsonl)

With no FILE and no --mutants, every corpus/programs/*.pt2 and corpus/weights/*.pt2 (the weights
corpus's MALFORMED archives, broken on purpose, count as invalid: refusing them is
right). `--from-results FILE` rebuilds the findings from a previous --out. Each file goes
through two round trips, each in a worker process:

    cpp     every program JSON of the archive (`models/*.json`, or the pre-2.8
            `serialized_exported_program.json`) read by
            torch._C._export.deserialize_exported_program and written back by
            torch._C._export.serialize_exported_program;
    python  the archive read by torch.export.load and written by torch.export.save
            (torch._export.serde.serialize.deserialize / serialize, what a user runs);
            its models/model.json compared with the input's program JSON.

Output and input are compared as JSON values under Python's rules (json.loads:
NaN and +-Infinity, integers of any size; key order ignored), stricter than `==`
in two ways: a value must keep its type (1 is not 1.0, True is not 1) and floats are
equal when their repr is (-0.0 is not 0.0, nan is nan): oracle/round_trip_json.py,
which `capture.py --serve`'s mutant requests share; the one-liners and the upstream
function of each signature are oracle/round_trip_liners.py.

A worker that dies (signal, exit) or hangs past --timeout is a crash: recorded with
the input and the signal, and a fresh worker takes the next input. A writer that
raises after the reader accepted is recorded as such.

--out gets one line per (file, reader): the outcome. --findings gets one line per
signature of the findings (class 1 crash, 2 silent change, 3 a valid program refused),
with its count, first input, the upstream function responsible, and a `python -c`
one-liner run here on stock torch, with what it printed (`prints`). Files under
--mutants may be invalid: a reader refusing one is not a finding.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

from round_trip_json import _exc, compare, findings_of, fmt_path, program_entries, python_write_back
from round_trip_liners import ROOT, crash_liner, function_of, mutation_class, one_liner, run_liner

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------
# The worker: one round trip per request line.
# ---------------------------------------------------------------------------

def cpp_round_trip(path: str) -> list[dict]:
    import torch
    out = []
    with zipfile.ZipFile(path) as z:
        for entry in program_entries(z):
            text = z.read(entry).decode("utf-8")
            r = {"entry": entry}
            try:
                p = torch._C._export.deserialize_exported_program(text)
            except Exception as e:  # noqa: BLE001 - every failure is an outcome
                out.append({**r, "outcome": "read_error", **_exc(e)})
                continue
            try:
                back = torch._C._export.serialize_exported_program(p)
            except Exception as e:  # noqa: BLE001
                out.append({**r, "outcome": "write_error", **_exc(e)})
                continue
            out.append({**r, **compare(text, back)})
    return out


def python_round_trip(path: str) -> list[dict]:
    import torch
    with zipfile.ZipFile(path) as z:
        entries = program_entries(z)
        entry = next((e for e in entries if e.endswith("models/model.json")), entries[0])
        text = z.read(entry).decode("utf-8")
    r = {"entry": entry}
    try:
        ep = torch.export.load(path)
    except Exception as e:  # noqa: BLE001
        return [{**r, "outcome": "read_error", **_exc(e)}]
    try:
        back = python_write_back(ep)
    except Exception as e:  # noqa: BLE001
        return [{**r, "outcome": "write_error", **_exc(e)}]
    return [{**r, **compare(text, back)}]


def worker() -> None:
    import warnings
    warnings.simplefilter("ignore")
    import torch  # noqa: F401
    try:  # the zoo's pytree types and custom ops, as capture.py registers them
        import zoo_types  # noqa: F401
    except ImportError:
        pass
    sys.stdout.write("ready\n")  # imports done: --timeout counts from the request on
    sys.stdout.flush()
    for line in sys.stdin:
        req = json.loads(line)
        fn = cpp_round_trip if req["reader"] == "cpp" else python_round_trip
        res = fn(req["path"])
        sys.stdout.write(json.dumps({"results": res}, allow_nan=True) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------------------
# The parent: workers that may die.
# ---------------------------------------------------------------------------

STARTUP_TIMEOUT = 300


class Worker:
    def __init__(self):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-W", "ignore", os.path.abspath(__file__), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     cwd=HERE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        if not self.sel.select(STARTUP_TIMEOUT) or self.proc.stdout.readline() != "ready\n":
            raise SystemExit("round_trip.py: a worker did not start (import torch)")

    def ask(self, req: dict, timeout: float) -> dict:
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        if not self.sel.select(timeout):
            self.proc.kill()
            self.proc.wait()
            return {"outcome": "hang", "timeout_s": timeout}
        line = self.proc.stdout.readline()
        if line:
            return json.loads(line)
        rc = self.proc.wait()
        self.err.seek(0)
        tail = self.err.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        sig = signal.Signals(-rc).name if rc < 0 else None
        return {"outcome": "crash", "returncode": rc, "signal": sig, "stderr": tail}

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def rel(path: str) -> str:
    p = os.path.relpath(os.path.abspath(path), ROOT)
    return p if not p.startswith("..") else os.path.abspath(path)


def round_trips(files, readers, timeout: float, out_path: str) -> list[dict]:
    """One record per (file, reader, program entry), written to out_path as they come."""
    records = []
    w = None
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as out:
        for reader in readers:
            for f, valid in files:
                if w is None:
                    w = Worker()
                t0 = time.monotonic()
                reply = w.ask({"reader": reader, "path": os.path.abspath(f)}, timeout)
                if "results" not in reply:  # the worker is gone: a crash or a hang
                    w.close()
                    w = None
                    results = [{"entry": None, **reply}]
                else:
                    results = reply["results"]
                for res in results:
                    rec = {"file": rel(f), "reader": reader, "valid": valid,
                           "seconds": round(time.monotonic() - t0, 1), **res}
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    records.append(rec)
                    print(f"{reader:6} {rel(f)} {res.get('entry') or ''}: {res['outcome']}"
                          + (f" ({res['differences']} paths)" if res["outcome"] == "differs" else ""),
                          file=sys.stderr, flush=True)
    if w is not None:
        w.close()
    return records


def findings(records: list[dict], timeout: float, version: str) -> list[dict]:
    """The records' findings by signature, each with a one-liner run here."""
    groups: dict = {}
    for rec in records:
        # A mutant's JSON is non-canonical by construction (unknown fields, a key
        # left at its default, a re-indented treespec): the writer normalising it
        # is no finding until each mutation class is triaged, so only its crashes
        # and writer exceptions count.
        if not rec["valid"] and rec["outcome"] == "differs":
            continue
        for cls, sig, n, example in findings_of(rec, rec["reader"], rec["valid"]):
            g = groups.setdefault(sig, {"class": cls, "signature": sig, "reader": rec["reader"],
                                        "count": 0, "inputs": 0, "first": None})
            g["inputs"] += 1
            g["count"] += n
            cls_of = mutation_class(rec["file"])
            if cls_of is not None:
                by = g.setdefault("by_mutation_class", {})
                by[cls_of] = by.get(cls_of, 0) + 1
            if g["first"] is None:
                g["first"] = {"file": rec["file"], "entry": rec.get("entry"), "result": rec,
                              "example": example}
    out = []
    for sig, g in sorted(groups.items(), key=lambda kv: (kv[1]["class"], kv[0])):
        first = g["first"]
        res = first["result"]
        entry = first["entry"]
        if entry is None:
            with zipfile.ZipFile(os.path.join(ROOT, first["file"])) as z:
                entry = program_entries(z)[0]
        if res["outcome"] == "differs":
            p, a, b = first["example"]
            make = lambda reg: one_liner(g["reader"], first["file"], entry, p, reg)  # noqa: E731
            detail = {"path": fmt_path(p), "input": a, "output": b}
        else:
            make = lambda reg: crash_liner(g["reader"], first["file"], entry, reg)  # noqa: E731
            detail = {k: res[k] for k in ("outcome", "type", "message", "signal", "returncode", "stderr")
                      if k in res}
        # stock torch first; the zoo's pytree types and custom ops only if it needs them
        liner = make(False)
        ran = run_liner(liner, timeout)
        if ran["returncode"] != 0 and res["outcome"] == "differs":
            with_reg = run_liner(make(True), timeout)
            if with_reg["returncode"] == 0:
                liner, ran = make(True), with_reg
        out.append({
            "class": g["class"], "signature": sig, "count": g["count"], "inputs": g["inputs"],
            "first": first["file"] + (f" ({first['entry']})" if first["entry"] else ""),
            "count_note": "paths changed" if res["outcome"] == "differs" else "inputs",
            "function": function_of(g["reader"], sig),
            **({"by_mutation_class": dict(sorted(g["by_mutation_class"].items()))}
               if "by_mutation_class" in g else {}),
            **detail, "one_liner": liner, "torch": version,
            "prints": ran["stdout"] if ran["returncode"] == 0 else None,
            "raises": None if ran["returncode"] == 0 else ran["last_stderr"],
            "returncode": ran["returncode"],
            # a crash or writer exception seen in a worker must also happen in a fresh process
            "reproduced": (ran["returncode"] != 0) == (res["outcome"] != "differs"),
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--mutants", action="append", default=[], help="a DIR of *.pt2 that may be invalid")
    ap.add_argument("--readers", default="cpp,python")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "round-trip", "results.jsonl"))
    ap.add_argument("--findings", default=os.path.join(ROOT, "docs", "upstream", "round-trip.jsonl"))
    ap.add_argument("--from-results", metavar="FILE",
                    help="rebuild the findings from a previous --out without running the round trips")
    ap.add_argument("--fuzz-log", metavar="LOG",
                    help="the round-trip log of a `torchspec fuzz --live --mutate` run "
                         "(STATE.round-trips.jsonl): its findings, judged (oracle/round_trip_fuzz.py)")
    ap.add_argument("--fuzz-state", metavar="STATE", help="that run's state file (its tallies)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker()
        return
    import torch
    version = torch.__version__.split("+")[0]
    if args.fuzz_log:
        import round_trip_fuzz
        round_trip_fuzz.main(args.fuzz_log, args.fuzz_state, args.timeout, version)
        return
    if args.from_results:
        from weights_zoo import MALFORMED
        with open(args.from_results) as f:
            records = [json.loads(line) for line in f]
        for r in records:
            r["valid"] = r["valid"] and os.path.basename(r["file"])[:-len(".pt2")] not in MALFORMED
    else:
        from weights_zoo import MALFORMED  # archives broken on purpose: refusing them is right
        files = [(f, True) for f in args.files]
        if not args.files and not args.mutants:
            files = [(f, True) for f in sorted(glob.glob(os.path.join(ROOT, "corpus", "programs", "*.pt2")))
                     + sorted(glob.glob(os.path.join(ROOT, "corpus", "weights", "*.pt2")))]
        files = [(f, valid and os.path.basename(f)[:-len(".pt2")] not in MALFORMED) for f, valid in files]
        for d in args.mutants:
            files += [(f, False) for f in sorted(glob.glob(os.path.join(d, "*.pt2")))]
        records = round_trips(files, args.readers.split(","), args.timeout, args.out)
    found = findings(records, args.timeout, version)
    os.makedirs(os.path.dirname(os.path.abspath(args.findings)), exist_ok=True)
    with open(args.findings, "w") as f:
        for x in found:
            f.write(json.dumps(x, allow_nan=True) + "\n")
    tally: dict = {}
    for r in records:
        k = f"{r['reader']} {r['outcome']}"
        tally[k] = tally.get(k, 0) + 1
    print(json.dumps({"files": len({r["file"] for r in records}), "outcomes": dict(sorted(tally.items())),
                      "findings": len(found), "torch": version}), flush=True)


if __name__ == "__main__":
    main()
