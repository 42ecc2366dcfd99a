"""Run every example one-liner of a drift report under both torch versions.

Usage (from the repo root; oracle/check-drift-examples.sh does it):
    torchspec drift A B --json | python3 oracle/check_drift_examples.py A B

For each class's example, its `python -c` one-liner runs with .oracle-A/bin/python
and .oracle-B/bin/python (from the repo root: program one-liners load
corpus/programs/NAME.pt2). Checked:
  - the two outputs differ (the example shows the change);
  - where the golden pins the output, each equals that version's golden:
    a case prints its golden line without "id"; a program one-liner prints
    {KEY: report[KEY]} (or the whole-report {"error": ...}); a probe prints
    {"ok": true} or {"error": ...} (pre_kernel is the oracle's measurement, not
    printed); a serialized one-liner prints {"serialized": {"sha256", "length",
    "equals_input"}} or {"error": ...}; a pytree one-liner prints {"str", "num_leaves", "dumps"} or
    {"error": ...} of the line it was built from.
Exit 1 on any failed check. Only the standard library is used here.
"""

import json
import subprocess
import sys

from golden_encoding import dumps  # standard library only


def golden(version, file, id_):
    with open(f"corpus/goldens/torch-{version}/{file}", encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if j.get("id") == id_:
                return j
    return None


def expected(cls, ex, g):
    """What the example's one-liner must print under the version of golden G (None: not pinned)."""
    if g is None:
        return None
    section = cls["section"]
    if section == "case":
        return dumps({k: v for k, v in g.items() if k != "id"})
    if section == "program":
        report = g["report"]
        if "error" in report:
            return dumps({"error": report["error"]})
        return dumps({ex["key"]: report[ex["key"]]})
    if section == "serialized":
        if "error" in g:
            return dumps({"error": g["error"]})
        return dumps({"serialized": {k: g["serialized"][k] for k in ("sha256", "length", "equals_input")}})
    if section == "probe":
        if "load_error" in g:
            return None
        return dumps({"ok": True} if "ok" in g else {"error": g["error"]})
    if section == "pytree":
        if "dumps" in g:
            return dumps({"str": g["str"], "num_leaves": g["num_leaves"], "dumps": g["dumps"]})
        if "error" in g:
            return dumps({"error": g["error"]})
        return None
    return None


def run(version, src):
    p = subprocess.run([f".oracle-{version}/bin/python", "-c", src], capture_output=True,
                       text=True, encoding="utf-8")
    return p.stdout.rstrip("\n")


def main():
    a, b = sys.argv[1], sys.argv[2]
    report = json.load(sys.stdin)
    failed = 0
    for cls in report["classes"]:
        ex = cls["example"]
        name = f"{cls['class']} ({ex['id']})"
        if ex["python"] is None:
            print(f"SKIP {name}: no one-liner: {ex['no_python']}")
            continue
        out = {v: run(v, ex["python"]) for v in (a, b)}
        problems = []
        if out[a] == out[b]:
            problems.append("the one-liner prints the same under both versions")
        for v in (a, b):
            want = expected(cls, ex, golden(v, ex["file"], ex["id"]))
            if want is not None and out[v] != want:
                problems.append(f"torch {v} printed\n    {out[v][:400]}\n  golden\n    {want[:400]}")
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print("  " + p)
        else:
            print(f"ok   {name}: {a}: {out[a][:100]}")
            print(f"     {' ' * len(name)}  {b}: {out[b][:100]}")
    print(f"{len(report['classes'])} example(s), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
