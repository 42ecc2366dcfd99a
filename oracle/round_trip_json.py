"""Program JSON compared as JSON values under Python's rules, and one round trip summed up:
the pieces of oracle/round_trip.py that `capture.py --serve`'s mutant requests
(oracle/serve_mutants.py) and oracle/round_trip_fuzz.py share with it. A leaf: it
imports no other oracle module, and torch only inside python_write_back.

Output and input are compared as JSON values (json.loads: NaN and +-Infinity,
integers of any size; key order ignored), stricter than `==` in two ways: a value
must keep its type (1 is not 1.0, True is not 1) and floats are equal when their
repr is (-0.0 is not 0.0, nan is nan).
"""

from __future__ import annotations

import io
import json
import re
import zipfile


# ---------------------------------------------------------------------------
# JSON values under Python's rules.
# ---------------------------------------------------------------------------

def _same_scalar(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def differences(a, b, path=(), out=None, limit=10_000):
    """Every path where b differs from a (a's key order first), up to `limit`."""
    if out is None:
        out = []
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if k not in b:
                out.append((path + (k,), a[k], "<missing>"))
            else:
                differences(a[k], b[k], path + (k,), out, limit)
        for k in b:
            if k not in a:
                out.append((path + (k,), "<missing>", b[k]))
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, path + (i,), out, limit)
        if len(a) != len(b):
            out.append((path + ("len",), len(a), len(b)))
    elif isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        out.append((path, a, b))
    elif not _same_scalar(a, b):
        out.append((path, a, b))
    return out


def fmt_path(path) -> str:
    s = "$"
    for p in path:
        s += f"[{p}]" if isinstance(p, int) else ("." + p if str(p).isidentifier() else f"[{json.dumps(p)}]")
    return s


# The schema's Dict[str, ...] fields (schema.yaml): their keys are names, not fields.
MAP_FIELDS = {"as_string_to_argument", "opset_version", "range_constraints", "tensor_values",
              "sym_int_values", "sym_bool_values", "custom_obj_values", "sym_float_values",
              "metadata", "treespec_namedtuple_fields", "config"}


def general_path(path) -> str:
    """The path with list indices and the keys of maps as `*`: one signature for all nodes."""
    s = "$"
    prev = None
    for p in path:
        s += "[*]" if isinstance(p, int) else (".*" if prev in MAP_FIELDS else "." + str(p))
        prev = p
    return s


def short(v, n=80) -> str:
    s = repr(v) if not isinstance(v, (dict, list)) else json.dumps(v)
    return s if len(s) <= n else s[: n - 3] + "..."


NON_FINITE = {"Infinity", "-Infinity", "NaN"}


def change_kind(a, b) -> str:
    """What kind of change a -> b is, general enough that one cause is one signature:
    a union's arm, a string's new suffix, non-finite floats by value, else the types."""
    if isinstance(a, dict) and isinstance(b, dict) and len(a) == len(b) == 1:
        return f"union arm {next(iter(a))} -> {next(iter(b))}"
    if isinstance(a, str) and isinstance(b, str):
        if a in NON_FINITE or b in NON_FINITE:
            return f"{a!r} -> {b!r}"
        if b.startswith(a):
            return f"str + {b[len(a):]!r}"
        return "str changed"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return f"{type(a).__name__} -> {type(b).__name__} ({'to 0' if b == 0 else 'changed'})"
    if a == "<missing>" or b == "<missing>":
        return f"{short(a, 20) if a == '<missing>' else type(a).__name__} -> " \
               f"{short(b, 20) if b == '<missing>' else type(b).__name__}"
    return f"{type(a).__name__} -> {type(b).__name__}"


def merge_union_arms(diffs) -> list:
    """A union whose arm changed shows as its old key missing and a new key; one change."""
    out = []
    i = 0
    while i < len(diffs):
        p, a, b = diffs[i]
        if b == "<missing>" and i + 1 < len(diffs):
            q, c, d = diffs[i + 1]
            if c == "<missing>" and list(q[:-1]) == list(p[:-1]) and p and q:
                out.append((tuple(p[:-1]), {p[-1]: a}, {q[-1]: d}))
                i += 2
                continue
        out.append((tuple(p), a, b))
        i += 1
    return out


