"""Program mode of oracle/capture.py: the program report (shared/program-report.md)
and the pass pipelines (shared/passes.md) of an ExportedProgram from
torch.export.load, its input probes (shared/probe-format.md), and the program
goldens regen-goldens.sh writes (``--program``, ``--probes``,
``--program-goldens``). serve_plans.py gets this module as ``oracle`` for the
same golden writers.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

import capture_cases
from capture_cases import (  # noqa: F401  (_write_line: serve_plans.py's oracle._write_line)
    USAGE, CaseFileError, _check_list, _is_int, _stdout_to_stderr, _write_line,
)
from golden_encoding import error_result, program_report
from names import GOLDEN_PIPELINES, PASSES

torch: Any = None


def import_torch() -> None:
    """capture_cases.import_torch (torch and the zoo's registrations), and torch here."""
    global torch
    capture_cases.import_torch()
    torch = capture_cases.torch


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
