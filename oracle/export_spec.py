"""The ``export_spec`` case kind (shared/export-spec-format.md): what a spec does
when it drives ``torch.export.export`` (strict and non-strict), ``make_fx`` and
``torch.compile``, evaluated with real PyTorch.

``capture.py`` validates and evaluates the case language (vars, VALUEs) and
hands this module itself as ``lang`` (so this module imports nothing of the
oracle's but ``names``, a leaf: no import cycle). Written from the PyTorch API
and sources (``torch/fx/experimental/_spec_binding.py``, ``symbolic_shapes.py``'s
spec wiring), independently of the Rust reference.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator

import names

APIS = ("export", "export_strict", "make_fx", "compile")
BODIES = ("touch_all", "touch_tensors")
PARAM_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL",
               "KEYWORD_ONLY", "VAR_KEYWORD")

# Its keys, as the Rust code declares them (oracle/names.json).
CASE_KEYS = names.CASE_KEYS["export_spec"]
REQUIRED_KEYS = names.REQUIRED_CASE_KEYS["export_spec"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CaseError(Exception):
    """A structural problem; ``capture.py`` turns it into its CaseFileError."""


# ---------------------------------------------------------------------------
# Structure (no torch).
# ---------------------------------------------------------------------------

def check_input_value(node: Any, where: str, nvars: int, lang: Any) -> None:
    """An input VALUE: a case-format VALUE, a probe tensor, a registered
    namedtuple / dataclass, or ``{"$float": ...}``; containers may hold any."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            check_input_value(item, f"{where}[{i}]", nvars, lang)
        return
    if not isinstance(node, dict) or len(node) != 1:
        lang.check_value(node, where, nvars)
        return
    (key, arg), = node.items()
    sub = f"{where}.{key}"
    if key == "tuple":
        for i, item in enumerate(lang._check_list(arg, sub, "a tuple")):
            check_input_value(item, f"{sub}[{i}]", nvars, lang)
    elif key == "dict":
        for i, pair in enumerate(lang._check_list(arg, sub, "a dict")):
            if not isinstance(pair, list) or len(pair) != 2:
                raise CaseError(f"{sub}[{i}]: a dict entry must be a [key, value] pair")
            check_input_value(pair[0], f"{sub}[{i}][0]", nvars, lang)
            check_input_value(pair[1], f"{sub}[{i}][1]", nvars, lang)
    elif key == "tensor":
        _check_tensor(arg, sub)
    elif key == "$float":
        if arg not in ("nan", "inf", "-inf"):
            raise CaseError(f"{sub}: must be \"nan\", \"inf\" or \"-inf\"")
    elif key in ("namedtuple", "dataclass"):
        if not isinstance(arg, dict) or set(arg) != {"type", "fields"} \
                or not isinstance(arg["type"], str):
            raise CaseError(f"{sub}: a {key} has exactly the keys type (a string) and fields")
        for i, pair in enumerate(lang._check_list(arg["fields"], f"{sub}.fields", "fields")):
            if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise CaseError(f"{sub}.fields[{i}]: a field is a [name, value] pair")
            check_input_value(pair[1], f"{sub}.fields[{i}][1]", nvars, lang)
    else:
        lang.check_value(node, where, nvars)


def _check_tensor(arg: Any, where: str) -> None:
    if not isinstance(arg, dict) or not {"shape", "dtype"} <= set(arg) \
            or not set(arg) <= {"shape", "dtype", "data"}:
        raise CaseError(f"{where}: a tensor has keys shape, dtype and optional data")
    shape = arg["shape"]
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise CaseError(f"{where}.shape: must be a list of non-negative integers")
    if not isinstance(arg["dtype"], str):
        raise CaseError(f"{where}.dtype: must be a string")


def _check_signature(sig: Any, nvars: int, lang: Any) -> None:
    lang._check_list(sig, "signature", "signature")
    for i, p in enumerate(sig):
        where = f"signature[{i}]"
        if not isinstance(p, list) or len(p) not in (2, 3):
            raise CaseError(f"{where}: a parameter is [name, KIND] or [name, KIND, {{\"default\": VALUE}}]")
        if not isinstance(p[0], str) or not _IDENT.match(p[0]) or p[0] == "self" \
                or p[0].startswith("__"):
            raise CaseError(f"{where}[0]: a parameter name must be an identifier, not self, "
                            f"not starting with __, got {p[0]!r}")
        if p[1] not in PARAM_KINDS:
            raise CaseError(f"{where}[1]: must be one of {list(PARAM_KINDS)}, got {p[1]!r}")
        if len(p) == 3:
            if not isinstance(p[2], dict) or set(p[2]) != {"default"}:
                raise CaseError(f"{where}[2]: must be {{\"default\": VALUE}}")
            check_input_value(p[2]["default"], f"{where}[2].default", nvars, lang)


