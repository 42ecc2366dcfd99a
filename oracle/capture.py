"""PyTorch oracle: evaluate a case file (case format v1, JSON Lines) with real PyTorch
(2.15.0, the version the reference targets; older versions for the version matrix of
`oracle/regen-goldens.sh --torch X`, where an API missing in that version is what Python
raises at its point of use, e.g. an AttributeError, as that case's error result).

Usage:
    python oracle/capture.py CASES.jsonl > RESULTS.jsonl
    python oracle/capture.py --program PATH [--pass NAME ...]   # program report (one line)
    python oracle/capture.py --program-goldens OUTDIR P.pt2 ...  # program goldens (regen-goldens.sh)
    python oracle/capture.py --probes PROGRAM.pt2 PROBES.jsonl   # run input probes
    python oracle/capture.py --serve                   # persistent oracle (see main_serve)
    python oracle/capture.py --shard k/n CASES.jsonl   # only the cases of shard k of n

Program mode follows /work/shared/program-report.md and /work/shared/passes.md;
probe mode is described at run_probe and decode_probe_value below.

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

import export_spec
from names import CASE_KEYS, GOLDEN_PIPELINES, KINDS, PASSES, REQUIRED_CASE_KEYS
from golden_encoding import (  # noqa: F401  (capture.X stays the oracle's API)
    SIGNATURE_ARRAYS, SIGNATURE_OBJECTS, _report_value, _state_dict_entry, dumps, enc,
    error_result, program_report,
)


# ---------------------------------------------------------------------------
# The case language (structure only; no torch needed to validate).
# ---------------------------------------------------------------------------

# KINDS, CASE_KEYS (the top-level keys allowed per kind; "vars" is optional
# for every kind) and REQUIRED_CASE_KEYS come from oracle/names.json, as the
# Rust code declares them. Unknown keys are rejected: the format may grow
# optional fields that change a case's meaning, and silently ignoring one
# would produce a wrong golden.

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
    if kind == "export_spec":
        try:
            export_spec.check_case(case, nvars, sys.modules[__name__])
        except export_spec.CaseError as e:
            raise CaseFileError(str(e)) from None
    elif kind == "build":
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
builder: Any = None
BINARY_FNS: dict[str, Any] = {}


def import_torch() -> None:
    global torch, dynamic_spec, dynamo_source, builder
    import operator

    import torch as _torch
    import torch._dynamo.source as _source
    import torch.fx.experimental.dynamic_spec as _dynamic_spec
    # The module, not the function: lookup_spec_from_dynamo_source is looked up
    # per case, so a torch without it gives each lookup case its AttributeError.
    import torch._dynamo.variables.builder as _builder

    torch, dynamic_spec, dynamo_source = _torch, _dynamic_spec, _source
    # The zoo's namedtuple / dataclass input types, registered for pytree
    # serialization as any process loading those programs must.
    if "zoo_types" not in sys.modules:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import zoo_types  # noqa: F401
    builder = _builder
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





def evaluate(case: dict[str, Any]) -> str:
    """Evaluate one validated case and return its result line (without newline)."""
    case_id = case["id"]
    if case["kind"] == "export_spec":
        try:
            return dumps(export_spec.evaluate(case, sys.modules[__name__]))
        except Exception as e:  # serialisation (the result itself is evaluated inside)
            return dumps(error_result(case_id, e))
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
                # the function is looked up first, then the arguments evaluate
                # left to right, so the source first.
                lookup = builder.lookup_spec_from_dynamo_source
                source = eval_source(case["source"], vars_)
                spec = eval_value(case["spec"], vars_)
                v = lookup(source, spec)
            ok = {"repr": repr(v), "jsonable": enc(to_jsonable(v))}
        # Serialise inside the try: e.g. an int past CPython's 4300-digit
        # str limit raises here, and that is this case's error.
        return dumps({"id": case_id, "ok": ok})
    except Exception as e:  # includes RecursionError and MemoryError
        return dumps(error_result(case_id, e))


# ---------------------------------------------------------------------------
# Program mode: the program report (shared/program-report.md) and the passes
# (shared/passes.md) of an ExportedProgram, from torch.export.load.
# ---------------------------------------------------------------------------

PASS_NAMES = PASSES  # oracle/names.json


class ProgramFileError(Exception):
    """The file cannot be read as an exported program (whole command fails)."""


def _archive_model_json(path: str) -> tuple[str, bytes]:
    """The member name and bytes of ``*/models/model.json`` inside a .pt2 zip
    (``serialized_exported_program.json`` in the pre-2.8 format)."""
    import zipfile
    try:
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist()
                     if n.endswith("/models/model.json") and n.count("/") == 2]
            # The format torch.export.save wrote up to 2.7, which
            # torch.export.load still reads: the program JSON at the root.
            if not names and {"version", "serialized_exported_program.json"} <= set(z.namelist()):
                names = ["serialized_exported_program.json"]
            if len(names) != 1:
                raise ProgramFileError(
                    f"{path}: expected exactly one */models/model.json in the archive, "
                    f"found {len(names)}")
            return names[0], z.read(names[0])
    except zipfile.BadZipFile as e:
        raise ProgramFileError(f"{path}: not a .pt2 archive: {e}") from None


def _schema_version(path: str, model_json: bytes) -> list[int]:
    try:
        program = json.loads(model_json)
        version = program["schema_version"]
        return [version["major"], version["minor"]]
    except (ValueError, KeyError, TypeError) as e:
        raise ProgramFileError(
            f"{path}: $.schema_version: cannot read the schema version: {e!r}") from None


def resolve_program(path: str) -> tuple[str, list[int]]:
    """Map PATH to the .pt2 that torch.export.load reads, and the schema version.

    PyTorch cannot load a bare program JSON without its weights, so for
    ``NAME.json`` (or any non-.pt2 file) the oracle loads the sibling
    ``NAME.pt2`` and refuses unless that archive's ``models/model.json`` is the
    same JSON value as the file given: the report is then the report of
    exactly that program.
    """
    if not os.path.exists(path):
        raise ProgramFileError(f"{path}: no such file")
    if path.endswith(".pt2"):
        _, model_json = _archive_model_json(path)
        return path, _schema_version(path, model_json)
    stem = path[:-len(".json")] if path.endswith(".json") else path
    sibling = stem + ".pt2"
    if not os.path.exists(sibling):
        raise ProgramFileError(
            f"{path}: a bare program JSON needs its weights: no sibling {sibling}")
    with open(path, "rb") as f:
        given = f.read()
    _, model_json = _archive_model_json(sibling)
    try:
        same = json.loads(given) == json.loads(model_json)
    except ValueError as e:
        raise ProgramFileError(f"{path}: not JSON: {e}") from None
    if not same:
        raise ProgramFileError(
            f"{path}: differs from models/model.json of the sibling {sibling}")
    return sibling, _schema_version(path, given)


def make_pass(name: str, ep: Any) -> Any:
    """The PyTorch 2.15.0 pass object of shared/passes.md for NAME, on program EP."""
    from torch.fx.passes.infra.pass_base import PassResult

    if name == "dce":
        def dce(gm: Any) -> Any:
            modified = gm.graph.eliminate_dead_code()
            gm.recompile()
            return PassResult(gm, modified)
        return dce
    if name == "remove-runtime-assertions":
        from torch._export.passes.remove_runtime_assertions import _RemoveRuntimeAssertionsPass
        return _RemoveRuntimeAssertionsPass()
    if name == "add-inline-constraint-assertions":
        from torch._export.passes.add_runtime_assertions_for_constraints_pass import (
            _AddRuntimeAssertionsForInlineConstraintsPass)
        return _AddRuntimeAssertionsForInlineConstraintsPass(ep.range_constraints)
    if name == "common-getitem-elimination":
        from torch.export.exported_program import _common_getitem_elimination_pass

        def common_getitem_elimination(gm: Any) -> Any:
            _common_getitem_elimination_pass(gm, ep.graph_signature, ep.module_call_graph)
            return PassResult(gm, True)
        return common_getitem_elimination
    if name == "remove-unnecessary-copy":
        from torch.export.exported_program import _remove_unnecessary_copy_op_pass

        def remove_unnecessary_copy(gm: Any) -> Any:
            _remove_unnecessary_copy_op_pass(gm, ep.graph_signature)
            return PassResult(gm, True)
        return remove_unnecessary_copy
    raise AssertionError(f"unknown pass {name!r}")  # main() rejects it


def capture_program(path: str, passes: list[str], load_error_in_report: bool = False) -> dict[str, Any]:
    """The report of the program at PATH after PASSES (a pass that raises: the error).

    With LOAD_ERROR_IN_REPORT (the goldens of an older torch, which may not load a
    program 2.15.0 saved), a failing torch.export.load is the whole-report error
    form too; otherwise it fails the command.
    """
    pt2, schema_version = resolve_program(path)
    import_torch()
    try:
        ep = torch.export.load(pt2)
    except Exception as e:
        if load_error_in_report:
            return {"error": error_result("", e)["error"]}
        raise ProgramFileError(f"{pt2}: torch.export.load failed: {type(e).__name__}: {e}") from e
    try:
        for name in passes:
            ep = ep._transform_do_not_use(make_pass(name, ep))
    except Exception as e:
        return {"error": error_result("", e)["error"]}
    return program_report(ep, schema_version)


# ---------------------------------------------------------------------------
# Probe mode: call ep.module() on probe inputs (corpus/programs/NAME.probes.jsonl).
# ---------------------------------------------------------------------------

# Probe files v1 (shared/probe-format.md): "id", "args" and "kwargs" are
# required, "kind" is an optional label, any other key is ignored.
PROBE_REQUIRED = ("id", "args", "kwargs")

_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _zero_size(shape: list) -> bool:
    return any(d == 0 for d in shape)


def decode_probe_value(node: Any, where: str) -> Any:
    """A probe VALUE: case-format VALUE (no vars, ops or specs) plus tensors.

    ``{"tensor": {"shape": [...], "dtype": "float32", "data": [...]}}`` is
    ``torch.tensor(data, dtype=...)`` (checked against shape), or
    ``torch.zeros(shape, dtype=...)`` when ``data`` is omitted, or is ``[]``
    for a shape with a zero-size dim (``tolist()`` of a ``[0, 3]`` tensor).
    ``{"$float": "nan" | "inf" | "-inf"}`` is that float.
    ``{"namedtuple": {"type": NAME, "fields": [[field, VALUE], ...]}}`` and
    ``{"dataclass": {...}}`` (same fields) build the pytree type registered
    under the serialized type name NAME (the name the program's in_spec uses).
    """
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [decode_probe_value(x, f"{where}[{i}]") for i, x in enumerate(node)]
    if not isinstance(node, dict) or len(node) != 1:
        raise CaseFileError(f"{where}: a VALUE object must have exactly one key")
    (key, arg), = node.items()
    sub = f"{where}.{key}"
    if key == "tuple":
        return tuple(decode_probe_value(x, f"{sub}[{i}]")
                     for i, x in enumerate(_check_list(arg, sub, "a tuple")))
    if key == "dict":
        out: dict[Any, Any] = {}
        for i, pair in enumerate(_check_list(arg, sub, "a dict")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise CaseFileError(f"{sub}[{i}]: a dict entry must be a [key, value] pair")
            out[decode_probe_value(pair[0], f"{sub}[{i}][0]")] = \
                decode_probe_value(pair[1], f"{sub}[{i}][1]")
        return out
    if key == "$float":
        if not isinstance(arg, str) or arg not in _SPECIAL_FLOATS:
            raise CaseFileError(f"{sub}: must be \"nan\", \"inf\" or \"-inf\"")
        return _SPECIAL_FLOATS[arg]
    if key == "tensor":
        if not isinstance(arg, dict) or not {"shape", "dtype"} <= set(arg) \
                or not set(arg) <= {"shape", "dtype", "data"}:
            raise CaseFileError(f"{sub}: a tensor has keys shape, dtype and optional data")
        shape = _check_list(arg["shape"], f"{sub}.shape", "a shape")
        if not all(_is_int(d) and d >= 0 for d in shape):
            raise CaseFileError(f"{sub}.shape: must be non-negative integers")
        dtype = getattr(torch, arg["dtype"], None) if isinstance(arg["dtype"], str) else None
        if not isinstance(dtype, torch.dtype):
            raise CaseFileError(f"{sub}.dtype: unknown dtype {arg['dtype']!r}")
        if "data" not in arg or arg["data"] == [] and _zero_size(shape):
            return torch.zeros(shape, dtype=dtype)
        t = torch.tensor(arg["data"], dtype=dtype)
        if list(t.shape) != shape:
            raise CaseFileError(f"{sub}.data: has shape {list(t.shape)}, not {shape}")
        return t
    if key in ("namedtuple", "dataclass"):
        from torch.utils._pytree import SERIALIZED_TYPE_TO_PYTHON_TYPE
        if not isinstance(arg, dict) or set(arg) != {"type", "fields"}:
            raise CaseFileError(f"{sub}: a {key} has exactly the keys type and fields")
        cls = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(arg["type"])
        if cls is None:
            raise CaseFileError(f"{sub}.type: no pytree type registered as {arg['type']!r}")
        fields = {}
        for i, pair in enumerate(_check_list(arg["fields"], f"{sub}.fields", "fields")):
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise CaseFileError(f"{sub}.fields[{i}]: a field is a [name, value] pair")
            fields[pair[0]] = decode_probe_value(pair[1], f"{sub}.fields[{i}][1]")
        return cls(**fields)
    raise CaseFileError(f"{where}: unknown object {key!r}")


def read_probes(path: str) -> list[tuple[Any, Any, Any, Any]]:
    """Parse the probe file: per non-blank line ``(id, args, kwargs, None)``,
    or ``(id or None, None, None, {"line", "message"})`` for a line that
    cannot be read (its result is ``bad_probe``; the other lines are still
    answered)."""
    out = []
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    seen: set[str] = set()
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        probe_id = None
        try:
            probe = json.loads(raw.decode("utf-8"))
            if not isinstance(probe, dict):
                raise CaseFileError("a probe must be a JSON object")
            missing = [k for k in PROBE_REQUIRED if k not in probe]
            if "id" in probe and not isinstance(probe["id"], str):
                raise CaseFileError("id: must be a string")
            probe_id = probe.get("id")
            if missing:
                raise CaseFileError(f"missing key {missing[0]!r}")
            if "kind" in probe and not isinstance(probe["kind"], str):
                raise CaseFileError("kind: must be a string")
            if probe_id in seen:
                raise CaseFileError(f"duplicate id {probe_id!r}")
            seen.add(probe_id)
            args = decode_probe_value(probe["args"], "args")
            kwargs = decode_probe_value(probe["kwargs"], "kwargs")
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                raise CaseFileError("args must be a {\"tuple\": [...]} and kwargs a {\"dict\": [...]}")
        except (ValueError, TypeError, RecursionError, UnicodeDecodeError, CaseFileError) as e:
            out.append((probe_id, None, None, {"line": lineno, "message": str(e)}))
            continue
        out.append((probe_id, args, kwargs, None))
    return out


def probe_result(ep: Any, probe: tuple[Any, Any, Any, Any]) -> dict[str, Any]:
    """The result line of one read_probes entry."""
    probe_id, args, kwargs, bad = probe
    if bad is not None:
        return {"id": probe_id, "bad_probe": bad}
    return {"id": probe_id, **run_probe(ep, args, kwargs)}


class _BodyReached:
    """Marker called by an instrumented ``ep.module()`` just before its first kernel."""
    reached = False

    @staticmethod
    def mark() -> None:
        _BodyReached.reached = True


def _is_input_assert_node(n: Any) -> bool:
    """A node of the runtime assertions on the inputs' sizes and ints.

    A program exported with a ShapesSpec (or with unbacked input symbols)
    opens its graph with ``_assert_scalar`` nodes over ``sym_size`` of the
    placeholders and int placeholders, computed through ``operator.*`` and
    the ``torch.sym_*`` functions: they check the inputs, like
    ``_guards_fn``, before the first kernel. Only the leading run of such
    nodes is skipped (see run_probe): an assert after a kernel, e.g. on an
    ``.item()`` value, stays after the marker.
    """
    if n.op != "call_function":
        return False
    t = n.target
    if t in (torch.ops.aten.sym_size.int, torch.ops.aten._assert_scalar.default):
        return True
    return getattr(t, "__module__", None) in ("_operator", "operator") or t in (
        torch.sym_not, torch.sym_max, torch.sym_min, torch.sym_float, torch.sym_int, torch.sym_ite)


def run_probe(ep: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Call a fresh ``ep.module()`` on the inputs; say whether an error came before any kernel.

    ``pre_kernel`` is measured, not guessed from the message. Every check
    ``ep.module()`` makes on its inputs runs before the body of its graph:
    the forward pre-hooks (``_unlift._check_inputs_match``: the pytree
    structure and kwargs; ``_check_input_constraints_pre_hook``), the
    flattening in the generated ``forward`` itself, then the ``_guards_fn``
    call_module node right after the placeholders (shape, range and
    equality guards, ``Guard failed: ...``). So the probe inserts one call to
    a marker function before the graph's first other node that is not a
    ``get_attr`` (parameters, buffers and subgraphs are read, not computed;
    before ``output`` when there is none), and after the leading run of
    ``_assert_scalar`` nodes over the inputs' sizes and ints with the
    ``sym_size`` and ``operator.*`` nodes feeding them
    (``_is_input_assert_node``: a ShapesSpec's bounds, derived dims and
    assumptions, ``RuntimeError: Runtime assertion failed for expression
    ...``), recompiles, and calls the module: an exception
    raised before the marker ran is ``pre_kernel: true``; a dtype mismatch
    caught by a kernel, or an in-graph ``_assert_scalar`` on an ``.item()``
    value, is ``pre_kernel: false``. (Counting ATen calls with a
    TorchDispatchMode was tried first: higher-order ops such as ``cond`` and
    ``map`` refuse to run under a mode without a registered rule, and an op
    that fails above the Python dispatch key is never counted.)
    """
    _BodyReached.reached = False
    try:
        # ep.module() compiles the program's guards: a guard text Python
        # cannot compile raises here, before any call (pre_kernel: true).
        module = ep.module()
        graph = module.graph
        first = next(n for n in graph.nodes
                     if n.op not in ("placeholder", "get_attr")
                     and not (n.op == "call_module" and n.target == "_guards_fn")
                     and not _is_input_assert_node(n))
        with graph.inserting_before(first):
            graph.call_function(_BodyReached.mark)
        module.recompile()
        module(*args, **kwargs)
    except Exception as e:
        return {"error": error_result("", e)["error"], "pre_kernel": not _BodyReached.reached}
    return {"ok": True}


# GOLDEN_PIPELINES (oracle/names.json): the pass pipelines recorded in
# corpus/goldens/torch-2.15.0/programs/NAME.jsonl, after the line of the program
# as loaded (no pass).

USAGE = """\
usage: capture.py CASES.jsonl
       capture.py --program PATH [--pass NAME ...]
       capture.py --program-goldens OUTDIR PROGRAM.pt2 ...
       capture.py --probes PROGRAM.pt2 PROBES.jsonl
       capture.py --mutant-goldens OUTDIR corpus/mutants/NAME.json ...
       capture.py --serve"""


def _stdout_to_stderr() -> Any:
    """Point fd 1 (and sys.stdout) at stderr; return a private handle on the real stdout.

    From here on nothing but result lines may reach stdout: stray prints, C++
    logging and PyTorch's warnings cannot interleave with them.
    """
    sys.stdout.flush()
    real_stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return real_stdout


def _write_line(out: Any, obj: Any) -> None:
    # A lone surrogate (from a \ud800 escape in the input) cannot be encoded as
    # UTF-8; backslashreplace writes it back as the JSON escape \ud800, so the
    # line stays valid JSON with the same string value.
    out.write(dumps(obj).encode("utf-8", "backslashreplace") + b"\n")


def main_program(argv: list[str]) -> int:
    path, passes = argv[0], []
    rest = argv[1:]
    while rest:
        if rest[0] != "--pass" or len(rest) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        if rest[1] not in PASS_NAMES:
            print(f"capture.py: unknown pass {rest[1]!r} (known: {', '.join(PASS_NAMES)})",
                  file=sys.stderr)
            return 2
        passes.append(rest[1])
        rest = rest[2:]
    out = _stdout_to_stderr()
    try:
        report = capture_program(path, passes)
    except ProgramFileError as e:
        print(f"capture.py: {e}", file=sys.stderr)
        return 1
    _write_line(out, report)
    out.flush()
    return 0


def program_golden_lines(path: str) -> list[dict[str, Any]]:
    """The golden lines of one program: one per pipeline of GOLDEN_PIPELINES.

    Each report is exactly what ``--program PATH --pass ...`` prints (a fresh
    torch.export.load per pipeline), wrapped with its id and passes.
    """
    name = os.path.basename(path)
    name = name[:-len(".pt2")] if name.endswith(".pt2") else name
    return [{"id": "+".join((name,) + passes), "passes": list(passes),
             "report": capture_program(path, list(passes), load_error_in_report=True)}
            for passes in GOLDEN_PIPELINES]


# The program JSON of a .pt2 is written in full into NAME.serialized.jsonl only
# when it is at most this long and differs from the input's models/model.json
# (a mismatch then diffs readably); every line has its sha256 and length.
SERIALIZED_TEXT_MAX = 64 * 1024


def saved_program_json(ep: Any) -> bytes:
    """``models/model.json`` of what ``torch.export.save(ep, f)`` writes."""
    import io
    import zipfile
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(buf) as z:
        names = [n for n in z.namelist()
                 if n.endswith("/models/model.json") and n.count("/") == 2]
        return z.read(names[0])


def serialized_golden_lines(path: str) -> list[dict[str, Any]]:
    """One line per pipeline of GOLDEN_PIPELINES: the program JSON that
    ``torch.export.save`` writes after ``torch.export.load`` and the passes
    (``{"sha256", "length", "equals_input"}``, plus ``"text"`` when short and
    different from the input), or the error a pass or the save raised."""
    import hashlib
    name = os.path.basename(path)[:-len(".pt2")]
    _, given = _archive_model_json(path)
    lines = []
    for passes in GOLDEN_PIPELINES:
        line: dict[str, Any] = {"id": "+".join((name,) + passes), "passes": list(passes)}
        ep = torch.export.load(path)
        try:
            for p in passes:
                ep = ep._transform_do_not_use(make_pass(p, ep))
            data = saved_program_json(ep)
        except Exception as e:
            line["error"] = error_result("", e)["error"]
            lines.append(line)
            continue
        out = {"sha256": hashlib.sha256(data).hexdigest(), "length": len(data),
               "equals_input": data == given}
        if data != given and len(data) <= SERIALIZED_TEXT_MAX:
            out["text"] = data.decode("utf-8")
        line["serialized"] = out
        lines.append(line)
    return lines


# The probe files of a zoo program: NAME.probes.jsonl (written by
# oracle/zoo.py from the example inputs) and NAME.derived-probes.jsonl
# (written by `torchspec probes` from the program alone).
PROBE_SUFFIXES = (".probes.jsonl", ".derived-probes.jsonl")


def write_probe_goldens(program: str, probes_path: str, out_path: str) -> None:
    """OUT_PATH: the result line of each probe of PROBES_PATH on PROGRAM."""
    try:
        ep = torch.export.load(program)
    except Exception as e:
        # An older torch that cannot load the program: each probe line
        # is {"id", "load_error"} (2.15.0 loads every zoo program).
        ep, load_error = None, error_result("", e)["error"]
    with open(out_path, "wb") as out:
        for probe in read_probes(probes_path):
            if ep is None:
                _write_line(out, {"id": probe[0], "load_error": load_error})
            else:
                _write_line(out, probe_result(ep, probe))


def main_program_goldens(outdir: str, paths: list[str]) -> int:
    """Write OUTDIR/NAME.jsonl (and OUTDIR/NAME.probes.jsonl,
    OUTDIR/NAME.derived-probes.jsonl when the program has such a sibling probe
    file) for each PROGRAM.pt2.

    One process for the whole zoo only saves PyTorch's start-up time (seconds
    per process on a loaded machine): every report starts from its own
    torch.export.load and every probe from its own ep.module(), so the lines
    are those that ``--program`` and ``--probes`` print one program at a time
    (``oracle/regen-goldens.sh --check-single`` compares them).
    """
    _stdout_to_stderr()
    import_torch()
    for path in paths:
        name = os.path.basename(path)[:-len(".pt2")]
        try:
            lines = program_golden_lines(path)
        except ProgramFileError as e:
            print(f"capture.py: {e}", file=sys.stderr)
            return 1
        with open(os.path.join(outdir, name + ".jsonl"), "wb") as out:
            for line in lines:
                _write_line(out, line)
        with open(os.path.join(outdir, name + ".serialized.jsonl"), "wb") as out:
            for line in serialized_golden_lines(path):
                _write_line(out, line)
        for suffix in PROBE_SUFFIXES:
            probes_path = path[:-len(".pt2")] + suffix
            if os.path.exists(probes_path):
                write_probe_goldens(path, probes_path, os.path.join(outdir, name + suffix))
    return 0


def main_probes(program: str, probes_path: str) -> int:
    out = _stdout_to_stderr()
    try:
        pt2, _ = resolve_program(program)
    except ProgramFileError as e:
        print(f"capture.py: {e}", file=sys.stderr)
        return 1
    import_torch()
    probes = read_probes(probes_path)
    ep = torch.export.load(pt2)
    for probe in probes:
        _write_line(out, probe_result(ep, probe))
    out.flush()
    return 1 if any(p[3] is not None for p in probes) else 0


# ---------------------------------------------------------------------------
# Serve mode (torchspec fuzz --live) and sharding: localized here so the case
# path above stays exactly what writes the goldens.
# ---------------------------------------------------------------------------

def shard_of(case_id: str, n: int) -> int:
    """The 0-based shard of a case id among n: FNV-1a 64 of its UTF-8 bytes, mod n.

    The same function as torchspec's `--shard k/n` (src/shard.rs), so
    `capture.py --shard k/n` and `torchspec check --shard k/n` take the same cases.
    """
    h = 0xcbf29ce484222325
    for b in case_id.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h % n


def parse_shard(text: str) -> tuple[int, int] | None:
    """``k/n`` with 1 <= k <= n, as (k - 1, n); None when malformed."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit():
        return None
    k_, n_ = int(k), int(n)
    return (k_ - 1, n_) if 1 <= k_ <= n_ else None


def serve_case_line(raw: bytes) -> dict[str, Any] | str:
    """One request of serve mode: the result line (str), or an ``invalid`` reply.

    Exactly the checks of read_cases, for one line: a case that read_cases
    would refuse gets ``{"id": ID or null, "invalid": MESSAGE}``, never an exit.
    """
    case_id = None
    try:
        text = raw.decode("utf-8")
        case = json.loads(text, object_pairs_hook=_object_no_duplicates,
                          parse_constant=_reject_constant)
        if isinstance(case, dict) and isinstance(case.get("id"), str):
            case_id = case["id"]
        check_case(case)
    except UnicodeDecodeError as e:
        return {"id": None, "invalid": f"not valid UTF-8: {e}"}
    except RecursionError:
        return {"id": case_id, "invalid": "invalid JSON: nested too deeply"}
    except CaseFileError as e:
        return {"id": case_id, "invalid": str(e)}
    except ValueError as e:
        return {"id": case_id, "invalid": f"invalid JSON: {e}"}
    return evaluate(case)


# Request kinds of serve mode other than case lines: name -> module in oracle/
# whose ``serve(request) -> dict`` answers it (imported on first use).
REQUESTS = {
    "mutant": "serve_mutants",
    "mutant_load": "serve_mutants",
    "mutant_lanes": "serve_mutants",
    "plan": "serve_plans",
    "plan_probes": "serve_plans",
    "plan_goldens": "serve_plans",
}


def serve_request(raw: bytes) -> dict[str, Any]:
    """A line ``{"request": KIND, "id": ID, ...}``: the reply of KIND's module.

    Every reply carries the request's ``id``; an unknown kind or a malformed
    line is answered ``{"id": ..., "invalid": MESSAGE}``.
    """
    try:
        req = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return {"id": None, "invalid": f"invalid JSON: {e}"}
    rid = req.get("id") if isinstance(req, dict) else None
    module = REQUESTS.get(req.get("request")) if isinstance(req, dict) else None
    if module is None:
        return {"id": rid, "invalid": f"unknown request {req.get('request')!r}"}
    import importlib
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    # The module gets this one as ORACLE (its golden writers), so it need
    # not import capture.py back.
    reply = importlib.import_module(module).serve(req, sys.modules[__name__])
    reply["id"] = rid
    return reply


def main_serve() -> int:
    """``capture.py --serve``: a persistent oracle speaking JSON Lines.

    Prints ``{"ready": true, "torch": VERSION}`` once PyTorch is imported,
    then reads one case line per stdin line and writes, flushed, the very
    result line capture.py writes for that case in a file (fresh uid counter
    and spec ShapeEnv per case), or ``{"id": ..., "invalid": MESSAGE}`` for a
    line capture.py would refuse. A line that starts ``{"request"`` is a
    program request instead (REQUESTS: mutated program files, ...). A blank line is answered ``{"id": null,
    "invalid": "blank line"}``. Ends at EOF.
    """
    out = _stdout_to_stderr()
    import_torch()
    _write_line(out, {"ready": True, "torch": torch.__version__})
    out.flush()
    for raw in sys.stdin.buffer:
        raw = raw.rstrip(b"\r\n")
        if not raw.strip():
            reply: dict[str, Any] | str = {"id": None, "invalid": "blank line"}
        else:
            try:
                reply = serve_request(raw) if raw.startswith(b'{"request"') \
                    else serve_case_line(raw)
            except Exception as e:  # never lose the stream to one request
                reply = {"id": None, "invalid": f"{type(e).__name__}: {e}"}
        if isinstance(reply, str):
            out.write(reply.encode("utf-8", "backslashreplace") + b"\n")
        else:
            _write_line(out, reply)
        out.flush()
    return 0


def main_mutant_goldens(out_dir: str, files: list[str]) -> int:
    """``--mutant-goldens OUT_DIR corpus/mutants/NAME.json ...``: OUT_DIR/NAME.json,
    what torch.export.load and the C++ deserializer do with each kept mutant
    (oracle/serve_mutants.py), one line each."""
    out = _stdout_to_stderr()
    import_torch()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import serve_mutants
    os.makedirs(out_dir, exist_ok=True)
    for path in files:
        with open(path, encoding="utf-8") as f:
            mutant = json.load(f)
        line = serve_mutants.golden_of(mutant)
        with open(os.path.join(out_dir, mutant["name"] + ".json"), "wb") as f:
            f.write(line.encode("utf-8", "backslashreplace") + b"\n")
    out.flush()
    return 0


def main_shard(argv: list[str]) -> int:
    """``capture.py --shard k/n CASES.jsonl``: the result lines of the cases in shard k of n."""
    shard = parse_shard(argv[0]) if len(argv) == 2 else None
    if shard is None or argv[1].startswith("-"):
        print("usage: capture.py --shard k/n CASES.jsonl   (1 <= k <= n)", file=sys.stderr)
        return 2
    k, n = shard
    cases = [c for c in read_cases(argv[1]) if shard_of(c["id"], n) == k]
    real_stdout = _stdout_to_stderr()
    if cases:
        import_torch()
    for case in cases:
        real_stdout.write(evaluate(case).encode("utf-8", "backslashreplace") + b"\n")
    real_stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    if argv == ["--serve"]:
        return main_serve()
    if argv and argv[0] == "--shard":
        return main_shard(argv[1:])
    if argv and argv[0] == "--program":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        return main_program(argv[1:])
    if argv and argv[0] == "--program-goldens":
        if len(argv) < 3 or not all(p.endswith(".pt2") for p in argv[2:]):
            print(USAGE, file=sys.stderr)
            return 2
        return main_program_goldens(argv[1], argv[2:])
    if argv and argv[0] == "--mutant-goldens":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        return main_mutant_goldens(argv[1], argv[2:])
    if argv and argv[0] == "--probes":
        if len(argv) != 3:
            print(USAGE, file=sys.stderr)
            return 2
        return main_probes(argv[1], argv[2])
    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    path = argv[0]
    cases = read_cases(path)
    real_stdout = _stdout_to_stderr()
    if cases:
        import_torch()
    for case in cases:
        line = evaluate(case)
        # See _write_line: a lone surrogate goes back out as its JSON escape.
        real_stdout.write(line.encode("utf-8", "backslashreplace") + b"\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
