"""PyTorch oracle: evaluate a case file (case format v1, JSON Lines) with real PyTorch 2.15.0.

Usage:
    python oracle/capture.py CASES.jsonl > RESULTS.jsonl
    python oracle/capture.py --program PATH      # ExportedProgram reports: not implemented yet

The contract is /work/shared/case-format.md (case format v1). For each case line
this prints exactly one result line on stdout, in order, with the same id:

    {"id": ID, "ok": {"repr": ..., "jsonable": ...}}    build / lookup
    {"id": ID, "ok": {"name": ...}}                     source_name
    {"id": ID, "error": {"type": ..., "message": ...}}  evaluation raised

The whole file is validated structurally before anything is evaluated. A
malformed file prints ``FILE:LINE: what is wrong`` on stderr, nothing on stdout,
and exits 1. stdout carries only result lines: everything PyTorch prints, warns
or logs goes to stderr (file descriptor 1 itself is pointed at stderr while
PyTorch runs; results are written through a saved duplicate of the real stdout).
Output is deterministic: the same case file always gives the same bytes.

This file is written against the PyTorch API only (dynamic_spec.py,
_dynamo/source.py, lookup_spec_from_dynamo_source), independently of the
Rust reimplementation.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from typing import Any, NoReturn


# ---------------------------------------------------------------------------
# The case language (structure only; no torch needed to validate).
# ---------------------------------------------------------------------------

KINDS = ("build", "lookup", "source_name")

# Top-level keys allowed per kind ("vars" is optional for every kind). Unknown
# keys are rejected: the format may grow optional fields that change a case's
# meaning, and silently ignoring one would produce a wrong golden.
CASE_KEYS = {
    "build": {"id", "kind", "vars", "value"},
    "lookup": {"id", "kind", "vars", "spec", "source"},
    "source_name": {"id", "kind", "vars", "source"},
}
REQUIRED_CASE_KEYS = {
    "build": ("id", "kind", "value"),
    "lookup": ("id", "kind", "spec", "source"),
    "source_name": ("id", "kind", "source"),
}

VAR_KINDS = ("IntVar", "ShapeVar")
VAR_ARGS = ("name", "min", "max", "optimization_hint")

BINARY_OPS = ("add", "sub", "mul", "floordiv", "mod", "pow", "truediv",
              "eq", "ne", "lt", "le", "gt", "ge", "and", "or")
UNARY_OPS = ("neg", "not")

# One-argument spec constructors: {"TensorSpec": v} -> TensorSpec(eval(v)).
SPEC_CTORS = ("TensorSpec", "ObjectSpec", "DictSpec", "SeqSpec", "ParamsSpec")
# ShapesSpec keyword arguments, in evaluation order.
SHAPES_SPEC_ARGS = ("params", "assumptions", "globals")

# Field kinds of SOURCE objects.
F_SOURCE = "a SOURCE"
F_SOURCE_OR_VALUE = "a SOURCE or a VALUE"
F_VALUE = "a VALUE"
F_STR = "a string"
F_BOOL = "a boolean"
F_INT = "an integer"

_CHAINED = (("base", F_SOURCE, True),)
_ATTR = _CHAINED + (("member", F_STR, True),)
_GETITEM = _CHAINED + (("index", F_VALUE, True), ("index_is_slice", F_BOOL, False))
_DICT_GETITEM = _CHAINED + (("index", F_SOURCE_OR_VALUE, True),)

# class name -> ((field, field kind, required), ...), in the order the fields
# are evaluated (base first, as in the dataclass). Optional fields are passed
# to the constructor only when present in the case.
SOURCE_FIELDS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "LocalSource": (
        ("local_name", F_STR, True),
        ("is_input", F_BOOL, False),
        ("is_varargs", F_BOOL, False),
        ("is_varkw", F_BOOL, False),
        ("is_derefed_cell_contents", F_BOOL, False),
    ),
    "GlobalSource": (("global_name", F_STR, True),),
    "AttrSource": _ATTR,
    "ParamBufferSource": _ATTR,
    "UnspecializedParamBufferSource": _ATTR,
    "CellContentsSource": _ATTR + (("freevar_name", F_STR, False),),
    "GradSource": _CHAINED + (("member", F_STR, False),),
    "NNModuleSource": _CHAINED,
    "UnspecializedNNModuleSource": _CHAINED,
    "UnspecializedBuiltinNNModuleSource": _CHAINED,
    "FSDPNNModuleSource": _CHAINED,
    "TypeSource": _CHAINED,
    "DictGetItemSource": _DICT_GETITEM,
    "DictSubclassGetItemSource": _DICT_GETITEM,
    "GetItemSource": _GETITEM,
    "ListGetItemSource": _GETITEM,
    "TupleIteratorGetItemSource": _GETITEM,
    "ConstDictKeySource": _CHAINED + (("index", F_INT, True),),
}


class CaseFileError(Exception):
    """A structural problem in the case file (not an evaluation error)."""


def _is_int(x: Any) -> bool:
    # JSON true/false parse to bool, which is an int subclass in Python.
    return isinstance(x, int) and not isinstance(x, bool)


def _is_one_key_object(node: Any) -> bool:
    return isinstance(node, dict) and len(node) == 1


def _is_source(node: Any) -> bool:
    return _is_one_key_object(node) and next(iter(node)) in SOURCE_FIELDS


def _check_list(node: Any, where: str, what: str) -> list:
    if not isinstance(node, list):
        raise CaseFileError(f"{where}: {what} must be a JSON array")
    return node


def check_value(node: Any, where: str, nvars: int) -> None:
    """Validate a VALUE expression (see the VALUE table of the format)."""
    if node is None or isinstance(node, (bool, int, float, str)):
        return
    if isinstance(node, list):
        for i, item in enumerate(node):
            check_value(item, f"{where}[{i}]", nvars)
        return
    assert isinstance(node, dict)
    keys = set(node)
    if keys == {"op", "args"}:
        op, args = node["op"], node["args"]
        if not isinstance(op, str):
            raise CaseFileError(f"{where}.op: op must be a string, got {op!r}")
        if op in BINARY_OPS:
            arity = 2
        elif op in UNARY_OPS:
            arity = 1
        else:
            raise CaseFileError(f"{where}.op: unknown op {op!r}")
        _check_list(args, f"{where}.args", f"args of op {op!r}")
        if len(args) != arity:
            raise CaseFileError(
                f"{where}.args: op {op!r} takes {arity} argument(s), got {len(args)}")
        for i, arg in enumerate(args):
            check_value(arg, f"{where}.args[{i}]", nvars)
        return
    if "op" in keys or "args" in keys:
        raise CaseFileError(
            f"{where}: an op object has exactly the keys 'op' and 'args', got {sorted(keys)}")
    if len(keys) != 1:
        raise CaseFileError(
            f"{where}: a VALUE object must have exactly one key (dicts are written "
            f"{{\"dict\": [[k, v], ...]}}), got {sorted(keys)}")
    (key, arg), = node.items()
    sub = f"{where}.{key}"
    if key == "tuple":
        for i, item in enumerate(_check_list(arg, sub, "a tuple")):
            check_value(item, f"{sub}[{i}]", nvars)
    elif key == "dict":
        for i, pair in enumerate(_check_list(arg, sub, "a dict")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise CaseFileError(f"{sub}[{i}]: a dict entry must be a [key, value] pair")
            check_value(pair[0], f"{sub}[{i}][0]", nvars)
            check_value(pair[1], f"{sub}[{i}][1]", nvars)
    elif key == "slice":
        if not isinstance(arg, list) or len(arg) != 3:
            raise CaseFileError(f"{sub}: a slice must be [start, stop, step]")
        for i, item in enumerate(arg):
            check_value(item, f"{sub}[{i}]", nvars)
    elif key == "var":
        if not _is_int(arg):
            raise CaseFileError(f"{sub}: var index must be an integer, got {arg!r}")
        if not 0 <= arg < nvars:
            raise CaseFileError(
                f"{sub}: var index {arg} out of range (the case has {nvars} var(s))")
    elif key in SPEC_CTORS:
        check_value(arg, sub, nvars)
    elif key == "ShapesSpec":
        if not isinstance(arg, dict):
            raise CaseFileError(
                f"{sub}: ShapesSpec takes an object with keys among {list(SHAPES_SPEC_ARGS)}")
        unknown = sorted(set(arg) - set(SHAPES_SPEC_ARGS))
        if unknown:
            raise CaseFileError(f"{sub}: unknown ShapesSpec argument(s) {unknown}")
        for name in SHAPES_SPEC_ARGS:
            if name in arg:
                check_value(arg[name], f"{sub}.{name}", nvars)
    elif key in SOURCE_FIELDS:
        raise CaseFileError(f"{where}: a SOURCE ({key}) is not allowed where a VALUE is expected")
    else:
        raise CaseFileError(f"{where}: unknown object {key!r} (neither a VALUE form nor a SOURCE class)")


def check_source(node: Any, where: str, nvars: int) -> None:
    """Validate a SOURCE object (see the SOURCE table of the format)."""
    if not _is_one_key_object(node):
        raise CaseFileError(f"{where}: expected a SOURCE (a one-key object naming a Source class)")
    (cls, fields), = node.items()
    if cls not in SOURCE_FIELDS:
        raise CaseFileError(f"{where}: unknown Source class {cls!r}")
    sub = f"{where}.{cls}"
    if not isinstance(fields, dict):
        raise CaseFileError(f"{sub}: the fields of a SOURCE must be a JSON object")
    spec = SOURCE_FIELDS[cls]
    unknown = sorted(set(fields) - {name for name, _, _ in spec})
    if unknown:
        raise CaseFileError(f"{sub}: unknown field(s) {unknown} for {cls}")
    for name, kind, required in spec:
        if name not in fields:
            if required:
                raise CaseFileError(f"{sub}: missing field {name!r}")
            continue
        val, fwhere = fields[name], f"{sub}.{name}"
        if kind == F_SOURCE:
            check_source(val, fwhere, nvars)
        elif kind == F_SOURCE_OR_VALUE:
            if _is_source(val):
                check_source(val, fwhere, nvars)
            else:
                check_value(val, fwhere, nvars)
        elif kind == F_VALUE:
            check_value(val, fwhere, nvars)
        elif kind == F_STR and not isinstance(val, str) \
                or kind == F_BOOL and not isinstance(val, bool) \
                or kind == F_INT and not _is_int(val):
            raise CaseFileError(f"{fwhere}: must be {kind}, got {val!r}")


def check_var(node: Any, where: str) -> None:
    if not isinstance(node, dict):
        raise CaseFileError(f"{where}: a var must be a JSON object")
    if "kind" not in node:
        raise CaseFileError(f"{where}: missing 'kind'")
    if node["kind"] not in VAR_KINDS:
        raise CaseFileError(f"{where}.kind: must be one of {list(VAR_KINDS)}, got {node['kind']!r}")
    unknown = sorted(set(node) - {"kind", *VAR_ARGS})
    if unknown:
        raise CaseFileError(f"{where}: unknown var key(s) {unknown}")
    for name in VAR_ARGS:
        if name in node:
            val = node[name]
            if not (val is None or isinstance(val, str) or _is_int(val)):
                raise CaseFileError(
                    f"{where}.{name}: must be an integer, a string or null, got {val!r}")


def check_case(case: Any) -> None:
    """Validate one parsed case line; raise CaseFileError on a structural problem."""
    if not isinstance(case, dict):
        raise CaseFileError("a case must be a JSON object")
    if "id" not in case:
        raise CaseFileError("missing 'id'")
    if not isinstance(case["id"], str):
        raise CaseFileError(f"'id' must be a string, got {case['id']!r}")
    if "kind" not in case:
        raise CaseFileError("missing 'kind'")
    kind = case["kind"]
    if kind not in KINDS:
        raise CaseFileError(f"unknown kind {kind!r} (expected one of {list(KINDS)})")
    unknown = sorted(set(case) - CASE_KEYS[kind])
    if unknown:
        raise CaseFileError(f"unknown key(s) {unknown} for kind {kind!r}")
    for key in REQUIRED_CASE_KEYS[kind]:
        if key not in case:
            raise CaseFileError(f"kind {kind!r} needs {key!r}")
    vars_ = _check_list(case.get("vars", []), "vars", "vars")
    for i, var in enumerate(vars_):
        check_var(var, f"vars[{i}]")
    nvars = len(vars_)
    if kind == "build":
        check_value(case["value"], "value", nvars)
    elif kind == "lookup":
        # lookup_spec_from_dynamo_source takes a ShapesSpec or None; anything
        # else is a malformed case, not something to hand to PyTorch.
        spec = case["spec"]
        if not (spec is None or _is_one_key_object(spec) and "ShapesSpec" in spec):
            raise CaseFileError("spec: must be null or a {\"ShapesSpec\": {...}} object")
        check_value(spec, "spec", nvars)
        check_source(case["source"], "source", nvars)
    else:
        check_source(case["source"], "source", nvars)


def _reject_constant(name: str) -> NoReturn:
    # Python's json accepts NaN/Infinity/-Infinity; strict JSON does not.
    raise ValueError(f"{name} is not valid JSON")


def _object_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, val in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r} in a JSON object")
        obj[key] = val
    return obj


def read_cases(path: str) -> list[dict[str, Any]]:
    """Parse and validate the whole case file; exit 1 on the first problem."""

    def fail(lineno: int, msg: str) -> NoReturn:
        print(f"{path}:{lineno}: {msg}", file=sys.stderr)
        sys.exit(1)

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"{path}: cannot read: {e.strerror or e}", file=sys.stderr)
        sys.exit(1)

    lines = data.split(b"\n")
    # Blank lines at the very end are ignored (this includes the final newline).
    while lines and not lines[-1].strip():
        lines.pop()
    cases: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            fail(lineno, "blank line in the middle of the file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            fail(lineno, f"not valid UTF-8: {e}")
        try:
            case = json.loads(text, object_pairs_hook=_object_no_duplicates,
                              parse_constant=_reject_constant)
        except RecursionError:
            fail(lineno, "invalid JSON: nested too deeply")
        except ValueError as e:
            fail(lineno, f"invalid JSON: {e}")
        try:
            check_case(case)
        except CaseFileError as e:
            fail(lineno, str(e))
        except RecursionError:
            fail(lineno, "case nested too deeply to validate")
        if case["id"] in seen_ids:
            fail(lineno, f"duplicate id {case['id']!r} (first on line {seen_ids[case['id']]})")
        seen_ids[case["id"]] = lineno
        cases.append(case)
    return cases


# ---------------------------------------------------------------------------
# Evaluation with real PyTorch (imported lazily, after validation).
# ---------------------------------------------------------------------------

torch: Any = None
dynamic_spec: Any = None
dynamo_source: Any = None
lookup_spec_from_dynamo_source: Any = None
BINARY_FNS: dict[str, Any] = {}


def import_torch() -> None:
    global torch, dynamic_spec, dynamo_source, lookup_spec_from_dynamo_source
    import operator

    import torch as _torch
    import torch._dynamo.source as _source
    import torch.fx.experimental.dynamic_spec as _dynamic_spec
    from torch._dynamo.variables.builder import lookup_spec_from_dynamo_source as _lookup

    torch, dynamic_spec, dynamo_source = _torch, _dynamic_spec, _source
    lookup_spec_from_dynamo_source = _lookup
    BINARY_FNS.update({
        "add": operator.add, "sub": operator.sub, "mul": operator.mul,
        "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
        "truediv": operator.truediv,
        "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
        "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        # `and` / `or` are the bitwise operators: logical on SymBool (and bool),
        # bitwise on plain ints.
        "and": operator.and_, "or": operator.or_,
    })


def reset_spec_state() -> None:
    """Make the next case behave as if run in a fresh Python process.

    The uid counter decides the ``#N`` suffix of every var name. The spec
    ShapeEnv singleton caches FX nodes keyed by expression (not by the range
    of the symbols in it), so without dropping it ``a % 3`` would print
    ``Mod`` or ``PythonMod`` depending on what an earlier case built.
    """
    dynamic_spec.IntVar._uid_counter = itertools.count()
    dynamic_spec._SPEC_SHAPE_ENV = None


def make_vars(specs: list[dict[str, Any]]) -> list[Any]:
    out = []
    for spec in specs:
        cls = getattr(dynamic_spec, spec["kind"])
        kwargs = {name: spec[name] for name in VAR_ARGS if name in spec}
        # ShapeVar checks min >= 0 before taking a uid, so a failed
        # construction consumes no uid (and ends the case anyway).
        out.append(cls(**kwargs))
    return out


def eval_value(node: Any, vars_: list[Any]) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [eval_value(item, vars_) for item in node]
    if "op" in node:
        op = node["op"]
        args = [eval_value(arg, vars_) for arg in node["args"]]  # left to right
        if op == "neg":
            return -args[0]
        if op == "not":
            return torch.sym_not(args[0])
        return BINARY_FNS[op](args[0], args[1])
    (key, arg), = node.items()
    if key == "tuple":
        return tuple(eval_value(item, vars_) for item in arg)
    if key == "dict":
        # Inserted one pair at a time: equal keys collapse (1 == True), the
        # first key object is kept and the last value wins, as in a literal.
        out: dict[Any, Any] = {}
        for k, v in arg:
            kv = eval_value(k, vars_)
            out[kv] = eval_value(v, vars_)
        return out
    if key == "slice":
        return slice(*(eval_value(item, vars_) for item in arg))
    if key == "var":
        return vars_[arg]
    if key in SPEC_CTORS:
        return getattr(dynamic_spec, key)(eval_value(arg, vars_))
    if key == "ShapesSpec":
        kwargs = {name: eval_value(arg[name], vars_)
                  for name in SHAPES_SPEC_ARGS if name in arg}
        return dynamic_spec.ShapesSpec(**kwargs)
    raise AssertionError(f"unvalidated VALUE {node!r}")  # check_value rejects it


def eval_source(node: dict[str, Any], vars_: list[Any]) -> Any:
    (cls_name, fields), = node.items()
    kwargs = {}
    for name, kind, _required in SOURCE_FIELDS[cls_name]:
        if name not in fields:
            continue
        val = fields[name]
        if kind == F_SOURCE or kind == F_SOURCE_OR_VALUE and _is_source(val):
            kwargs[name] = eval_source(val, vars_)
        elif kind in (F_VALUE, F_SOURCE_OR_VALUE):
            kwargs[name] = eval_value(val, vars_)
        else:
            kwargs[name] = val  # plain str / bool / int field
    return getattr(dynamo_source, cls_name)(**kwargs)


def to_jsonable(v: Any) -> Any:
    return v.to_jsonable() if hasattr(v, "to_jsonable") else v


def enc(x: Any) -> Any:
    """Encode a Python value as JSON per the format's ``enc``."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, bool):  # before int: bool is an int subclass
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return {"$float": "nan"}
        if math.isinf(x):
            return {"$float": "inf" if x > 0 else "-inf"}
        return x
    if isinstance(x, list):
        return [enc(item) for item in x]
    if isinstance(x, tuple):
        return {"tuple": [enc(item) for item in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {k: enc(v) for k, v in x.items()}
    # Anything else, including a dict with a non-str key and the derived
    # SymInt / SymBool expressions that to_jsonable() passes through.
    return {"$object": {"type": type(x).__name__, "repr": repr(x)}}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def error_result(case_id: str, e: BaseException) -> dict[str, Any]:
    try:
        message = str(e)
    except Exception:  # an exception whose __str__ raises
        message = f"<str() of {type(e).__name__} raised>"
    return {"id": case_id, "error": {"type": type(e).__name__, "message": message}}


def evaluate(case: dict[str, Any]) -> str:
    """Evaluate one validated case and return its result line (without newline)."""
    case_id = case["id"]
    try:
        reset_spec_state()
        vars_ = make_vars(case.get("vars", []))
        kind = case["kind"]
        if kind == "source_name":
            ok: dict[str, Any] = {"name": eval_source(case["source"], vars_).name}
        else:
            if kind == "build":
                v = eval_value(case["value"], vars_)
            else:
                # lookup_spec_from_dynamo_source(eval(source), eval(spec)):
                # arguments evaluate left to right, so the source first.
                source = eval_source(case["source"], vars_)
                spec = eval_value(case["spec"], vars_)
                v = lookup_spec_from_dynamo_source(source, spec)
            ok = {"repr": repr(v), "jsonable": enc(to_jsonable(v))}
        # Serialise inside the try: e.g. an int past CPython's 4300-digit
        # str limit raises here, and that is this case's error.
        return dumps({"id": case_id, "ok": ok})
    except Exception as e:  # includes RecursionError and MemoryError
        return dumps(error_result(case_id, e))


def main(argv: list[str]) -> int:
    usage = "usage: capture.py CASES.jsonl | capture.py --program PATH"
    if len(argv) == 2 and argv[0] == "--program":
        print("capture.py: --program (ExportedProgram reports) is not implemented yet",
              file=sys.stderr)
        return 2
    if len(argv) != 1 or argv[0].startswith("-"):
        print(usage, file=sys.stderr)
        return 2
    path = argv[0]
    cases = read_cases(path)

    # From here on nothing but result lines may reach stdout: keep a private
    # duplicate of fd 1 for results and point fd 1 (and sys.stdout) at stderr,
    # so stray prints, C++ logging and the like cannot interleave.
    sys.stdout.flush()
    real_stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    if cases:
        import_torch()
    for case in cases:
        line = evaluate(case)
        # A lone surrogate (from a \ud800 escape in the case file) cannot be
        # encoded as UTF-8; backslashreplace writes it back as the JSON escape
        # \ud800, so the line stays valid JSON with the same string value.
        real_stdout.write(line.encode("utf-8", "backslashreplace") + b"\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
