"""The case language of case format v1 (/work/shared/case-format.md) with real
PyTorch: a case file read and validated structurally (no torch needed), then
each case evaluated (torch imported lazily, after validation) into its result
line. oracle/capture.py CASES.jsonl is this; export_spec.py gets this module
as ``lang`` for the ``export_spec`` kind. Also the process's stdout
discipline every capture mode uses (_stdout_to_stderr, _write_line).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any, NoReturn

import export_spec
from golden_encoding import dumps, enc, error_result
from names import CASE_KEYS, KINDS, REQUIRED_CASE_KEYS


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


# The command lines of oracle/capture.py (printed on a malformed one).
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
