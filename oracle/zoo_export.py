"""What oracle/zoo.py does with each entry once exported: the node metadata made
independent of the process and the checkout (normalize_metadata), and the input
probes of corpus/programs/NAME.probes.jsonl (probes_for, encode_value).

Apart from zoo.py so that its entries keep their line numbers (the archives'
stack traces record them) while it stays under 1,500 lines; serve_plans.py
uses the same functions for the fuzzer's generated programs.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

import torch
import torch.utils._pytree as pytree

from zoo_models import Export, T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------
# Export and save.
# ---------------------------------------------------------------------------

def normalize_metadata(ep: torch.export.ExportedProgram, keep_debug_meta: bool) -> None:
    """Make the saved bytes independent of the process and the checkout.

    Node metadata is saved verbatim in the archive: ``stack_trace`` names
    absolute paths (this checkout, the venv's site-packages) and the
    provenance records in ``from_node`` carry ``graph_id = id(graph)`` and
    targets like ``<built-in method tanh of type object at 0x7f...>``, and
    strict export keys ``nn_module_stack`` entries by ``id(module)``: memory
    addresses. Paths become relative (``oracle/zoo.py``, ``torch/nn/...``),
    graph and module ids are renumbered 0, 1, ... in order of first
    appearance, addresses in targets become ``0x0``. Nothing a report shows depends on either. Without
    KEEP_DEBUG_META both are dropped, and torch_fn too.
    """
    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__))) + os.sep
    site_real = os.path.dirname(os.path.dirname(os.path.realpath(torch.__file__))) + os.sep
    ids: dict[int, int] = {}
    module_ids: dict[str, int] = {}
    seen: set[int] = set()

    def renumber(sources: list) -> None:
        for src in sources:
            if id(src) in seen:
                continue
            seen.add(id(src))
            info = getattr(src, "node_info", None)
            if info is not None:
                info.graph_id = ids.setdefault(info.graph_id, len(ids))
                info.target = re.sub(r" at 0x[0-9a-f]+>", " at 0x0>", info.target)
            renumber(getattr(src, "from_node", []))

    for gm in ep.graph_module.modules():
        if not isinstance(gm, torch.fx.GraphModule):
            continue
        for node in gm.graph.nodes:
            if not keep_debug_meta:
                node.meta.pop("stack_trace", None)
                node.meta.pop("from_node", None)
                node.meta.pop("torch_fn", None)
            trace = node.meta.get("stack_trace")
            if trace is not None:
                for prefix in (site, site_real, ROOT + os.sep):
                    trace = trace.replace(f'File "{prefix}', 'File "')
                node.meta["stack_trace"] = trace
            renumber(node.meta.get("from_node", []))
            stack = node.meta.get("nn_module_stack")
            if stack:
                # Strict export keys some entries by id(module).
                node.meta["nn_module_stack"] = {
                    (str(module_ids.setdefault(k, len(module_ids))) if k.isdigit() else k): v
                    for k, v in stack.items()}


# ---------------------------------------------------------------------------
# Input probes: corpus/programs/NAME.probes.jsonl.
# ---------------------------------------------------------------------------

def encode_value(x: Any) -> Any:
    """A probe VALUE (capture.py decode_probe_value is the reader)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, torch.Tensor):
        t: dict[str, Any] = {"shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch.")}
        if x.numel() and bool((x != 0).any()):
            if x.is_complex():
                raise ValueError("complex probe tensors must be zeros (JSON has no complex)")
            t["data"] = x.tolist()
        return {"tensor": t}
    if isinstance(x, list):
        return [encode_value(v) for v in x]
    if isinstance(x, tuple) and type(x) in pytree.SUPPORTED_SERIALIZED_TYPES \
            and hasattr(x, "_fields"):
        name = pytree.SUPPORTED_SERIALIZED_TYPES[type(x)].serialized_type_name
        return {"namedtuple": {"type": name,
                               "fields": [[f, encode_value(getattr(x, f))] for f in x._fields]}}
    if isinstance(x, tuple):
        return {"tuple": [encode_value(v) for v in x]}
    if isinstance(x, dict):
        return {"dict": [[encode_value(k), encode_value(v)] for k, v in x.items()]}
    if dataclasses.is_dataclass(x) and type(x) in pytree.SUPPORTED_SERIALIZED_TYPES:
        name = pytree.SUPPORTED_SERIALIZED_TYPES[type(x)].serialized_type_name
        return {"dataclass": {"type": name, "fields": [
            [f.name, encode_value(getattr(x, f.name))] for f in dataclasses.fields(x)]}}
    raise ValueError(f"cannot encode a probe value of type {type(x).__name__}")


def _finite(x: Any) -> bool:
    # Range bounds are sympy numbers; torch's int_oo is not `is_finite`-aware.
    import sympy
    from torch.utils._sympy.numbers import int_oo
    return x not in (int_oo, -int_oo, sympy.oo, -sympy.oo)


def _other_dtype(t: torch.Tensor) -> torch.dtype:
    if t.dtype.is_complex:
        return torch.float32
    if t.dtype.is_floating_point:
        return torch.float64 if t.dtype != torch.float64 else torch.float32
    return torch.float32


