"""Round-trip findings of a `torchspec fuzz --live --mutate` run (issue 35 items 1-2).

Usage (one oracle process; from the repository root):
    .oracle/bin/python oracle/round_trip.py --fuzz-log target/fz-s45.round-trips.jsonl \\
        --fuzz-state target/fz-s45.json

The fuzzer round-trips every mutant both readers load and logs the first mutant
of each (reader, signature, place) to STATE.round-trips.jsonl; the state's
tallies count the mutants of each signature (`round trip finding (PLACE): SIG`).
Each logged mutant is rebuilt here (oracle/mutate.py's mutant INDEX of SEED, as
the fuzzer drew it), round-tripped again in this process, and judged:

    class 1  the writer raises after the reader accepted (or a crash): always a
             finding. Grouped by reader, the exception's type, the type of the
             exception at the root of its chain and the upstream function that
             raised it (the innermost torch frame of the root's traceback), so one
             bug is one packet whatever names or numbers its message holds.
    class 2  a silent change of data a valid program can hold, or of a value the
             reader accepts and then changes instead of refusing:
               - a non-finite float written back with another sign
                 (C++ `-Infinity` -> `Infinity`);
               - an integer outside int64 that the C++ reader accepts and writes
                 back as another integer (nlohmann's conversion to int64_t);
               - an integer the Python reader stores in a narrower type and writes
                 back changed (torch.device's int8 index);
               - any other change of a value to another value of the same JSON
                 type where the mutation put a well-typed edge value
                 (`edge_values`, `range_edges`, and those inside `subgraph`).
             Grouped by cause; a cause a corpus packet already reports
             (round_trip_liners.py's FUNCTIONS) is counted into that packet
             (`same_cause_as`), not filed again.
    normalised  everything else: the writer writes back the canonical form of a
             mutated, non-canonical input, which is not a loss of data of a valid
             program: an unknown field dropped, a deleted field written at its
             default, an ill-typed scalar written in its schema type, an unknown
             enum value or union tag normalised, or (Python) a field re-derived
             from the graph the loader rebuilt, including changes away from the
             mutated path that the mutation caused (a node renamed after a
             duplicate, an argument list re-normalised by the operator's schema; a
             node's `name`, which the Python loader takes from the node's output).
             Counted per mutation class and category in one note, no packet.

Writes docs/upstream/round-trip-fuzz-sSEED.jsonl (one line per class 1-2 finding,
read by oracle/upstream_triage.py like round_trip.py's) and
docs/upstream/round-trip-fuzz-sSEED.json (the normalised note's counts and the
round trips per mutation class).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import sys
import traceback

import round_trip_json as RJ
import round_trip_liners as RL

INT64 = (-2 ** 63, 2 ** 63 - 1)
EDGE_CLASSES = ("edge_values", "range_edges")


# ---------------------------------------------------------------------------
# The log and the state.
# ---------------------------------------------------------------------------

def read_log(path: str) -> list[dict]:
    """The log's records, one per (reader, signature, place) (each worker logs its own
    first mutant: the other ones are kept under "also")."""
    out: dict = {}
    with open(path) as f:
        for rec in map(json.loads, f):
            key = (rec["reader"], rec["signature"], rec["place"])
            if key in out:
                out[key].setdefault("also", []).append(rec["mutant"])
            else:
                out[key] = rec
    return sorted(out.values(), key=lambda r: (r["mutant"][1], r["reader"], r["signature"]))


def tally_of(tallies: dict, rec: dict) -> int:
    label = (f"round trip finding ({rec['place']}): {rec['signature']}" if rec["place"]
             else f"round trip finding: {rec['signature']}")
    return tallies.get(label, 1)


# ---------------------------------------------------------------------------
# Replaying one logged mutant.
# ---------------------------------------------------------------------------

def root_of(e: BaseException) -> BaseException:
    """The exception at the root of e's chain (__cause__, else __context__)."""
    seen = set()
    while (e.__cause__ or e.__context__) is not None and id(e) not in seen:
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return e