def _check_module(module: Any) -> None:
    if not isinstance(module, dict) or not set(module) <= {"parameters", "buffers"}:
        raise CaseError("module: an object with keys among ['buffers', 'parameters']")
    for key in ("parameters", "buffers"):
        entries = module.get(key, [])
        if not isinstance(entries, list):
            raise CaseError(f"module.{key}: must be a JSON array")
        for i, e in enumerate(entries):
            where = f"module.{key}[{i}]"
            if not isinstance(e, list) or len(e) != 2 or not isinstance(e[0], str) \
                    or not all(_IDENT.match(part) for part in e[0].split(".")):
                raise CaseError(f"{where}: an entry is [dotted.name, TENSOR]")
            if not isinstance(e[1], dict) or set(e[1]) != {"tensor"}:
                raise CaseError(f"{where}[1]: must be a {{\"tensor\": ...}}")
            _check_tensor(e[1]["tensor"], f"{where}[1].tensor")


def check_case(case: dict[str, Any], nvars: int, lang: Any) -> None:
    """Validate the keys of an ``export_spec`` case (vars already checked)."""
    unknown = sorted(set(case) - CASE_KEYS)
    if unknown:
        raise CaseError(f"unknown key(s) {unknown} for kind 'export_spec'")
    for key in REQUIRED_KEYS:
        if key not in case:
            raise CaseError(f"kind 'export_spec' needs {key!r}")
    if case["api"] not in APIS:
        raise CaseError(f"api: must be one of {list(APIS)}, got {case['api']!r}")
    if case.get("body", "touch_all") not in BODIES:
        raise CaseError(f"body: must be one of {list(BODIES)}, got {case['body']!r}")
    _check_signature(case["signature"], nvars, lang)
    if not (isinstance(case["args"], dict) and set(case["args"]) == {"tuple"}):
        raise CaseError("args: must be a {\"tuple\": [...]}")
    check_input_value(case["args"], "args", nvars, lang)
    if "kwargs" in case:
        if not (isinstance(case["kwargs"], dict) and set(case["kwargs"]) == {"dict"}):
            raise CaseError("kwargs: must be a {\"dict\": [...]}")
        check_input_value(case["kwargs"], "kwargs", nvars, lang)
        if case["api"] == "make_fx":
            raise CaseError("kwargs: make_fx passes inputs positionally; a make_fx case has no kwargs")
    for key in ("spec", "decorator"):
        if key in case:
            lang.check_value(case[key], key, nvars)
    if "options" in case:
        opts = case["options"]
        if not isinstance(opts, dict):
            raise CaseError("options: must be a JSON object of keyword arguments")
        for name, v in opts.items():
            if not _IDENT.match(name):
                raise CaseError(f"options: {name!r} is not a keyword name")
            check_input_value(v, f"options.{name}", nvars, lang)
    if "module" in case:
        _check_module(case["module"])
    if "calls" in case:
        if case["api"] != "compile":
            raise CaseError("calls: only for api 'compile'")
        calls = lang._check_list(case["calls"], "calls", "calls")
        for i, c in enumerate(calls):
            if not isinstance(c, dict) or "args" not in c or not set(c) <= {"args", "kwargs"}:
                raise CaseError(f"calls[{i}]: an object with 'args' and optional 'kwargs'")
            check_input_value(c["args"], f"calls[{i}].args", nvars, lang)
            if "kwargs" in c:
                check_input_value(c["kwargs"], f"calls[{i}].kwargs", nvars, lang)


# ---------------------------------------------------------------------------
# Evaluation with real PyTorch.
# ---------------------------------------------------------------------------