def probes_for(spec: Export, ep: torch.export.ExportedProgram) -> list[tuple[str, Any, Any]]:
    """The probes of one program: (kind, args, kwargs), kinds in a fixed order.

    Built from the example inputs and the *loaded* program: the user-input
    placeholders' ``meta["val"]`` say which dims are static, which are a
    plain symbol (with its range in ``ep.range_constraints``) and which are
    derived expressions; a dim change is applied to every dim whose
    expression mentions the symbol, so a below-min probe breaks only the
    range, not an equality between inputs.
    """
    import sympy

    args, kwargs = spec.args, spec.kwargs
    probes: list[tuple[str, Any, Any]] = [("ok", args, kwargs)]
    leaves, treespec = pytree.tree_flatten((args, kwargs))
    placeholders = [n for n, s in zip(ep.graph.nodes, ep.graph_signature.input_specs)
                    if n.op == "placeholder" and s.kind.name == "USER_INPUT"]

    def with_leaves(new: list) -> tuple:
        return pytree.tree_unflatten(new, treespec)

    tensor_ix = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    if tensor_ix:
        i = tensor_ix[0]
        new = list(leaves)
        new[i] = torch.zeros((1, *leaves[i].shape), dtype=leaves[i].dtype)
        probes.append(("wrong-rank", *with_leaves(new)))

    # Dims by expression, when the placeholders line up with the leaves.
    dims: list[tuple[int, int, Any]] = []   # (leaf index, dim, sympy expr or int)
    if len(placeholders) == len(leaves):
        for i in tensor_ix:
            val = placeholders[i].meta.get("val")
            if isinstance(val, torch.Tensor):
                for d, size in enumerate(val.shape):
                    dims.append((i, d, size.node.expr if isinstance(size, torch.SymInt)
                                 else int(size)))
    static = [(i, d) for i, d, e in dims if isinstance(e, int)]
    if static:
        i, d = static[0]
        new = list(leaves)
        shape = list(leaves[i].shape)
        shape[d] += 1
        new[i] = torch.zeros(shape, dtype=leaves[i].dtype)
        probes.append(("static-dim", *with_leaves(new)))

    symbols = [e for _, _, e in dims if isinstance(e, sympy.Symbol)]
    if symbols:
        sym = symbols[0]
        vr = ep.range_constraints.get(sym)

        def resized(value: int) -> tuple:
            new = list(leaves)
            for i in tensor_ix:
                shape = list(leaves[i].shape)
                changed = False
                for j, d, e in dims:
                    if j == i and not isinstance(e, int) and sym in e.free_symbols:
                        # Other symbols keep their example values.
                        sub = {s: next(leaves[a].shape[b] for a, b, x in dims if x == s)
                               for s in e.free_symbols if s != sym}
                        sub[sym] = value
                        shape[d] = int(e.subs(sub))
                        changed = True
                if changed:
                    new[i] = torch.zeros(shape, dtype=leaves[i].dtype)
            return with_leaves(new)

        if vr is not None:
            lo, hi = vr.lower, vr.upper
            if _finite(lo) and int(lo) - 1 >= 0:
                probes.append(("dim-below-min", *resized(int(lo) - 1)))
            if _finite(hi):
                probes.append(("dim-above-max", *resized(int(hi) + 1)))

    derived = [(i, d) for i, d, e in dims
               if not isinstance(e, int) and not isinstance(e, sympy.Symbol)]
    if derived:
        i, d = derived[0]
        new = list(leaves)
        shape = list(leaves[i].shape)
        shape[d] += 1
        new[i] = torch.zeros(shape, dtype=leaves[i].dtype)
        probes.append(("derived-dim", *with_leaves(new)))

    if tensor_ix:
        i = tensor_ix[0]
        new = list(leaves)
        new[i] = torch.zeros(leaves[i].shape, dtype=_other_dtype(leaves[i]))
        probes.append(("dtype", *with_leaves(new)))

    # Structure: one positional argument fewer (or one more when there is none).
    if args:
        probes.append(("structure", args[:-1], kwargs))
    else:
        probes.append(("structure", (T(1),), kwargs))
    if kwargs:
        last = list(kwargs)[-1]
        probes.append(("missing-kwarg", args, {k: v for k, v in kwargs.items() if k != last}))
    probes.append(("extra-kwarg", args, {**kwargs, "unexpected": T(1)}))

    # A plain int input: its value out of its range (a specialized int has
    # the one value it was exported with).
    ints = [i for i, v in enumerate(leaves) if type(v) is int]
    if ints and len(placeholders) == len(leaves):
        i = ints[0]
        val = placeholders[i].meta.get("val")
        new = list(leaves)
        if isinstance(val, torch.SymInt) and val.node.expr in ep.range_constraints:
            hi = ep.range_constraints[val.node.expr].upper
            new[i] = int(hi) + 1 if _finite(hi) else -1
        else:
            new[i] = leaves[i] + 1
        probes.append(("scalar-range", *with_leaves(new)))

    probes.extend(spec.probes)
    return probes