def where(e: BaseException) -> str:
    """The upstream function that raised e: the innermost frame of torch's code in its
    traceback, as `torch/FILE: Class.function`."""
    fn = ""
    tb = e.__traceback__
    while tb is not None:
        co = tb.tb_frame.f_code
        if "/torch/" in co.co_filename:
            fn = f"torch/{co.co_filename.split('/torch/', 1)[1]}: {getattr(co, 'co_qualname', co.co_name)}"
        tb = tb.tb_next
    return fn


def replay(reader: str, program: str, text: str) -> dict:
    """The round trip of one mutant's program JSON, in this process."""
    import torch
    import mutate
    import serve_mutants as S
    back, err = None, None
    if reader == "cpp":
        try:
            p = torch._C._export.deserialize_exported_program(text)
        except Exception as e:  # noqa: BLE001
            return {"outcome": "read_error", **RJ._exc(e)}
        try:
            back = torch._C._export.serialize_exported_program(p)
        except Exception as e:  # noqa: BLE001
            err = e
    else:
        out, ep = S.python_outcome(program, text, False, mutate.PROGRAMS)
        if ep is None:
            return {"outcome": "read_error", "type": out.get("type"), "message": out.get("message")}
        try:
            back = RJ.python_write_back(ep, archive=False)
        except Exception as e:  # noqa: BLE001
            err = e
    if err is not None:
        root = root_of(err)
        msg = str(root).splitlines()[0] if str(root) else ""
        return {"outcome": "write_error", **RJ._exc(err), "root_type": type(root).__name__,
                "root_message": msg[:300], "function": where(root)}
    return RJ.compare(text, back)


def example_of(res: dict, signature: str):
    """(path, input, output) of the first change of `signature` in a replayed result."""
    if res.get("outcome") != "differs":
        return None
    who, _, sig = signature.partition(": ")
    for s, ds in RJ.signatures_of([tuple(d) for d in res["diffs"]]).items():
        if s == sig:
            return ds[0]
    return None


# ---------------------------------------------------------------------------
# The judgement.
# ---------------------------------------------------------------------------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def edge_mutation(rec: dict) -> bool:
    """A mutation that writes a well-typed value at the edge of its JSON type."""
    return rec["class"] in EDGE_CLASSES or (
        rec["class"] == "subgraph" and re.match(r"in a subgraph \((edge_values|size_hint)\)", rec["mutation"]))


def known_causes() -> list[dict]:
    """The class 2 findings of the corpus round trips (docs/upstream/round-trip.jsonl)."""
    path = os.path.join(RL.ROOT, "docs", "upstream", "round-trip.jsonl")
    with open(path) as f:
        return [x for x in map(json.loads, f) if x["class"] == 2]


def _tail(gp: str) -> str:
    """A general path from its innermost graph on (a subgraph's nodes are the top graph's)."""
    i = gp.rfind(".graph.")
    return gp[i:] if i >= 0 else gp


def known_cause(reader: str, gp: str, kind: str) -> str | None:
    """The signature of the corpus finding with the same cause, if any."""
    for x in KNOWN:
        who, _, rest = x["signature"].partition(": ")
        kpath, _, kkind = rest.partition(": ")
        if (reader == "cpp") != who.startswith("C++"):
            continue
        if kkind == kind == "'-Infinity' -> 'Infinity'":
            return x["signature"]
        if _tail(kpath) == _tail(gp) and (kkind == kind or ("_unused" in kkind and "_unused" in kind)):
            return x["signature"]
    return None


KNOWN: list = []


def judge(rec: dict, res: dict, example) -> tuple:
    """(1 | 2, cause key) for a finding, ("normalised", category) for the rest."""
    reader = rec["reader"]
    if res["outcome"] in ("crash", "hang"):
        return 1, reader, res["outcome"], res.get("signal")
    if res["outcome"] == "write_error":
        return 1, reader, res["type"], res.get("root_type"), res.get("function") or res["message"]
    if example is None:
        return "normalised", "not shown again in this process"
    path, a, b = example
    gp = RJ.general_path(path)
    kind = RJ.change_kind(a, b)
    known = known_cause(reader, gp, kind)
    if known is not None and (rec["place"] == "elsewhere" or edge_mutation(rec) or "Infinity" in kind):
        return 2, reader, "known", known
    if reader == "cpp" and _is_int(a) and _is_int(b) and not INT64[0] <= a <= INT64[1]:
        return 2, reader, "int64 out of range"
    if reader == "python" and gp.endswith("device.index") and _is_int(a) and a != b:
        return 2, reader, "device index"
    if reader == "python" and gp.endswith(".name") and isinstance(a, str):
        # a node is named after its output when loaded: Node.name is derived, not kept
        return "normalised", "a field re-derived from the rebuilt graph"
    if rec["place"] == "at the mutation" and edge_mutation(rec) and (
            type(a) is type(b) or (_is_int(a) and b is None)):
        return 2, reader, "edge", _tail(gp), kind
    return "normalised", category(rec, a, b)