def eval_input(node: Any, vars_: list[Any], lang: Any) -> Any:
    """An input VALUE as a Python object (tensors are zeros unless data is given)."""
    torch = lang.torch
    if isinstance(node, list):
        return [eval_input(x, vars_, lang) for x in node]
    if not isinstance(node, dict) or len(node) != 1:
        return lang.eval_value(node, vars_)
    (key, arg), = node.items()
    if key == "tuple":
        return tuple(eval_input(x, vars_, lang) for x in arg)
    if key == "dict":
        out: dict[Any, Any] = {}
        for k, v in arg:
            kv = eval_input(k, vars_, lang)
            out[kv] = eval_input(v, vars_, lang)
        return out
    if key == "$float":
        return float(arg)
    if key == "tensor":
        dtype = getattr(torch, arg["dtype"], None)
        if not isinstance(dtype, torch.dtype):
            raise CaseError(f"unknown dtype {arg['dtype']!r}")
        if "data" not in arg:
            return torch.zeros(arg["shape"], dtype=dtype)
        return torch.tensor(arg["data"], dtype=dtype).reshape(arg["shape"])
    if key in ("namedtuple", "dataclass"):
        from torch.utils._pytree import SERIALIZED_TYPE_TO_PYTHON_TYPE
        cls = SERIALIZED_TYPE_TO_PYTHON_TYPE.get(arg["type"])
        if cls is None:
            raise CaseError(f"no pytree type registered as {arg['type']!r}")
        return cls(**{f: eval_input(v, vars_, lang) for f, v in arg["fields"]})
    return lang.eval_value(node, vars_)


_MISSING = object()


def _make_forward(case: dict[str, Any], defaults: list[Any], attrs: list[str],
                  fn_name: str) -> Any:
    """The fixed shape-agnostic body: ``forward(self, ...)``, or for make_fx
    ``f(...)`` whose ``self`` (a global of its namespace) is the module."""
    params, touched, ns = [], [f"self.{a}" for a in attrs], {}
    star_done = False
    for i, p in enumerate(case["signature"]):
        name, kind = p[0], p[1]
        default = f"=__d{i}" if defaults[i] is not _MISSING else ""
        if defaults[i] is not _MISSING:
            ns[f"__d{i}"] = defaults[i]
        if kind == "VAR_POSITIONAL":
            params.append(f"*{name}")
            star_done = True
        elif kind == "VAR_KEYWORD":
            params.append(f"**{name}")
        elif kind == "KEYWORD_ONLY":
            if not star_done:
                params.append("*")
                star_done = True
            params.append(name + default)
        else:
            params.append(name + default)
        if kind == "POSITIONAL_ONLY" and (i + 1 == len(case["signature"])
                                          or case["signature"][i + 1][1] != "POSITIONAL_ONLY"):
            params.append("/")
        touched.append(name)
    touch_int = case.get("body", "touch_all") == "touch_all"
    head = f"def forward(self, {', '.join(params)}):\n" if fn_name == "forward" \
        else f"def f({', '.join(params)}):\n"
    src = (
        head +
        "    __acc = torch.zeros(())\n"
        f"    for __leaf in pytree.tree_leaves(({''.join(t + ', ' for t in touched)})):\n"
        "        if isinstance(__leaf, torch.Tensor):\n"
        "            __acc = __acc + __leaf.sum()\n"
        + ("        elif type(__leaf) is int or isinstance(__leaf, torch.SymInt):\n"
           "            __acc = __acc + __leaf\n" if touch_int else "")
        + "    return __acc\n"
    )
    return src, ns


def _build(case: dict[str, Any], lang: Any) -> tuple[Any, ...]:
    """Everything the case evaluates before the API call, in the contract's order."""
    torch = lang.torch
    import torch.utils._pytree as pytree

    vars_ = lang.make_vars(case.get("vars", []))
    spec = lang.eval_value(case["spec"], vars_) if "spec" in case else _MISSING
    decorator = lang.eval_value(case["decorator"], vars_) if "decorator" in case else _MISSING
    args = eval_input(case["args"], vars_, lang)
    kwargs = eval_input(case["kwargs"], vars_, lang) if "kwargs" in case else {}
    options = {k: eval_input(v, vars_, lang) for k, v in case.get("options", {}).items()}
    defaults = [eval_input(p[2]["default"], vars_, lang) if len(p) == 3 else _MISSING
                for p in case["signature"]]
    module_spec = case.get("module", {})
    params = [(n, eval_input(t, vars_, lang)) for n, t in module_spec.get("parameters", [])]
    buffers = [(n, eval_input(t, vars_, lang)) for n, t in module_spec.get("buffers", [])]

    attrs = [n for n, _ in params] + [n for n, _ in buffers]
    fn_name = "f" if case["api"] == "make_fx" else "forward"
    src, ns = _make_forward(case, defaults, attrs, fn_name)
    ns.update({"torch": torch, "pytree": pytree})
    exec(src, ns)  # noqa: S102  (the contract's fixed body)
    fn = ns[fn_name]
    if decorator is not _MISSING:
        # An attribute lookup, not `from ... import`: a torch without the
        # decorator raises an AttributeError that names no file.
        fn = lang.dynamic_spec.dynamic_spec(decorator)(fn)
    module = type("M", (torch.nn.Module,), {"forward": fn} if fn_name == "forward" else {})()
    ns["self"] = module
    for name, t in params:
        owner, leaf = _owner(module, name, torch)
        owner.register_parameter(leaf, torch.nn.Parameter(t))
    for name, t in buffers:
        owner, leaf = _owner(module, name, torch)
        owner.register_buffer(leaf, t)
    return module if fn_name == "forward" else fn, spec, args, kwargs, options, vars_


