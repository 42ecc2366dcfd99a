"""Do the upstream packets still reproduce? (issue 35 item 5)

Usage:
    .oracle/bin/python oracle/check_upstream.py [--all] [--jobs 2] [NAME ...]
    .oracle-2.14.1/bin/python oracle/check_upstream.py

Runs every packet's `python -c` one-liner(s) from the repository root with the
interpreter running this script as `python` (stock torch, one process per
one-liner) and checks that each prints what the packet says: its stdout, or for a
reader that refuses, the exception text as the last lines of stderr (memory
addresses as `0x<address>`). Packets: the round-trip findings
(docs/upstream/round-trip.jsonl), the export_spec cross-API findings
(docs/upstream/export-spec.jsonl) and the fuzzer packets of classes 1-4
(docs/upstream/upstream-*.md); `--all` adds class 5 (docs/upstream/class-5/).

Writes docs/upstream/check/torch-VERSION.jsonl, one line per packet:
{"name", "verdict": "holds" | "differs", "got": [...]} (read by
oracle/upstream_triage.py for the table's per-version columns), and exits 1 when a
packet does not hold.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

import upstream_triage as T

_ADDRESS = re.compile(r"\b0x[0-9a-f]{6,16}\b")


def run(liner: str, timeout: float) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    try:
        p = subprocess.run(["bash", "-c", liner], cwd=T.ROOT, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": None, "stdout": "", "stderr": f"timeout after {timeout}s"}
    return {"rc": p.returncode, "stdout": p.stdout.strip(), "stderr": _ADDRESS.sub("0x<address>", p.stderr)}


def holds(expect: str | None, got: dict) -> bool:
    if expect is None:
        return False
    if got["rc"] == 0:
        return got["stdout"] == expect or got["stdout"].splitlines()[-1:] == [expect]
    return expect.strip() in got["stderr"]


def said(got: dict) -> str:
    if got["rc"] == 0:
        return got["stdout"].splitlines()[-1] if got["stdout"] else ""
    err = [l for l in got["stderr"].strip().splitlines() if l.strip()]
    return f"exit {got['rc']}: " + (err[-1] if err else "")


def check(p: dict, timeout: float) -> dict:
    gots = [run(liner, timeout) for liner in p["one_liners"]]
    ok = all(holds(e, g) for e, g in zip(p["expects"], gots))
    return {"name": p["name"], "class": p.get("class"), "verdict": "holds" if ok else "differs",
            "expected": p["expects"], "got": [said(g) for g in gots]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all", action="store_true", help="class 5 too")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    version = subprocess.run([sys.executable, "-W", "ignore", "-c", "import torch;print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip().split("+")[0]
    ps = [x for x in T.round_trip_findings() if x.get("reproduced") is not False] + T.export_spec_findings() + [p for p in T.packets()
                                    if args.all or not p["path"].startswith("docs/upstream/class-5/")]
    if args.names:
        ps = [p for p in ps if p["name"] in args.names]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(lambda p: check(p, args.timeout), ps))
    os.makedirs(T.CHECK, exist_ok=True)
    out = os.path.join(T.CHECK, f"torch-{version}.jsonl")
    old = {}
    if args.names and os.path.exists(out):
        with open(out) as f:
            old = {(x := json.loads(line))["name"]: x for line in f}
    old.update({r["name"]: r for r in results})
    with open(out, "w") as f:
        for name in sorted(old):
            f.write(json.dumps(old[name]) + "\n")
    bad = [r for r in results if r["verdict"] != "holds"]
    for r in bad:
        print(f"{r['name']}: differs: expected {r['expected']}, got {r['got']}")
    print(f"torch {version}: {len(results) - len(bad)} of {len(results)} packets hold ({out})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