def category(rec: dict, a, b) -> str:
    if rec["place"] == "elsewhere":
        return "elsewhere: the loader rebuilt a graph the mutation changed"
    if b == "<missing>":
        return "an unknown field or arm dropped"
    if a == "<missing>":
        return "a deleted field written at its default"
    if isinstance(a, dict) and isinstance(b, dict) and len(a) == len(b) == 1:
        return "a union arm written as another arm"
    if type(a) is not type(b):
        return "an ill-typed value written in its schema type"
    return ("a field re-derived from the rebuilt graph" if rec["reader"] == "python"
            else "a value normalised by the schema's reader")


# ---------------------------------------------------------------------------
# Findings: groups, one-liners.
# ---------------------------------------------------------------------------

def _label(key: tuple, members: list[dict]) -> str:
    reader = key[1]
    who = "C++ deserialize/serialize_exported_program" if reader == "cpp" else "torch.export.load/save"
    res = members[0]["res"]
    if res["outcome"] == "write_error":
        msg = re.sub(r"'[^']*'|\d+", lambda m: "'…'" if m.group(0)[0] == "'" else "N",
                        res.get("root_message") or res["message"])
        inner = (f" (from {res['root_type']} in {res['function'].split(': ')[-1]})"
                 if res.get("function") and res.get("root_type") != res["type"] else
                 f" (in {res['function'].split(': ')[-1]})" if res.get("function") else "")
        return f"{who}: the writer raises {res['type']}{inner} after the reader accepted: {msg[:100]}"
    sigs = sorted({m["rec"]["signature"].partition(": ")[2] for m in members})
    return f"{who}: {sigs[0]}" + (f" (and {len(sigs) - 1} more paths)" if len(sigs) > 1 else "")


def _function(key: tuple, members: list[dict]) -> str:
    res = members[0]["res"]
    if res["outcome"] == "write_error":
        fn = res.get("function") or ""
        return (f"{fn} raises {res.get('root_type')}, after "
                + ("torch.export.load accepted the program (torch._export.serde.serialize: "
                   "ExportedProgramSerializer.serialize, as torch.export.save runs it)"
                   if key[1] == "python" else "torch._C._export.deserialize_exported_program accepted it"))
    if key[2] == "known":
        return next(x["function"] for x in KNOWN if x["signature"] == key[3])
    if key[2] == "int64 out of range":
        return ("torch::_export::from_json in torch/csrc/utils/generated_serialization_types.h reads an "
                "int64_t field with nlohmann::json::get<int64_t>(): an integer past the int64 range "
                "(stored by nlohmann as uint64 or double) is converted without a check instead of refused")
    if key[2] == "device index":
        return ("GraphModuleDeserializer.deserialize_device (torch/_export/serde/serialize.py) builds "
                "torch.device(type, index): c10::Device keeps the index as int8 (DeviceIndex), so an "
                "index past int8 wraps (-1 is no index) instead of being refused")
    if key[2] == "edge" and key[3].endswith("strides[*].as_int") and key[1] == "python":
        return ("GraphModuleDeserializer.deserialize_tensor_meta (torch/_export/serde/serialize.py) "
                "builds the FakeTensor with torch.empty_strided(sizes, strides): under FakeTensorMode a "
                "negative stride is not refused (eager torch.empty_strided raises `Storage size calculation "
                "overflowed`) and the tensor comes out contiguous, so the stride is written back 1")
    return RL.function_of(key[1], members[0]["rec"]["signature"])


MAX_LINER = 100_000  # one argument of bash -c (Linux's MAX_ARG_STRLEN is 128 KiB)
_RAN: dict = {}
_RAN_CACHE = os.path.join(RL.ROOT, "target", "round-trip-fuzz-liners.json")