def _owner(module: Any, dotted: str, torch: Any) -> tuple[Any, str]:
    *path, leaf = dotted.split(".")
    for part in path:
        if part not in module._modules:
            module.add_module(part, torch.nn.Module())
        module = module._modules[part]
    return module, leaf


# --- results ---------------------------------------------------------------

def _size(s: Any, torch: Any) -> Any:
    if isinstance(s, torch.SymInt):
        return str(s.node.expr)
    return int(s)


def _placeholder_value(v: Any, lang: Any) -> Any:
    torch = lang.torch
    if isinstance(v, torch.Tensor):
        return {"tensor": {"shape": [_size(s, torch) for s in v.shape],
                           "dtype": str(v.dtype).removeprefix("torch.")}}
    if isinstance(v, torch.SymInt):
        return {"sym_int": str(v.node.expr)}
    return {"const": lang.enc(v)}


def _graph_result(graph: Any, lang: Any, key: str) -> dict[str, Any]:
    torch = lang.torch
    placeholders = [[n.name, _placeholder_value(n.meta.get(key), lang)]
                    for n in graph.nodes if n.op == "placeholder"]
    asserts = [n.args[1] for n in graph.nodes
               if n.op == "call_function" and n.target is torch.ops.aten._assert_scalar.default]
    return {"placeholders": placeholders, "asserts": asserts}


def _bound(b: Any) -> Any:
    import sympy
    from torch.utils._sympy.numbers import int_oo
    if b in (int_oo, -int_oo) or b in (sympy.oo, -sympy.oo):
        return None
    return int(b)


def _range_constraints(ep: Any) -> dict[str, Any]:
    return {str(sym): [_bound(vr.lower), _bound(vr.upper)]
            for sym, vr in ep.range_constraints.items()}


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_EVAL_KEY = re.compile(r"<eval_with_key>\.[0-9]+")
_FILE_LINE = re.compile(r"[A-Za-z0-9_./-]*\.py:[0-9]+")
_CUTS = ("\n\nThe error above occurred when calling torch.export.export",
         "\n\nfrom user code:\n", "\n\nSet TORCHDYNAMO_VERBOSE=1 ")


def normalize_message(message: str) -> str:
    """The contract's normalization of an error message, in its order."""
    for cut in _CUTS:
        at = message.find(cut)
        if at >= 0:
            message = message[:at]
    message = "\n".join(line.split("  # ", 1)[0] for line in message.split("\n"))
    message = _ADDRESS.sub("0x<address>", message)
    message = _EVAL_KEY.sub("<eval_with_key>.<n>", message)
    return _FILE_LINE.sub("<file>:<line>", message)


def error_of(e: BaseException) -> dict[str, str]:
    try:
        message = str(e)
    except Exception:  # an exception whose __str__ raises
        message = f"<str() of {type(e).__name__} raised>"
    return {"type": type(e).__name__, "message": normalize_message(message)}


# --- the wiring trace --------------------------------------------------------

