"""Mutated program files in serve mode (`capture.py --serve`, issue 15 item 3):
the requests behind `torchspec fuzz --live --mutate`.

    {"request": "mutant_lanes", "id"}
        the lanes of the draw (mutate.Zoo.describe): {"period", "timeout_factor",
        "lanes": {"small": [PROGRAM...], "large": [...]}, "costs": {PROGRAM: cost}};
        mutant i is of the large lane when i % period == period - 1.

    {"request": "mutant", "id", "seed", "index", "report": bool}
        mutant `index` of `seed`, exactly as `oracle/mutate.py --seed SEED` makes
        its mutant `index` (mutate.make_mutant: its lane, class and program, the
        rest from random.Random(f"{seed}:{index}")), loaded by both of PyTorch's
        readers.
        Reply: {"program", "class", "lane", "mutation", "model_json": TEXT,
                "python": OUTCOME, "cpp": OUTCOME, "golden",
                "upstream_class": 4 | 5 | null, "round_trip": {...}}
        or {"no_site": CLASS, "lane"} when no program of the lane has a site for
        the class.
        "upstream_class" (when the readers disagree on accept/refuse): 4 when
        Python loads and C++ refuses, or C++ loads JSON Python's schema reader
        (_dict_to_dataclass) refuses; 5 when C++ loads and only Python's semantic
        checks refuse (oracle/upstream_triage.py's classes).
        "round_trip" (when both readers load): {"cpp": RT, "python": RT}, each
        round_trip_json.round_trip_summary: the program JSON written back by
        serialize_exported_program and by torch.export.save, compared with TEXT
        as JSON values under Python's rules.

    {"request": "mutant_load", "id", "program", "model_json": TEXT, "report": bool}
        the zoo archive PROGRAM (corpus/programs/PROGRAM.pt2) with its
        models/model.json replaced by TEXT, loaded by both readers.
        Reply: {"python": OUTCOME, "cpp": OUTCOME}

    With "programs_dir": DIR and "program": PROGRAM, both requests read
    DIR/PROGRAM.pt2 instead of the zoo's, and "mutant" mutates only it (the
    generated programs of `torchspec fuzz --live --mutate --programs`).

The Python reader is `torch.export.load` on the archive (built in memory:
every other entry keeps its bytes and ZipInfo). Its OUTCOME is
    {"outcome": "ok"} (with "report": capture.py's program report when asked)
    {"outcome": "error", "type", "message", "original": {"type", "message"}}
where type/message are what load() raised and "original" the exception the
deserializer really raised, as oracle/mutant_outcomes.py records it (load()
logs it and raises a generic RuntimeError; "original" ends its __cause__ chain).

Exception messages are PyTorch's text with one change: a memory address
(`<function sym_int at 0x7f77f1a0fe20>`) is written `0x<address>`, so a golden
reproduces (the workers run with PYTHONHASHSEED=0, so a set prints in one order).

The C++ reader is `torch._C._export.deserialize_exported_program(TEXT)` (the
deserializer generated from schema.yaml), and its JSON written back by
`serialize_exported_program`. Its OUTCOME is {"outcome": "ok", "written_back":
"same" | "differs" | "unparsed"} (the written-back JSON compared as a JSON value
with TEXT; "unparsed" when TEXT has a duplicated key or does not parse) or
{"outcome": "error", "type", "message"}.
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
from typing import Any

import zoo_types  # noqa: F401  (the zoo's custom ops and pytree types)
import golden_encoding
import mutate
import round_trip_json
from mutant_outcomes import KeepExceptions, cache_schema_type_hints, exc_json

import torch

warnings.simplefilter("ignore")
cache_schema_type_hints()


class _Zoo:
    """The zoo's programs and PyTorch's operator set, read once per worker."""

    def __init__(self):
        self.programs = mutate.zoo_programs()
        self.docs = mutate.read_docs(self.programs)
        self.texts = {p: mutate.dumps(d) for p, d in self.docs.items()}
        self.draw = mutate.Zoo(self.programs, self.docs, self.texts)
        self.ops = mutate.aten_ops()
        self.op_keys = sorted(self.ops)
        self.classes = list(mutate.CLASSES)
        self.keep = KeepExceptions()


_ZOO = None


def zoo() -> _Zoo:
    global _ZOO
    if _ZOO is None:
        _ZOO = _Zoo()
    return _ZOO


_ADDRESS = re.compile(r"\b0x[0-9a-f]{6,16}\b")


def _address_free(outcome: dict) -> dict:
    for e in (outcome, outcome.get("original")):
        if isinstance(e, dict) and isinstance(e.get("message"), str):
            e["message"] = _ADDRESS.sub("0x<address>", e["message"])
    return outcome


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicated key")
    return dict(pairs)


def cpp_outcome(text: str, round_trip: bool = False) -> tuple[dict, dict | None]:
    """The C++ reader's OUTCOME, and (round_trip: when it loads) the round trip
    of its writer (round_trip_json.round_trip_summary)."""
    try:
        cpp = torch._C._export.deserialize_exported_program(text)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return {"outcome": "error", **exc_json(e)}, None
    try:
        back = torch._C._export.serialize_exported_program(cpp)
    except Exception as e:  # noqa: BLE001 - the writer raising after the reader accepted
        rt = round_trip_json.round_trip_summary(text, None, e, "cpp") if round_trip else None
        return {"outcome": "error", **exc_json(e)}, rt
    try:
        same = json.loads(back) == json.loads(text, object_pairs_hook=_no_duplicates)
        written_back = "same" if same else "differs"
    except ValueError:
        written_back = "unparsed"
    rt = None
    if round_trip:
        try:
            rt = round_trip_json.round_trip_summary(text, back, None, "cpp")
        except ValueError:
            rt = {"outcome": "unparsed"}
    return {"outcome": "ok", "written_back": written_back}, rt


def python_outcome(program: str, text: str, report: bool, directory: str) -> tuple[dict, object]:
    """torch.export.load's OUTCOME, and the loaded program (None: refused)."""
    buf = io.BytesIO()
    mutate.write_mutant(os.path.join(directory, program + ".pt2"), buf,
                        text.encode("utf-8"))
    buf.seek(0)
    res = zoo().keep.load(buf)
    ep = res.pop("ep", None)
    out = {k: res[k] for k in ("outcome", "type", "message", "original") if k in res}
    if ep is not None and report:
        try:
            version = json.loads(text)["schema_version"]
            out["report"] = golden_encoding.program_report(ep, [version["major"], version["minor"]])
            golden_encoding.dumps(out["report"])  # a value JSON cannot hold (a complex constant)
        except Exception as e:  # noqa: BLE001
            out["report"] = {"error": exc_json(e)}
    return out, ep


