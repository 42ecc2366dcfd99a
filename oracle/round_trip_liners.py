"""The findings of oracle/round_trip.py and oracle/round_trip_fuzz.py as `python -c`
one-liners that rebuild their input from the committed corpus and run on stock torch,
and the upstream function behind each signature.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile

from round_trip_json import program_entries

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CPP_FUNCTION = ("torch::_export::to_json / from_json (torch/csrc/utils/generated_serialization_types.h, "
                "generated from torch/_export/serde/schema.yaml) behind "
                "torch._C._export.deserialize_exported_program / serialize_exported_program")
PY_FUNCTION = ("torch._export.serde.serialize: ExportedProgramDeserializer.deserialize, "
               "then ExportedProgramSerializer.serialize (torch.export.load / torch.export.save)")


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
