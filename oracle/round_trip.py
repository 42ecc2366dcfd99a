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
equal when their repr is (-0.0 is not 0.0, nan is nan).

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
import io
import json
import math
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CPP_FUNCTION = ("torch::_export::to_json / from_json (torch/csrc/utils/generated_serialization_types.h, "
                "generated from torch/_export/serde/schema.yaml) behind "
                "torch._C._export.deserialize_exported_program / serialize_exported_program")
PY_FUNCTION = ("torch._export.serde.serialize: ExportedProgramDeserializer.deserialize, "
               "then ExportedProgramSerializer.serialize (torch.export.load / torch.export.save)")


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
# The worker: one round trip per request line.
# ---------------------------------------------------------------------------

def program_entries(z: zipfile.ZipFile) -> list[str]:
    names = [n for n in z.namelist() if "/models/" in "/" + n and n.endswith(".json")
             and n.split("/")[-2] == "models"]
    if not names and "serialized_exported_program.json" in z.namelist():
        names = ["serialized_exported_program.json"]
    return sorted(names)


def _exc(e: BaseException) -> dict:
    return {"type": type(e).__name__, "message": str(e).splitlines()[0][:500] if str(e) else ""}


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


# ---------------------------------------------------------------------------
# Findings and their one-liners.
# ---------------------------------------------------------------------------

_GET = ("from functools import reduce;g=lambda d,p:reduce(lambda d,k:d[k] if isinstance(d,(dict,list)) "
        "and (k in d if isinstance(d,dict) else isinstance(k,int) and k<len(d)) else \"<missing>\",p,d);")


# Where a signature's change is made upstream, when read in the source (else the reader's pair).
FUNCTIONS = {
    ("cpp", ".as_float"): "torch::_export::to_json(nlohmann::json&, const F64&) in "
                          "torch/csrc/utils/generated_serialization_types.h: `std::isinf(f)` is true "
                          "for -inf too, so -inf is written \"Infinity\" (the `-Infinity` branch is dead)",
    ("python", ".storage_offset.as_int"): "GraphModuleDeserializer.deserialize_tensor_meta "
                                          "(torch/_export/serde/serialize.py): the FakeTensor is "
                                          "`torch.empty_strided(sizes, strides)`, tensor_meta.storage_offset "
                                          "is never read, so every view's offset is written back 0",
    ("python", ".nodes[*].name"): "GraphModuleDeserializer.deserialize_outputs "
                                  "(torch/_export/serde/serialize.py): a node whose one output is "
                                  "`as_none` is renamed `<target>_unused` on every load",
    ("python", ".inputs[*].arg"): "GraphModuleDeserializer.deserialize_operator returns the target "
                                  "as a str when the loading process has no such operator, and "
                                  "GraphModuleSerializer.serialize_input writes a str as `as_string`",
    ("python", ".strides[*]"): "GraphModuleDeserializer.deserialize_sym_int: sympy rebuilds the "
                               "expression under the symbol's assumptions (positive, integer), so "
                               "`Min(8, 8*s40)` is 8 once loaded: an equal value, another form",
    ("python", ".expr_str"): "GraphModuleDeserializer.deserialize_sym_int: sympy rebuilds the "
                             "expression under the symbol's assumptions (positive, integer), so "
                             "`Min(8, 8*s40)` is 8 once loaded: an equal value, another form",
}


def function_of(reader: str, signature: str) -> str:
    if reader == "cpp" and "std::get: wrong index for variant" in signature:
        return ("the unions' from_json in torch/csrc/utils/generated_serialization_types.h "
                "(e.g. `from_json(const nlohmann::json&, InputSpec&)`): a union object with no known "
                "key returns without a word, leaving `variant_` empty (index 0) and `tag_` at its "
                "default; the union's to_json then calls `get_<tag>()`, a std::get of the wrong index")
    path = signature.split(": ")[1] if ": " in signature else ""
    for (r, suffix), f in FUNCTIONS.items():
        if r == reader and path.endswith(suffix):
            return f
    return CPP_FUNCTION if reader == "cpp" else PY_FUNCTION


def mutant_source(path: str):
    """(zoo archive, [old, new]) for a mutant of oracle/mutate.py (its DIR/mutants.jsonl), so a
    one-liner rebuilds it from the committed zoo; None for any other file."""
    index = os.path.join(os.path.dirname(os.path.join(ROOT, path)), "mutants.jsonl")
    if not os.path.exists(index):
        return None
    stem = os.path.basename(path)[:-len(".pt2")]
    with open(index) as f:
        rec = next((r for r in map(json.loads, f) if r["id"] == stem), None)
    if rec is None:
        return None
    zoo = os.path.join("corpus", "programs", rec["program"] + ".pt2")
    with zipfile.ZipFile(os.path.join(ROOT, zoo)) as z:
        entry = program_entries(z)[0]
        orig = z.read(entry).decode("utf-8")
    with zipfile.ZipFile(os.path.join(ROOT, path)) as z:
        text = z.read(program_entries(z)[0]).decode("utf-8")
    return zoo, entry, minimal_edit(orig, text)


def minimal_edit(orig: str, text: str) -> list:
    """[old, new]: the one replacement (the first of `old` in orig) that makes text of orig,
    with enough context around the changed span that `old` occurs once."""
    i = 0
    while i < min(len(orig), len(text)) and orig[i] == text[i]:
        i += 1
    j = 0
    while j < min(len(orig), len(text)) - i and orig[-1 - j] == text[-1 - j]:
        j += 1
    ctx = 16
    while True:
        a, b = max(0, i - ctx), j - ctx if j > ctx else 0
        old, new = orig[a:len(orig) - b], text[a:len(text) - b]
        if orig.count(old) == 1 or (a == 0 and b == 0):
            break
        ctx *= 2
    return [old, new]