def signatures_of(diffs) -> dict:
    """The differences of one program grouped by (general path, kind of change)."""
    out: dict = {}
    for p, a, b in merge_union_arms(diffs):
        out.setdefault(f"{general_path(p)}: {change_kind(a, b)}", []).append((p, a, b))
    return out


# ---------------------------------------------------------------------------
# One round trip: its outcome, its findings by signature.
# ---------------------------------------------------------------------------

def program_entries(z: zipfile.ZipFile) -> list[str]:
    names = [n for n in z.namelist() if "/models/" in "/" + n and n.endswith(".json")
             and n.split("/")[-2] == "models"]
    if not names and "serialized_exported_program.json" in z.namelist():
        names = ["serialized_exported_program.json"]
    return sorted(names)


def _exc(e: BaseException) -> dict:
    return {"type": type(e).__name__, "message": str(e).splitlines()[0][:500] if str(e) else ""}


def python_write_back(ep, archive: bool = True) -> str:
    """The program JSON torch.export.save writes for a loaded program. archive=False
    calls the serializer as torch.export.save does (torch._export.serde.serialize.
    serialize with no opset version, state dict and constants left to the archive)
    without packaging the weights: the same models/model.json, a fifth of the time
    on the zoo's programs (what `torchspec fuzz --live --mutate` uses)."""
    import torch
    if not archive:
        from torch._export.serde.serialize import serialize
        return serialize(ep, None, serialize_state_dict=False, serialize_constants=False,
                         serialize_example_inputs=False).exported_program.decode("utf-8")
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(buf) as z:
        return z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))).decode("utf-8")


def round_trip_summary(text: str, back: str | None, error: BaseException | None, reader: str,
                       limit: int = 5) -> dict:
    """One round trip of a program JSON as the live fuzzer records it: "same",
    "differs" with the signatures of findings_of (general path and kind of change,
    at most `limit`) and the first changed path with both values, or
    "write_error" (the writer raised after the reader accepted: class 1). "paths"
    holds the first changed path of each signature."""
    if error is not None:
        res = {"outcome": "write_error", **_exc(error)}
    else:
        res = compare(text, back)
    out = {"outcome": res["outcome"]}
    found = findings_of(res, reader, valid=False)
    if found:
        # a writer's message names values (fresh names, numbers): one signature for all
        out["signatures"] = [re.sub(r"'[^']*'|\d+", lambda m: "'…'" if m.group(0)[0] == "'" else "N", sig)
                             if res["outcome"] == "write_error" else sig
                             for _, sig, _, _ in found[:limit]]
        # the first path of each signature (where it is a change of a path)
        out["paths"] = [fmt_path(ex[0]) if ex else None for _, _, _, ex in found[:limit]]
    if res["outcome"] == "differs":
        p, a, b = res["diffs"][0]
        out["first"] = {"path": fmt_path(p), "input": short(a), "output": short(b)}
    elif res["outcome"] == "write_error":
        out["type"], out["message"] = res["type"], res["message"]
    return out


def compare(text: str, back: str) -> dict:
    diffs = differences(json.loads(text), json.loads(back))
    if not diffs:
        return {"outcome": "same"}
    return {"outcome": "differs", "differences": len(diffs),
            "diffs": [[list(p), a, b] for p, a, b in diffs]}


def findings_of(res: dict, reader: str, valid: bool) -> list:
    """[(class, signature, number of paths, first (path, input, output) or None)] of one result."""
    o = res["outcome"]
    who = "C++ deserialize/serialize_exported_program" if reader == "cpp" else "torch.export.load/save"
    if o in ("crash", "hang"):
        what = f"signal {res.get('signal')}" if o == "crash" and res.get("signal") else (
            f"exit {res.get('returncode')}" if o == "crash" else "no answer")
        return [(1, f"{who}: {o} ({what})", 1, None)]
    if o == "write_error":
        return [(1, f"{who}: the writer raises {res['type']} after the reader accepted: "
                 f"{res['message'][:120]}", 1, None)]
    if o == "read_error":
        if not valid:
            return []
        return [(3, f"{who}: a program PyTorch wrote is refused: {res['type']}: {res['message'][:120]}",
                 1, None)]
    if o == "differs":
        return [(2, f"{who}: {sig}", len(ds), ds[0])
                for sig, ds in signatures_of([tuple(d) for d in res["diffs"]]).items()]
    return []