_EXC = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*: ")


def _run(liner: str, timeout: float) -> dict:
    """round_trip_liners.run_liner, and "exception": the last line of stderr that is an
    exception's `Type: message` (the outermost one Python prints)."""
    import subprocess
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    try:
        p = subprocess.run(["bash", "-c", liner], cwd=RL.ROOT, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "stdout": "", "last_stderr": f"timeout after {timeout}s", "exception": None}
    err = [line for line in p.stderr.strip().splitlines() if line.strip()]
    exc = [line for line in err if _EXC.match(line)]
    return {"returncode": p.returncode, "stdout": p.stdout.strip(), "last_stderr": err[-1] if err else "",
            "exception": exc[-1] if exc else None}


def run_liner(liner: str, timeout: float) -> dict:
    """round_trip_liners.run_liner, remembered across runs of this script (target/)."""
    if len(liner) > MAX_LINER:
        return {"returncode": None, "stdout": "", "last_stderr": "one-liner too long", "exception": None}
    if not _RAN and os.path.exists(_RAN_CACHE):
        with open(_RAN_CACHE) as f:
            _RAN.update(json.load(f))
    k = hashlib.sha1(liner.encode()).hexdigest()
    if k in _RAN and "exception" not in _RAN[k]:  # a run of an older version of this script
        line = _RAN[k]["last_stderr"]
        if _EXC.match(line) or _RAN[k]["returncode"] == 0:
            _RAN[k]["exception"] = line if _RAN[k]["returncode"] != 0 else None
        else:
            del _RAN[k]
    if k not in _RAN:
        _RAN[k] = _run(liner, timeout)
        os.makedirs(os.path.dirname(_RAN_CACHE), exist_ok=True)
        with open(_RAN_CACHE, "w") as f:
            json.dump(_RAN, f)
    return _RAN[k]


def _liner(key, member, version, timeout) -> tuple[str, dict, bool]:
    """The packet's one-liner for one member, what it printed, and whether that shows
    the finding in a fresh process (stock torch first, the zoo's registrations if needed)."""
    rec, res = member["rec"], member["res"]
    src = member["src"]
    tries = []
    for reg in (False, True):
        if res["outcome"] == "write_error":
            liner = RL.crash_liner(rec["reader"], "", None, reg, src)
            ran = run_liner(liner, timeout)
            raised = (ran.get("exception") or "").split(":")[0].split(".")[-1]
            ok = ran["returncode"] not in (0, None) and raised in (res["type"], res.get("root_type"))
        else:
            path, a, b = member["example"]
            liner = RL.one_liner(rec["reader"], "", None, path, reg, src)
            ran = run_liner(liner, timeout)
            ok = ran["returncode"] == 0 and ran["stdout"] == f"{a!r} -> {b!r}"
        tries.append((liner, ran, ok))
        if ok:
            break
    return tries[-1] if tries[-1][2] or len(tries) == 1 else tries[0]