_INDEX: dict = {}


def mutation_class(path: str) -> str | None:
    """The mutation class of a mutant of oracle/mutate.py (its DIR/mutants.jsonl), else None."""
    d = os.path.dirname(os.path.join(ROOT, path))
    if d not in _INDEX:
        index = os.path.join(d, "mutants.jsonl")
        _INDEX[d] = {}
        if os.path.exists(index):
            with open(index) as f:
                _INDEX[d] = {r["id"]: r["class"] for r in map(json.loads, f)}
    return _INDEX[d].get(os.path.basename(path)[:-len(".pt2")])


_RUN = re.compile(r"(.{1,16}?)\1{15,}", re.S)


def str_expr(s: str) -> str:
    """Python source for the string s, a long run of one unit written `"unit"*n` (a
    mutant's very long string would not fit in one argument of `bash -c`)."""
    parts, i = [], 0
    for m in _RUN.finditer(s):
        if m.start() > i:
            parts.append(json.dumps(s[i:m.start()]))
        unit = m.group(1)
        parts.append(f"{json.dumps(unit)}*{len(m.group(0)) // len(unit)}")
        i = m.end()
    if i < len(s) or not parts:
        parts.append(json.dumps(s[i:]))
    return "+".join(parts)


def text_expr(path: str, entry: str, src=None) -> str:
    """Python source for the program JSON of `path`: read from it, or a mutant rebuilt
    from its zoo program with one replacement (`src`: (zoo, entry, [old, new]), as
    mutant_source returns it; looked up from `path` when not given)."""
    src = src or mutant_source(path)
    if src is None:
        return f"zipfile.ZipFile({json.dumps(path)}).read({json.dumps(entry)}).decode()"
    zoo, zentry, (old, new) = src
    return (f"zipfile.ZipFile({json.dumps(zoo)}).read({json.dumps(zentry)}).decode()"
            f".replace({str_expr(old)},{str_expr(new)},1)")


def archive_expr(path: str, src=None) -> tuple[str, str]:
    """(setup, argument of torch.export.load): the archive itself, or a mutant rebuilt in
    memory from its zoo archive (every other entry kept)."""
    src = src or mutant_source(path)
    if src is None:
        return "", json.dumps(path)
    zoo, zentry, (old, new) = src
    return (f"z=zipfile.ZipFile({json.dumps(zoo)});n={json.dumps(zentry)};"
            f"m=z.read(n).decode().replace({str_expr(old)},{str_expr(new)},1);a=io.BytesIO();"
            "w=zipfile.ZipFile(a,\"w\");[w.writestr(i,m if i.filename==n else z.read(i)) for i in z.infolist()];"
            "w.close();a.seek(0);"), "a"


def one_liner(reader: str, path: str, entry: str, jpath, registrations: bool, src=None) -> str:
    p = json.dumps(list(jpath))
    head = "import io,json,zipfile,torch;" + ("import zoo_types;" if registrations else "") + _GET
    if reader == "cpp":
        body = (f"t={text_expr(path, entry, src)};"
                "o=torch._C._export.serialize_exported_program(torch._C._export.deserialize_exported_program(t));"
                f"print(repr(g(json.loads(t),{p})),\"->\",repr(g(json.loads(o),{p})))")
    else:
        setup, arg = archive_expr(path, src)
        body = (f"{setup}t={text_expr(path, entry, src)};"
                f"b=io.BytesIO();torch.export.save(torch.export.load({arg}),b);"
                "z=zipfile.ZipFile(b);o=z.read([n for n in z.namelist() if n.endswith(\"models/model.json\")][0]);"
                f"print(repr(g(json.loads(t),{p})),\"->\",repr(g(json.loads(o),{p})))")
    env = "PYTHONPATH=oracle " if registrations else ""
    return f"{env}python -c {shell_quote(head + body)}"


def shell_quote(code: str) -> str:
    """code in single quotes for bash (a `'` in the program JSON, e.g. a runtime
    assert's message naming a node, closes and reopens the quotes: `'\\''`)."""
    return "'" + code.replace("'", "'\\''") + "'"


def crash_liner(reader: str, path: str, entry: str | None, registrations: bool, src=None) -> str:
    head = "import zipfile,torch;" + ("import zoo_types;" if registrations else "")
    if reader == "cpp":
        body = (f"t={text_expr(path, entry, src)};"
                "torch._C._export.serialize_exported_program(torch._C._export.deserialize_exported_program(t));"
                "print(\"round trip ok\")")
    else:
        setup, arg = archive_expr(path, src)
        body = (f"import io;{setup}b=io.BytesIO();torch.export.save(torch.export.load({arg}),b);"
                "print(\"round trip ok\")")
    env = "PYTHONPATH=oracle " if registrations else ""
    return f"{env}python -c {shell_quote(head + body)}"


def run_liner(liner: str, timeout: float) -> dict:
    """Run a one-liner from the repository root with this interpreter as `python`."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    try:
        p = subprocess.run(["bash", "-c", liner], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "stdout": "", "last_stderr": f"timeout after {timeout}s"}
    err = [l for l in p.stderr.strip().splitlines() if l.strip()]
    return {"returncode": p.returncode, "stdout": p.stdout.strip(), "last_stderr": err[-1] if err else ""}


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
