"""The accept/refuse table of mutated program files, by mutation class (markdown).

Usage:
    python3 oracle/mutant_report.py target/mutants/s1 [--outcomes FILE] [--top 3] [--examples 12]

Joins DIR/mutants.jsonl (oracle/mutate.py) with DIR/outcomes.jsonl
(oracle/mutant_outcomes.py). PyTorch accepts a mutant when torch.export.load
returned ("ok"); torchspec accepts it when `torchspec program` exited 0. Columns:

    total, PyTorch ok    mutants, and how many of them PyTorch loads
    agree                both accept or both refuse
    ts accepts / pt refuses, ts refuses / pt accepts
    same type            of the mutants both refuse: torchspec's exception name
                         (the first `Name(Error|Exception...): ` in its stderr line)
                         equals PyTorch's original exception type (the end of the
                         __cause__ chain of the logged inner exception; see
                         mutant_outcomes.py); "any" also counts a match with the
                         inner or the raised exception
    ts unsupported       torchspec's "unsupported by the reference loader" (exit 2,
                         counted as a refusal in the columns before it)

then, per class, the most frequent disagreement families: PyTorch's original
type + message prefix against torchspec's stderr prefix (quoted names and
numbers normalised), with one example each. Needs no torch.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

EXC = re.compile(r"(?:^|[\s:(])([A-Za-z_][A-Za-z0-9_]*(?:Error|Exception|Interrupt|Iteration|Exit))(?=: |:$|$)")


def ts_exception(line: str) -> str | None:
    m = EXC.search(line or "")
    return m.group(1) if m else None


def strip_file(line: str, path_hint: str) -> str:
    # torchspec's errors start with "FILE: " (the mutant's path)
    i = line.find(path_hint)
    if i >= 0:
        line = line[i + len(path_hint):]
        line = line.lstrip(":").lstrip()
    return line


def norm(s: str, n: int = 70) -> str:
    s = (s or "").replace("\n", " ")
    s = re.sub(r"'[^']{0,80}'", "'…'", s)
    s = re.sub(r'"[^"]{0,80}"', '"…"', s)
    s = re.sub(r"\d+", "N", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s if len(s) <= n else s[: n - 1] + "…"


def pt_side(o) -> str:
    if o["outcome"] == "ok":
        return "ok"
    if o["outcome"] in ("timeout", "crash"):
        return o["outcome"]
    orig = o.get("original") or o
    return f"{orig.get('type')}: {norm(orig.get('message'))}"


def ts_side(o, mid) -> str:
    t = o.get("torchspec") or {}
    if t.get("status") == 0:
        return "ok"
    if t.get("status") is None:
        return "timeout"
    line = strip_file(t.get("stderr", ""), mid + ".pt2")
    line = re.sub(r"^in `[^`]*`: ", "", line)
    line = re.sub(r"^at \S+: ", "", line)
    return norm(line)


def md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--outcomes")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--examples", type=int, default=12, help="overall disagreement families shown with an example")
    args = ap.parse_args(argv)

    with open(os.path.join(args.dir, "mutants.jsonl")) as f:
        mutants = {m["id"]: m for m in map(json.loads, filter(str.strip, f))}
    with open(args.outcomes or os.path.join(args.dir, "outcomes.jsonl")) as f:
        outcomes = [json.loads(x) for x in f if x.strip()]

    rows = collections.OrderedDict()
    fams = collections.defaultdict(collections.Counter)   # class -> family -> count
    fam_ex = {}
    overall = collections.Counter()
    for o in outcomes:
        if "torchspec" not in o:
            continue
        m = mutants[o["id"]]
        cls = o["class"]
        r = rows.setdefault(cls, collections.Counter())
        pt_ok = o["outcome"] == "ok"
        ts_ok = o["torchspec"].get("status") == 0
        r["total"] += 1
        r["pt_ok"] += pt_ok
        r["ts_ok"] += ts_ok
        r["ts_unsupported"] += "unsupported by the reference loader" in o["torchspec"].get("stderr", "")
        fam = None
        if pt_ok == ts_ok:
            r["agree"] += 1
            if not pt_ok:
                r["both_refuse"] += 1
                te = ts_exception(strip_file(o["torchspec"].get("stderr", ""), m["id"] + ".pt2"))
                orig = (o.get("original") or {}).get("type")
                chain = {orig, o.get("type"), (o.get("inner") or {}).get("type")}
                r["same_type"] += te == orig
                r["same_any"] += te in chain
                if te != orig:
                    fam = ("type", f"pt {orig} / ts {te}")
        elif ts_ok:
            r["ts_accepts"] += 1
            fam = ("ts accepts", "pt " + pt_side(o))
        else:
            r["ts_refuses"] += 1
            fam = ("ts refuses", "ts " + ts_side(o, m["id"]))
        if fam:
            fams[cls][fam] += 1
            overall[(cls,) + fam] += 1
            fam_ex.setdefault((cls,) + fam, (m, o))

    pct = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"
    print("| class | total | PyTorch ok | torchspec ok | agree | ts accepts / pt refuses | "
          "ts refuses / pt accepts | ts unsupported | same type (of both refuse) | same type, any in chain |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = collections.Counter()
    for cls, r in rows.items():
        tot.update(r)
        print(f"| {cls} | {r['total']} | {r['pt_ok']} | {r['ts_ok']} | {r['agree']} ({pct(r['agree'], r['total'])}) "
              f"| {r['ts_accepts']} | {r['ts_refuses']} | {r['ts_unsupported']} | {r['same_type']}/{r['both_refuse']} "
              f"| {r['same_any']}/{r['both_refuse']} |")
    print(f"| **all** | {tot['total']} | {tot['pt_ok']} | {tot['ts_ok']} | {tot['agree']} ({pct(tot['agree'], tot['total'])}) "
          f"| {tot['ts_accepts']} | {tot['ts_refuses']} | {tot['ts_unsupported']} | {tot['same_type']}/{tot['both_refuse']} "
          f"| {tot['same_any']}/{tot['both_refuse']} |")

    print("\n## Most frequent disagreements per class\n")
    print("Accept/refuse disagreements first, then exception-type mismatches where both refuse.\n")
    print("| class | kind | family | count | example |")
    print("|---|---|---|---:|---|")
    for cls in rows:
        c = fams[cls]
        ranked = sorted(c.items(), key=lambda kv: (kv[0][0] == "type", -kv[1], kv[0]))
        for (kind, fam), n in ranked[: args.top]:
            m, _ = fam_ex[(cls, kind, fam)]
            print(f"| {cls} | {kind} | {md_escape(fam)} | {n} | {m['id']} |")

    print(f"\n## The {args.examples} largest accept/refuse disagreement families, one example each\n")
    ranked = [kv for kv in overall.most_common() if kv[0][1] != "type"][: args.examples]
    for (cls, kind, fam), n in ranked:
        m, o = fam_ex[(cls, kind, fam)]
        orig = o.get("original") or {}
        pt = "accepts (ok)" if o["outcome"] == "ok" else \
            f"{o.get('type')} (original: {orig.get('type')}: {(orig.get('message') or '')[:200]!r})"
        print(f"- **{cls} / {kind}** ({n}): `{m['id']}` program `{m['program']}`: {md_escape(m['mutation'])}")
        print(f"  - PyTorch: {md_escape(pt)}")
        print(f"  - torchspec: exit {o['torchspec'].get('status')}: `{md_escape(o['torchspec'].get('stderr', '')[:240])}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