def group_findings(members: list[dict], seed: int, version: str, timeout: float) -> list[dict]:
    groups: dict = {}
    for m in members:
        if m["judged"][0] in (1, 2):
            groups.setdefault(m["judged"], []).append(m)
    out = []
    for key, ms in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0]))):
        ms.sort(key=lambda m: (len(m["src"][2][0]) + len(m["src"][2][1]) > 20_000, -m["count"], m["rec"]["mutant"][1]))
        chosen = None
        for m in ms[:3]:  # the first member whose one-liner reproduces in a fresh process
            liner, ran, ok = _liner(key, m, version, timeout)
            chosen = chosen or (m, liner, ran, ok)
            if ok:
                chosen = (m, liner, ran, ok)
                break
        m, liner, ran, ok = chosen
        print(f"class {key[0]} {str(key[1:])[:100]}: {len(ms)} signatures, "
              f"{'reproduced' if ok else 'NOT reproduced'}", file=sys.stderr, flush=True)
        rec, res = m["rec"], m["res"]
        by: dict = {}
        for x in ms:
            by[x["rec"]["class"]] = by.get(x["rec"]["class"], 0) + x["count"]
        row = {
            "class": key[0], "signature": _label(key, ms), "count": sum(x["count"] for x in ms),
            "inputs": sum(x["count"] for x in ms), "count_note": "inputs",
            "signatures": len(ms), "reader": rec["reader"],
            "first": f"mutant {rec['mutant'][1]} of seed {seed} ({rec['class']}: {rec['mutation'][:160]})",
            "seed": f"fuzz --live --mutate --seed {seed}, mutant {rec['mutant'][1]}",
            "program": f"corpus/programs/{rec['program']}.pt2",
            "function": _function(key, ms),
            "by_mutation_class": dict(sorted(by.items())),
            "members": [{"signature": x["rec"]["signature"], "place": x["rec"]["place"],
                         "mutation_class": x["rec"]["class"], "inputs": x["count"]} for x in ms],
            "one_liner": liner, "torch": version,
            "prints": ran["stdout"] if ran["returncode"] == 0 else None,
            "raises": None if ran["returncode"] == 0 else re.sub(
                r"\b0x[0-9a-f]{6,16}\b", "0x<address>", ran.get("exception") or ran["last_stderr"]),
            "returncode": ran["returncode"], "reproduced": ok, "source": "fuzz",
        }
        if res["outcome"] == "write_error":
            row.update({k: res[k] for k in ("outcome", "type", "message") if k in res})
            row["root"] = [res.get("root_type"), res.get("function") or ""]
        else:
            p, a, b = m["example"]
            row.update({"path": RJ.fmt_path(p), "input": a, "output": b})
        if key[0] == 2 and key[2] == "known":
            row["same_cause_as"] = key[3]
        out.append(row)
    return out


# ---------------------------------------------------------------------------
# The note and the round trips per mutation class.
# ---------------------------------------------------------------------------

def normalised_note(members: list[dict]) -> dict:
    """{mutation class: {category: [signatures, inputs]}} of the judged-normalised records."""
    out: dict = {}
    for m in members:
        if m["judged"][0] != "normalised":
            continue
        d = out.setdefault(m["rec"]["class"], {}).setdefault(m["judged"][1], [0, 0])
        d[0] += 1
        d[1] += m["count"]
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}


def per_class(tallies: dict, members: list[dict]) -> dict:
    """Round trips per mutation class x reader x outcome: the fuzzer's
    `round trip READER CLASS: OUTCOME` tallies when the state has them, else what the
    log holds (signatures and their tallied inputs per class of the logged mutant)."""
    rows: dict = {}
    for label, n in tallies.items():
        m = re.match(r"round trip (C\+\+|torch\.export\.save) (\w+): (\w+)$", label)
        if m:
            rows.setdefault(m.group(2), {}).setdefault(m.group(1), {})[m.group(3)] = n
    if rows:
        return {"source": "tallies", "rows": rows}
    for x in members:
        reader = "C++" if x["rec"]["reader"] == "cpp" else "torch.export.save"
        outcome = x["rec"]["round_trip"]["outcome"]
        d = rows.setdefault(x["rec"]["class"], {}).setdefault(reader, {})
        k = f"{outcome} signatures"
        d[k] = d.get(k, 0) + 1
        d[f"{outcome} inputs"] = d.get(f"{outcome} inputs", 0) + x["count"]
    totals = {k: v for k, v in tallies.items() if re.match(r"round trip (C\+\+|torch\.export\.save): \w+$", k)}
    return {"source": "log", "rows": rows, "totals": totals}


_FRAME = re.compile(r'^  File "[^"]*/torch/[^"]*", line \d+, in (\S+)$')


def root_of_stderr(stderr: str) -> tuple[str, str] | None:
    """(type, function) of the exception Python prints first (the root of the chain)
    and the innermost torch frame of its traceback, from a one-liner's stderr."""
    fn = None
    for line in stderr.splitlines():
        m = _FRAME.match(line)
        if m:
            fn = m.group(1)
        elif _EXC.match(line) and fn is not None:
            return line.split(":")[0].split(".")[-1], fn
    return None