def in_schema_reader(exc) -> bool:
    """Whether torch.export.load's refusal came from its schema reader
    (_dict_to_dataclass, reading the JSON into the schema's dataclasses) rather
    than from the deserializer's semantic checks."""
    e = exc
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_name in ("_dict_to_dataclass", "_bytes_to_dataclass"):
                return True
            tb = tb.tb_next
        e = e.__cause__ or e.__context__
    return False


def outcomes(program: str, text: str, report: bool, directory: str = mutate.PROGRAMS,
             extras: bool = False) -> dict:
    """Both readers' outcomes, and "golden": the line `capture.py
    --mutant-goldens` writes for them (the Rust side keeps it byte for byte).
    extras: "upstream_class" and "round_trip" too (never in the golden)."""
    python, ep = python_outcome(program, text, report, directory)
    cpp, cpp_rt = cpp_outcome(text, round_trip=extras and ep is not None)
    out = {"python": _address_free(python), "cpp": _address_free(cpp)}
    out["golden"] = golden_encoding.dumps(out)
    if extras:
        py_loads, cpp_loads = python["outcome"] == "ok", cpp["outcome"] == "ok"
        if py_loads != cpp_loads:
            if py_loads:
                out["upstream_class"] = 4
            else:
                out["upstream_class"] = 4 if in_schema_reader(zoo().keep.last) else 5
        if ep is not None and cpp_rt is not None:
            try:
                back, err = round_trip_json.python_write_back(ep, archive=False), None
            except Exception as e:  # noqa: BLE001 - the writer raising after the reader accepted
                back, err = None, e
            try:
                py_rt = round_trip_json.round_trip_summary(text, back, err, "python")
            except ValueError:
                py_rt = {"outcome": "unparsed"}
            out["round_trip"] = {"cpp": cpp_rt, "python": py_rt}
    return out


def apply_edits(text: str, edits) -> str | None:
    """Each (old, new) replaced once, in order (None: an old is not there)."""
    for old, new in edits:
        if old not in text:
            return None
        text = text.replace(old, new, 1)
    return text


def golden_of(mutant: dict) -> str:
    """The golden line of a kept mutant (corpus/mutants/NAME.json)."""
    z = zoo()
    program = mutant["program"]
    import zipfile
    with zipfile.ZipFile(os.path.join(mutate.PROGRAMS, program + ".pt2")) as a:
        original = a.read(mutate.model_entry(a)).decode("utf-8")
    text = apply_edits(original, mutant["edits"])
    if text is None:
        raise ValueError(f"an edit of mutant {mutant['name']} is not in {program}.pt2")
    return outcomes(program, text, report=True)["golden"]


_GENERATED: dict = {}


def _generated(directory: str, program: str) -> "mutate.Zoo":
    """One generated program as make_mutant draws from it (the last one kept)."""
    key = (directory, program)
    if key not in _GENERATED:
        _GENERATED.clear()
        programs = [program + ".pt2"]
        _GENERATED[key] = mutate.Zoo(programs, mutate.read_docs(programs, directory), laned=False)
    return _GENERATED[key]


def serve(req: dict, oracle: Any = None) -> dict:  # ORACLE (capture.py) unused here
    z = zoo()
    report = bool(req.get("report"))
    directory = req.get("programs_dir")
    if req["request"] == "mutant":
        draw = z.draw
        if directory is not None:
            draw = _generated(directory, req["program"])
        index = int(req["index"])
        made = mutate.make_mutant(int(req["seed"]), index, draw, z.ops, z.op_keys, z.classes)
        if made is None:
            return {"no_site": draw.class_of(index, z.classes), "lane": draw.lane_of(index)}
        prog, cls, desc, _expect, text, lane = made
        program = prog[:-len(".pt2")]
        return {"program": program, "class": cls, "lane": lane, "mutation": desc,
                "model_json": text,
                **outcomes(program, text, report, directory or mutate.PROGRAMS, extras=True)}
    if req["request"] == "mutant_lanes":
        return z.draw.describe()
    program = req["program"]
    if directory is not None:
        if not os.path.exists(os.path.join(directory, program + ".pt2")):
            return {"invalid": f"no program {program!r} in {directory}"}
        return outcomes(program, req["model_json"], report, directory)
    if program + ".pt2" not in z.programs:
        return {"invalid": f"no zoo program {program!r}"}
    return outcomes(program, req["model_json"], report)
