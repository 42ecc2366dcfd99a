"""docs/upstream/README.md: the upstream findings by severity, then signature (issue 35 items 3-4).

Usage:
    .oracle/bin/python oracle/upstream_triage.py [--fuzz-state target/live/mutants-state.json ...]

Reads, never edits by hand:
    docs/upstream/round-trip.jsonl        oracle/round_trip.py's findings (classes 1-3)
    docs/upstream/round-trip-fuzz-s*.json(l)  oracle/round_trip.py --fuzz-log's findings of a
                                          `torchspec fuzz --live --mutate` run (classes 1-2,
                                          judged by the rule in oracle/round_trip_fuzz.py), the
                                          normalisations it counts and the round trips per class
    docs/upstream/upstream-*.md           the Python-versus-C++ packets of
                                          `torchspec fuzz --live --mutate`
    docs/upstream/class-5/upstream-*.md   the same, once filed as class 5
    docs/upstream/export-spec.jsonl       oracle/export_spec_findings.py's cross-API findings
                                          (class 4; packets docs/upstream/export-spec-*.md)
    docs/upstream/check/torch-*.jsonl     oracle/check_upstream.py's verdicts per version
    --fuzz-state FILE                     the state of a `torchspec fuzz --live --mutate` run:
                                          its `upstream class 5: CLASS` tallies (the fuzzer
                                          writes no packet for class 5, it counts them) are
                                          summed into docs/upstream/class-5/counts.json,
                                          which the note reads when no --fuzz-state is given

Writes docs/upstream/README.md (the table), one packet per round-trip finding
(docs/upstream/round-trip-HASH.md), and files each fuzzer packet by class:

    4  two readers disagree on a program both should decide the same way: Python
       loads and C++ refuses, or C++ loads JSON that does not fit the schema (Python's
       schema reader, torch._export.serde.serialize._bytes_to_dataclass, refuses the
       mutated text: measured here on the installed torch);
    5  accepted-but-unchecked: C++ loads a program that fits the schema and only
       Python's semantic checks refuse (by design: the C++ reader resolves no operator,
       runs no verifier). Moved to docs/upstream/class-5/ and summarised in one note
       with counts per mutation class.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import re
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UPSTREAM = os.path.join(ROOT, "docs", "upstream")
CLASS5 = os.path.join(UPSTREAM, "class-5")
CHECK = os.path.join(UPSTREAM, "check")

CLASS_NAMES = {
    1: "crash (signal, hang, or the writer raising after the reader accepted)",
    2: "silent change of data on a round trip",
    3: "a valid program refused by one reader",
    4: "two PyTorch readers disagree on a program both should decide the same way",
    5: "accepted-but-unchecked (C++ loads what only Python's semantic checks refuse)",
}
CPP_FROM_JSON = ("torch::_export::from_json (torch/csrc/utils/generated_serialization_types.h, "
                 "generated from schema.yaml)")
PY_SCHEMA = "torch._export.serde.serialize._dict_to_dataclass"


# ---------------------------------------------------------------------------
# Packets.
# ---------------------------------------------------------------------------

def _block(text: str, heading: str) -> str:
    m = re.search(re.escape(heading) + r"[^\n]*\n\n```[a-z]*\n(.*?)```", text, re.S)
    return m.group(1).strip() if m else ""


def parse_packet(path: str) -> dict:
    """A fuzzer packet (src/live/mutants.rs `upstream_packet`) as a record."""
    t = open(path, encoding="utf-8").read()
    name = os.path.basename(path)[:-3]
    seed = re.search(r"on `([^`]+)`", t)
    prog = re.search(r"Zoo program `([^`]+)`, mutation class `([^`]+)`: (.*)", t)
    sh = re.search(r"```sh\n(.*?)```", t, re.S).group(1)
    liners = ["python -c '" + c + "'" for c in re.findall(r"python -c '(.*?)'\n", sh, re.S)]
    return {
        "name": name,
        "path": os.path.relpath(path, ROOT),
        "signature": re.search(r"Signature: `([^`]+)`", t).group(1),
        "seed": seed.group(1) if seed else None,
        "program": prog.group(1),
        "mutation_class": prog.group(2),
        "mutation": prog.group(3).strip(),
        "edits": json.loads(_block(t, "## Edits to models/model.json")),
        "python": _block(t, "## torch.export.load (Python)"),
        "cpp": _block(t, "## torch._C._export.deserialize_exported_program (C++)"),
        "one_liners": liners,
        # what each one-liner prints (stdout "loads") or raises (its last lines)
        "expects": [_block(t, "## torch.export.load (Python)"),
                    _block(t, "## torch._C._export.deserialize_exported_program (C++)")],
    }


def packets() -> list[dict]:
    files = sorted(glob.glob(os.path.join(UPSTREAM, "upstream-*.md"))
                   + glob.glob(os.path.join(CLASS5, "upstream-*.md")))
    return [parse_packet(f) for f in files]


def round_trip_findings() -> list[dict]:
    """oracle/round_trip.py's findings: round-trip.jsonl (the corpus), round-trip-*.jsonl (mutants)."""
    out = []
    for p in sorted(glob.glob(os.path.join(UPSTREAM, "round-trip*.jsonl"))):
        with open(p) as f:
            out += [json.loads(line) for line in f]
    for x in out:
        if "path" in x:  # the JSON path of the first change
            x["path_json"] = x.pop("path")
        x["name"] = "round-trip-" + hashlib.sha1(x["signature"].encode()).hexdigest()[:8]
        x["path"] = os.path.relpath(os.path.join(UPSTREAM, x["name"] + ".md"), ROOT)
        x["one_liners"] = [x["one_liner"]]
        x["expects"] = [x["prints"] if x.get("prints") is not None else x.get("raises")]
    # A fuzz finding whose cause a corpus packet reports is counted there, not filed again.
    by_sig = {x["signature"]: x for x in out if "same_cause_as" not in x}
    for x in out:
        if "same_cause_as" in x and x["same_cause_as"] in by_sig:
            t = by_sig[x["same_cause_as"]]
            t.setdefault("also", []).append(x)
            if x["class"] == 1 and t["function"].startswith("torch._export.serde.serialize: Exported"):
                t["function"] = x["function"]  # the raising function, found by the fuzz replay
    return [x for x in out if "same_cause_as" not in x or x["same_cause_as"] not in by_sig]