def corpus_crashes(timeout: float) -> list[tuple[dict, tuple[str, str]]]:
    """The class 1 findings of oracle/round_trip.py's own runs with the root of what
    their one-liners raise (run here, in a fresh process each)."""
    import subprocess
    out = []
    for p in sorted(glob.glob(os.path.join(RL.ROOT, "docs", "upstream", "round-trip*.jsonl"))):
        if os.path.basename(p).startswith("round-trip-fuzz-"):
            continue
        with open(p) as f:
            for x in map(json.loads, f):
                if x["class"] != 1 or x.get("reproduced") is False or len(x["one_liner"]) > MAX_LINER:
                    continue
                env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}
                env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
                try:
                    r = subprocess.run(["bash", "-c", x["one_liner"]], cwd=RL.ROOT, env=env,
                                       capture_output=True, text=True, timeout=timeout)
                except subprocess.TimeoutExpired:
                    continue
                root = root_of_stderr(r.stderr)
                if root is not None:
                    out.append((x, root))
    return out


def attach_to_corpus_crashes(found: list[dict], timeout: float) -> None:
    """A class 1 group whose root exception type and raising function are those of a
    crash oracle/round_trip.py already filed is counted into that packet (same_cause_as)."""
    crashes = corpus_crashes(timeout)
    for row in found:
        if row["class"] != 1 or not row.get("root"):
            continue
        rtype, fn = row["root"]
        for x, (ctype, cfn) in crashes:
            if ctype == rtype and cfn == fn.split(": ")[-1].split(".")[-1]:
                row["same_cause_as"] = x["signature"]
                print(f"class 1 {row['signature'][:80]}: same cause as {x['signature'][:80]}",
                      file=sys.stderr)
                break


def run(log: str, state: str, timeout: float, version: str) -> tuple[list[dict], dict]:
    import mutate
    import serve_mutants as S
    with open(state) as f:
        st = json.load(f)
    seed, tallies = st["seed"], st["tallies"]
    z = S.zoo()
    KNOWN[:] = known_causes()
    members = []
    for rec in read_log(log):
        seed_, index = rec["mutant"]
        made = mutate.make_mutant(seed_, index, z.draw, z.ops, z.op_keys, z.classes)
        if made is None or made[0][:-len(".pt2")] != rec["program"] or made[1] != rec["class"]:
            print(f"mutant {index}: not rebuilt as logged", file=sys.stderr)
            continue
        text = made[4]
        res = replay(rec["reader"], rec["program"], text)
        example = example_of(res, rec["signature"])
        zoo = os.path.join("corpus", "programs", rec["program"] + ".pt2")
        orig = z.texts[rec["program"] + ".pt2"]
        edit = RL.minimal_edit(orig, text)
        assert orig.replace(edit[0], edit[1], 1) == text
        import zipfile
        with zipfile.ZipFile(os.path.join(RL.ROOT, zoo)) as a:
            entry = mutate.model_entry(a)
        m = {"rec": rec, "res": res, "example": example, "count": tally_of(tallies, rec),
             "src": (zoo, entry, edit)}
        m["judged"] = judge(rec, res, example)
        members.append(m)
        print(f"{index:6} {rec['reader']:6} {rec['class']:18} {m['judged'][0]}: "
              f"{str(m['judged'][1])[:90]}", file=sys.stderr, flush=True)
    found = group_findings(members, seed, version, timeout)
    attach_to_corpus_crashes(found, timeout)
    summary = {"seed": seed, "mutants": st["cases"], "torch": version,
               "log_records": len(members),
               "judged": {str(k): sum(1 for m in members if m["judged"][0] == k) for k in (1, 2, "normalised")},
               "normalised": normalised_note(members), "per_class": per_class(tallies, members)}
    return found, summary


def main(log: str, state: str, timeout: float, version: str) -> None:
    found, summary = run(log, state, timeout, version)
    seed = summary["seed"]
    base = os.path.join(RL.ROOT, "docs", "upstream", f"round-trip-fuzz-s{seed}")
    with open(base + ".jsonl", "w") as f:
        for x in found:
            f.write(json.dumps(x, allow_nan=True) + "\n")
    with open(base + ".json", "w") as f:
        f.write(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({"findings": len(found), "reproduced": sum(1 for x in found if x["reproduced"]),
                      "judged": summary["judged"]}))


def name_of(signature: str) -> str:
    return "round-trip-" + hashlib.sha1(signature.encode()).hexdigest()[:8]
