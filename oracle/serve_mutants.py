"""Mutated program files in serve mode (`capture.py --serve`, issue 15 item 3):
the requests behind `torchspec fuzz --live --mutate`.

    {"request": "mutant", "id", "seed", "index", "report": bool}
        mutant `index` of `seed`, exactly as `oracle/mutate.py --seed SEED` makes
        its mutant `index` (class CLASSES[index % 18], the rest from
        random.Random(f"{seed}:{index}")), loaded by both of PyTorch's readers.
        Reply: {"program", "class", "mutation", "model_json": TEXT,
                "python": OUTCOME, "cpp": OUTCOME}
        or {"no_site": CLASS} when no zoo program has a site for the class.

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
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import zoo_types  # noqa: E402,F401  (the zoo's custom ops and pytree types)
import mutate  # noqa: E402
from mutant_outcomes import KeepExceptions, cache_schema_type_hints, exc_json  # noqa: E402

import torch  # noqa: E402

warnings.simplefilter("ignore")
cache_schema_type_hints()


class _Zoo:
    """The zoo's programs and PyTorch's operator set, read once per worker."""

    def __init__(self):
        self.programs = mutate.zoo_programs()
        self.docs = mutate.read_docs(self.programs)
        self.texts = {p: mutate.dumps(d) for p, d in self.docs.items()}
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


def cpp_outcome(text: str) -> dict:
    try:
        cpp = torch._C._export.deserialize_exported_program(text)
        back = torch._C._export.serialize_exported_program(cpp)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return {"outcome": "error", **exc_json(e)}
    try:
        same = json.loads(back) == json.loads(text, object_pairs_hook=_no_duplicates)
        written_back = "same" if same else "differs"
    except ValueError:
        written_back = "unparsed"
    return {"outcome": "ok", "written_back": written_back}


def _capture():
    """capture.py as a module: the running one in serve mode (its torch imported)."""
    main = sys.modules.get("__main__")
    if hasattr(main, "program_report"):
        return main
    import capture
    capture.import_torch()
    return capture


def python_outcome(program: str, text: str, report: bool, directory: str) -> dict:
    capture = _capture()
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
            out["report"] = capture.program_report(ep, [version["major"], version["minor"]])
        except Exception as e:  # noqa: BLE001
            out["report"] = {"error": exc_json(e)}
    return out


def outcomes(program: str, text: str, report: bool, directory: str = mutate.PROGRAMS) -> dict:
    """Both readers' outcomes, and "golden": the line `capture.py
    --mutant-goldens` writes for them (the Rust side keeps it byte for byte)."""
    out = {"python": _address_free(python_outcome(program, text, report, directory)),
           "cpp": _address_free(cpp_outcome(text))}
    out["golden"] = _capture().dumps(out)
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


def _generated(directory: str, program: str) -> tuple[list, dict, dict]:
    """One generated program as make_mutant takes programs (the last one kept)."""
    key = (directory, program)
    if key not in _GENERATED:
        _GENERATED.clear()
        programs = [program + ".pt2"]
        docs = mutate.read_docs(programs, directory)
        _GENERATED[key] = (programs, docs, {p: mutate.dumps(d) for p, d in docs.items()})
    return _GENERATED[key]


def serve(req: dict) -> dict:
    z = zoo()
    report = bool(req.get("report"))
    directory = req.get("programs_dir")
    if req["request"] == "mutant":
        programs, docs, texts = z.programs, z.docs, z.texts
        if directory is not None:
            programs, docs, texts = _generated(directory, req["program"])
        made = mutate.make_mutant(int(req["seed"]), int(req["index"]), programs, docs,
                                  z.ops, z.op_keys, z.classes, texts)
        if made is None:
            return {"no_site": z.classes[int(req["index"]) % len(z.classes)]}
        prog, cls, desc, _expect, text = made
        program = prog[:-len(".pt2")]
        return {"program": program, "class": cls, "mutation": desc, "model_json": text,
                **outcomes(program, text, report, directory or mutate.PROGRAMS)}
    program = req["program"]
    if directory is not None:
        if not os.path.exists(os.path.join(directory, program + ".pt2")):
            return {"invalid": f"no program {program!r} in {directory}"}
        return outcomes(program, req["model_json"], report, directory)
    if program + ".pt2" not in z.programs:
        return {"invalid": f"no zoo program {program!r}"}
    return outcomes(program, req["model_json"], report)