def fuzz_round_trips() -> list[dict]:
    """oracle/round_trip.py --fuzz-log's summaries (docs/upstream/round-trip-fuzz-s*.json)."""
    out = []
    for p in sorted(glob.glob(os.path.join(UPSTREAM, "round-trip-fuzz-s*.json"))):
        with open(p) as f:
            out.append(json.load(f))
    return out


def export_spec_findings() -> list[dict]:
    """oracle/export_spec_findings.py's cross-API findings (docs/upstream/export-spec.jsonl):
    the same spec and inputs through two PyTorch entry points that decide differently."""
    path = os.path.join(UPSTREAM, "export-spec.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        out = [json.loads(line) for line in f]
    for x in out:
        x["path"] = os.path.relpath(os.path.join(UPSTREAM, x["name"] + ".md"), ROOT)
        x["one_liners"] = [x["one_liner"]]
        x["expects"] = [x["prints"]]
        x["count_note"] = "cases"
        x["count"] = len(x["cases"])
        x["seed"] = x["cases"][0]
        x["program"] = "corpus/cases/" + "-".join(x["cases"][0].split("-")[:3]) + ".jsonl"
    return out


# ---------------------------------------------------------------------------
# Classes 4 and 5, measured.
# ---------------------------------------------------------------------------

def mutated_text(program: str, edits) -> str | None:
    with zipfile.ZipFile(os.path.join(ROOT, program)) as z:
        n = [i for i in z.namelist() if i.endswith("models/model.json")]
        n = n or ["serialized_exported_program.json"]
        t = z.read(n[0]).decode("utf-8")
    for old, new in edits:
        if old not in t:
            return None
        t = t.replace(old, new, 1)
    return t


def schema_refusal(text: str) -> str | None:
    """What Python's schema reader raises on the text (None: it fits the schema)."""
    import warnings
    warnings.simplefilter("ignore")
    from torch._export.serde import schema
    from torch._export.serde.serialize import _bytes_to_dataclass
    try:
        _bytes_to_dataclass(schema.ExportedProgram, text.encode("utf-8"))
    except Exception as e:  # noqa: BLE001 - the refusal is the measurement
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return None


def classify(p: dict) -> None:
    py_loads, cpp_loads = p["python"] == "loads", p["cpp"] == "loads"
    if py_loads and not cpp_loads:
        p["class"] = 4
        p["function"] = f"{CPP_FROM_JSON} refuses what {PY_SCHEMA} passes through"
        return
    text = mutated_text(p["program"], p["edits"])
    refusal = schema_refusal(text) if text is not None else "edits no longer apply"
    p["schema_refusal"] = refusal
    if refusal is not None:
        p["class"] = 4
        p["function"] = f"{CPP_FROM_JSON} accepts JSON that {PY_SCHEMA} refuses ({refusal[:100]})"
    else:
        p["class"] = 5
        p["function"] = "torch._export.serde.serialize.ExportedProgramDeserializer (the checks C++ lacks)"


# ---------------------------------------------------------------------------
# Outputs.
# ---------------------------------------------------------------------------

def checks() -> dict:
    """{version: {packet name: verdict line}} from oracle/check_upstream.py."""
    out: dict = {}
    for f in sorted(glob.glob(os.path.join(CHECK, "torch-*.jsonl"))):
        v = os.path.basename(f)[len("torch-"):-len(".jsonl")]
        with open(f) as fh:
            out[v] = {(x := json.loads(line))["name"]: x for line in fh}
    return out


def _vkey(v: str):
    return tuple(int(x) for x in re.findall(r"\d+", v))


def html(s: str) -> str:
    """Text inside <code>: `<missing>` in a one-liner must not read as a tag."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _found_by(x: dict) -> str:
    if x.get("source") == "fuzz":
        seed = x["seed"].split("--seed ")[1].split(",")[0]
        return (f"Found by `torchspec fuzz --live --mutate --seed {seed}` (torch {x['torch']}; its round-trip "
                f"log judged and grouped by `oracle/round_trip.py --fuzz-log`, one packet per cause)")
    return f"Found by `oracle/round_trip.py` (torch {x['torch']})"


def _members(x: dict) -> str:
    if not x.get("members"):
        return ""
    L = [f"Signatures of this cause ({len(x['members'])}; inputs from the run's tallies, "
         "mutation class of the first mutant logged):", ""]
    L += [f"- `{m['signature']}`" + (f" ({m['place']})" if m["place"] else "")
          + f": {m['inputs']} input{'s' if m['inputs'] != 1 else ''}, `{m['mutation_class']}`"
          for m in x["members"][:40]]
    if len(x["members"]) > 40:
        L.append(f"- and {len(x['members']) - 40} more")
    return "\n".join(L) + "\n\n"


def _also(x: dict) -> str:
    if not x.get("also"):
        return ""
    L = ["Also found on mutants, same cause (counted here, not filed again):", ""]
    for a in x["also"]:
        L.append(f"- `{a['seed']}` on `{a['program']}`: {a['count']} inputs in {a['signatures']} "
                 f"signature(s), e.g. `{a['signature']}`")
    return "\n".join(L) + "\n\n"


def round_trip_packet(x: dict) -> str:
    detail = (f"First path changed: `{x['path_json']}`: input `{x['input']!r}`, output `{x['output']!r}`.\n\n"
              if "path_json" in x else
              "Outcome: `" + json.dumps({k: x[k] for k in ("outcome", "type", "message", "signal",
                                                           "returncode", "stderr") if k in x}) + "`\n\n")
    by = ("Inputs per mutation class (`oracle/mutate.py`): "
          + ", ".join(f"`{k}` {v}" for k, v in x["by_mutation_class"].items()) + ".\n\n"
          if x.get("by_mutation_class") else "")
    said = (f"```text\n{x['prints']}\n```" if x.get("prints") is not None
            else f"raises:\n\n```text\n{x.get('raises')}\n```")
    return (f"# {x['name']}\n\n{_found_by(x)}: class {x['class']}, "
            f"{CLASS_NAMES[x['class']]}.\n\nSignature: `{x['signature']}`\n\n"
            + (f"{x['count']} inputs" if x.get("count_note") == "inputs"
               else f"{x['count']} paths changed in {x['inputs']} program(s)") + "; first: "
            f"`{x['first']}`.\n\n{by}{_members(x)}{_also(x)}{detail}Upstream: {x['function']}.\n\n"
            f"## Reproduce with stock torch (from the repository root)\n\n```sh\n{x['one_liner']}\n```\n\n"
            f"prints (torch {x['torch']}):\n\n{said}\n")


def mutant_name(first: str) -> str:
    """`target/mutants/DIR/s1-00003-CLASS.pt2 (P/models/model.json)` is mutant 3 of
    `oracle/mutate.py --seed 1` (its one-liner rebuilds it from the zoo program P)."""
    m = re.match(r"target/mutants/[^/]+/(s(\d+)-(\d+)-\w+)\.pt2 \(([^/]+)/", first)
    if not m:
        return f"`{first}`"
    return f"`{m.group(1)}` (`oracle/mutate.py --seed {m.group(2)}`) on `corpus/programs/{m.group(4)}.pt2`"


def write_readme(rows: list[dict], class5: list[dict], versions: dict, unrep: list[dict]) -> None:
    vs = sorted(versions, key=_vkey)
    L = ["# Upstream findings: PyTorch's readers and writers of exported programs, by severity",
         "",
         "Generated by `.oracle/bin/python oracle/upstream_triage.py`; never edit by hand. Sources:",
         "`oracle/round_trip.py` (every `corpus/programs/*.pt2` and `corpus/weights/*.pt2` read and",
         "written back by the C++ reader/writer and by `torch.export.load`/`save`, compared as JSON values",
         "under Python's rules), the Python-versus-C++ packets of `torchspec fuzz --live --mutate`, and",
         "the cross-API findings of the `export_spec` corpus (`oracle/export_spec_findings.py`: the same",
         "ShapesSpec and inputs through export, strict export, make_fx or torch.compile deciding differently;",
         "class 4, packets `export-spec-*.md`).",
         "The last columns are `oracle/check_upstream.py`'s verdict per torch version: `holds` when the",
         "one-liners print what the packet says, `differs` when not (fixed, changed, or a packet whose",
         "one-liner no longer runs: see its check file in `check/`).",
         "",
         "Classes: " + "; ".join(f"{k} {v}" for k, v in CLASS_NAMES.items()) + ".",
         "", *JUDGEMENT, "",
         "| class | signature | count | first seed / program | upstream function | one-liner | "
         + "".join(f"{v} | " for v in vs),
         "|---|---|---|---|---|---|" + "---|" * len(vs)]
    for r in rows:
        count = ("1 kept mutant" if "count_note" not in r else f"{r['count']} inputs"
                 if r["count_note"] == "inputs" else f"{r['count']} corpus case{'s' if r['count'] != 1 else ''}"
                 if r["count_note"] == "cases" else f"{r['count']} paths changed in {r['inputs']} program(s)")
        if r.get("signatures"):
            count += f" ({r['signatures']} signatures)"
        if r.get("also"):
            count += " + " + ", ".join(f"{a['count']} fuzz inputs (`{a['seed'].split(', ')[0]}`)" for a in r["also"])
        first = (f"`{r['seed']}` on `{r['program']}`" if r.get("seed") else mutant_name(r["first"]))
        liner = r["one_liners"][-1]  # a fuzzer packet's C++ half: the reader that disagrees
        verdicts = [versions[v].get(r["name"], {}).get("verdict", "not run") for v in vs]
        L.append(f"| {r['class']} | [{cell(r['signature'])}]({os.path.basename(r['path'])}) | {count} | "
                 f"{cell(first)} | {cell(r['function'])} | <code>{html(cell(liner))}</code> | "
                 + "".join(f"{v} | " for v in verdicts))
    L += ["", "## Class 5: accepted-but-unchecked, one note", "",
          "`torch._C._export.deserialize_exported_program` reads the schema, not the program: it",
          "resolves no operator, runs no verifier and rebuilds no graph, so it loads mutated programs",
          "that fit the schema and that `torch.export.load` refuses in its semantic checks. That is by",
          "design; the signatures below (the fuzzer's packets, kept in `class-5/`) are counted per",
          "mutation class rather than listed one by one. Each fits the schema: Python's",
          "`_bytes_to_dataclass` reads its mutated JSON (measured by this command).", "",
          "| mutation class | signatures | Python exceptions | first seed / program |",
          "|---|---|---|---|"]
    by: dict = {}
    for p in class5:
        by.setdefault(p["mutation_class"], []).append(p)
    for k in sorted(by):
        ps = by[k]
        types = sorted({p["python"].split(":")[0] for p in ps})
        L.append(f"| `{k}` | {len(ps)} | {', '.join(types)} | `{ps[0]['seed']}` on `{ps[0]['program']}` |")
    L.append(f"| total | {len(class5)} | | |")
    counts = fuzz_counts()
    if counts:
        L += ["", "Counted by the fuzzer since it stopped writing a packet per class-5 signature "
              "(`upstream class 5: CLASS` tallies of " + ", ".join(
                  f"seed {r['seed']} ({r['mutants']:,} mutants)" for r in counts["runs"]) + "):", "",
              "| mutation class | class 5 (C++ loads, only Python's semantic checks refuse) | "
              "class 4 (Python loads and C++ refuses, or C++ loads JSON Python's schema reader refuses: a packet each) |", "|---|---:|---:|"]
        for k in sorted(set(counts["class5"]) | set(counts["class4"])):
            L.append(f"| `{k}` | {counts['class5'].get(k, 0):,} | {counts['class4'].get(k, 0):,} |")
        L.append(f"| total | {sum(counts['class5'].values()):,} | {sum(counts['class4'].values()):,} |")
    for fz in fuzz_round_trips():
        L += fuzz_sections(fz)
    if unrep:
        L += ["", "## Seen in a worker, not reproduced by a fresh process", "",
              "`oracle/round_trip.py` saw these in its warm worker; the one-liner, run alone, does not",
              "show them (state left by earlier inputs in the same process), so they have no packet yet.", ""]
        L += [f"- class {x['class']}: `{x['signature']}` (`{x['first']}`)" for x in unrep]
    with open(os.path.join(UPSTREAM, "README.md"), "w") as f:
        f.write("\n".join(L) + "\n")


JUDGEMENT = [
    "Which round-trip differences are findings (`oracle/round_trip_fuzz.py`, where the rule is code).",
    "A program PyTorch wrote that does not come back equal is class 2. A *mutated* program",
    "is often not canonical (a field deleted, a field the schema does not know, a float where",
    "the schema has an int, an unknown enum value, a union tag swapped), and a writer that writes",
    "back the canonical form loses nothing a valid program holds: such differences are counted per",
    "mutation class in one note below, with no packet. Of a mutant's round trips, these are",
    "findings: every writer exception after the reader accepted (class 1; grouped by reader,",
    "exception type, the type of the exception at the root of its chain and the upstream function",
    "that raised it, so one bug is one packet whatever names its message holds); a non-finite float",
    "written back with another sign; an integer the reader accepts outside the type it stores",
    "(int64 in C++, torch.device's int8 index in Python) and writes back as another integer",
    "instead of refusing it; a well-typed edge value (`edge_values`, `range_edges`) written back as",
    "another value of its JSON type; and, anywhere in the program, a change a corpus packet already",
    "reports (counted into that packet, not filed again) (class 2).",
]


def _table(header: list[str], rows: list[list]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def fuzz_sections(fz: dict) -> list[str]:
    """The normalised note and the round trips per mutation class of one fuzz run."""
    seed = fz["seed"]
    cats = sorted({c for v in fz["normalised"].values() for c in v})
    L = ["", f"## Round trips of `torchspec fuzz --live --mutate --seed {seed}` "
         f"({fz['mutants']:,} mutants, torch {fz['torch']})", "",
         f"`oracle/round_trip.py --fuzz-log` rebuilt the first mutant of each of the log's "
         f"{fz['log_records']} (reader, signature, place) records and judged it: "
         + ", ".join(f"{n} {'class ' + k if k != 'normalised' else k}" for k, n in fz["judged"].items())
         + ". The class 1 and 2 findings are rows of the table above.", "",
         "### Normalisations of mutated input (no packet)", "",
         "Each cell: signatures (inputs, from the run's tallies), by the mutation class of the first "
         "mutant logged for the signature (the log keeps one mutant per signature, so a signature "
         "that several classes show counts under the first).", ""]
    rows = []
    for k, v in fz["normalised"].items():
        rows.append([f"`{k}`"] + [f"{v[c][0]} ({v[c][1]:,})" if c in v else "" for c in cats])
    tot = [sum(v.get(c, [0, 0])[i] for v in fz["normalised"].values()) for c in cats for i in (0, 1)]
    rows.append(["total"] + [f"{tot[2 * j]} ({tot[2 * j + 1]:,})" for j in range(len(cats))])
    L += _table(["mutation class"] + cats, rows)
    L += ["", "### Round trips per mutation class", ""]
    pc = fz["per_class"]
    if pc["source"] == "tallies":
        L += ["From the run's `round trip READER CLASS: OUTCOME` tallies.", ""]
        rows = []
        for k, v in sorted(pc["rows"].items()):
            for reader in ("C++", "torch.export.save"):
                d = v.get(reader, {})
                rows.append([f"`{k}`", reader, d.get("same", 0), d.get("differs", 0), d.get("write_error", 0)])
        L += _table(["mutation class", "writer", "same", "differs", "writer error"], rows)
    else:
        t = pc["totals"]
        L += [f"This run's state holds the outcomes in total only ("
              + "; ".join(f"`{k}` {n:,}" for k, n in sorted(t.items()))
              + "); the fuzzer tallies them per mutation class (`round trip READER CLASS: OUTCOME`) "
              "from the run after it. What the log lets one count per class: the distinct signatures "
              "of differing or raising round trips and the inputs the tallies give them (a mutant with "
              "several signatures counts once per signature).", ""]
        rows = []
        for k, v in sorted(pc["rows"].items()):
            for reader in ("C++", "torch.export.save"):
                d = v.get(reader, {})
                rows.append([f"`{k}`", reader] + [f"{d.get(o + ' signatures', 0)} ({d.get(o + ' inputs', 0):,})"
                                                  for o in ("differs", "write_error")])
        L += _table(["mutation class", "writer", "differs: signatures (inputs)",
                     "writer error: signatures (inputs)"], rows)
    return L


COUNTS = os.path.join(CLASS5, "counts.json")


def fuzz_counts(states=None) -> dict | None:
    """Class 4 and 5 per mutation class from fuzzer states (written to COUNTS),
    or COUNTS as last written."""
    if not states:
        if not os.path.exists(COUNTS):
            return None
        with open(COUNTS) as f:
            return json.load(f)
    out = {"runs": [], "class5": {}, "class4": {}}
    for path in states:
        with open(path) as f:
            st = json.load(f)
        out["runs"].append({"seed": st["seed"], "mutants": st["cases"]})
        for label, n in st.get("tallies", {}).items():
            m = re.match(r"upstream class ([45]): (\w+)$", label)
            if m:
                d = out["class" + m.group(1)]
                d[m.group(2)] = d.get(m.group(2), 0) + n
    for k in ("class5", "class4"):
        out[k] = dict(sorted(out[k].items()))
    with open(COUNTS, "w") as f:
        f.write(json.dumps(out, indent=1) + "\n")
    return out


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz-state", action="append", default=[],
                    help="a `torchspec fuzz --live --mutate` state file (repeatable)")
    args = ap.parse_args()
    os.makedirs(CLASS5, exist_ok=True)
    if args.fuzz_state:
        fuzz_counts(args.fuzz_state)
    rt = round_trip_findings()
    for f in glob.glob(os.path.join(UPSTREAM, "round-trip-*.md")):
        os.remove(f)
    for x in rt:
        if x.get("reproduced") is not False:
            with open(os.path.join(ROOT, x["path"]), "w") as f:
                f.write(round_trip_packet(x))
    ps = packets()
    for p in ps:
        classify(p)
        want = os.path.join(CLASS5 if p["class"] == 5 else UPSTREAM, p["name"] + ".md")
        have = os.path.join(ROOT, p["path"])
        if os.path.abspath(have) != os.path.abspath(want):
            os.replace(have, want)
            p["path"] = os.path.relpath(want, ROOT)
    unrep = [x for x in rt if x.get("reproduced") is False]
    rt = [x for x in rt if x.get("reproduced") is not False]
    es = export_spec_findings()
    rows = sorted(rt + es + [p for p in ps if p["class"] < 5], key=lambda r: (r["class"], r["signature"]))
    write_readme(rows, [p for p in ps if p["class"] == 5], checks(), unrep)
    n = {c: sum(1 for r in rt + es + ps if r["class"] == c) for c in range(1, 6)}
    for c in range(1, 6):
        print(f"class {c}: {n[c]}")


if __name__ == "__main__":
    main()