@contextlib.contextmanager
def recording_wiring(lang: Any) -> Iterator[list[list[str]]]:
    """Wrap ``_wire_spec_slot`` and ``_emit_pending_spec_assumption`` (also
    where imported by name) to record their calls, changing nothing else."""
    import torch._dynamo.variables.builder as builder
    import torch.fx.experimental.symbolic_shapes as ss

    trace: list[list[str]] = []
    if not hasattr(ss, "_wire_spec_slot"):
        # An older torch without spec wiring: nothing to record, and what
        # the case does there is whatever that torch raises.
        yield trace
        return
    orig_slot, orig_emit = ss._wire_spec_slot, ss._emit_pending_spec_assumption

    from torch.fx.experimental.dynamic_spec import IntVar

    def slot(spec: Any, size_sym: Any) -> Any:
        if isinstance(spec, IntVar):
            label = f"IntVar {spec.sympy_sym}"
        elif isinstance(spec, lang.torch.SymInt):
            label = f"expr {spec.node.expr}"
        else:
            label = type(spec).__name__
        trace.append(["slot", str(size_sym.node.expr), label])
        return orig_slot(spec, size_sym)

    def emit(shape_env: Any, bool_expr: Any) -> Any:
        trace.append(["emit", str(bool_expr.xreplace(shape_env._spec_symbol_to_compile_symbol))])
        return orig_emit(shape_env, bool_expr)

    patched = [(ss, "_wire_spec_slot", slot), (ss, "_emit_pending_spec_assumption", emit)]
    if getattr(builder, "_wire_spec_slot", None) is orig_slot:
        patched.append((builder, "_wire_spec_slot", slot))
    saved = [(mod, name, getattr(mod, name)) for mod, name, _ in patched]
    for mod, name, fn in patched:
        setattr(mod, name, fn)
    try:
        yield trace
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


# --- the four APIs -----------------------------------------------------------

def _ds(spec: Any) -> dict[str, Any]:
    return {} if spec is _MISSING else {"dynamic_shapes": spec}


def _run_export(module: Any, spec: Any, args: Any, kwargs: Any, options: Any,
                strict: bool, lang: Any) -> dict[str, Any]:
    ep = lang.torch.export.export(module, args, kwargs=kwargs, strict=strict,
                                  **_ds(spec), **options)
    ok = _graph_result(ep.graph, lang, "val")
    ok["range_constraints"] = _range_constraints(ep)
    return {"placeholders": ok["placeholders"], "range_constraints": ok["range_constraints"],
            "asserts": ok["asserts"]}


def _run_make_fx(f: Any, spec: Any, args: Any, options: Any, lang: Any) -> dict[str, Any]:
    from torch.fx.experimental.proxy_tensor import make_fx

    kw = {"tracing_mode": "fake", **_ds(spec), **options}
    gm = make_fx(f, **kw)(*args)
    return _graph_result(gm.graph, lang, "val")


def _run_compile(module: Any, spec: Any, args: Any, kwargs: Any, options: Any,
                 calls: list[Any], vars_: list[Any], lang: Any) -> dict[str, Any]:
    graphs: list[Any] = []

    def recorder(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    compiled = lang.torch.compile(module, backend=recorder, **_ds(spec), **options)
    compiled(*args, **kwargs)
    if not graphs:
        raise AssertionError("torch.compile ran no graph on the first call")
    ok = _graph_result(graphs[0].graph, lang, "example_value")
    if calls:
        ok["calls"] = []
        for c in calls:
            before = len(graphs)
            try:
                c_args = eval_input(c["args"], vars_, lang)
                c_kwargs = eval_input(c["kwargs"], vars_, lang) if "kwargs" in c else {}
                compiled(*c_args, **c_kwargs)
                ok["calls"].append({"recompiled": len(graphs) > before})
            except Exception as e:
                ok["calls"].append({"error": error_of(e)})
    return ok


def evaluate(case: dict[str, Any], lang: Any) -> dict[str, Any]:
    """The result object of one validated ``export_spec`` case."""
    torch = lang.torch
    lang.reset_spec_state()
    torch._dynamo.reset()
    out: dict[str, Any] = {"id": case["id"]}
    with recording_wiring(lang) as trace:
        try:
            module, spec, args, kwargs, options, vars_ = _build(case, lang)
            api = case["api"]
            if api in ("export", "export_strict"):
                ok = _run_export(module, spec, args, kwargs, options, api == "export_strict", lang)
            elif api == "make_fx":
                ok = _run_make_fx(module, spec, args, options, lang)
            else:
                ok = _run_compile(module, spec, args, kwargs, options,
                                  case.get("calls", []), vars_, lang)
            out["ok"] = ok
        except CaseError:
            raise
        except Exception as e:  # includes RecursionError
            out["error"] = error_of(e)
        finally:
            torch._dynamo.reset()
    out["wiring"] = trace
    return out
