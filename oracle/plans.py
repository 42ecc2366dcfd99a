"""Model plans as nn.Modules (issue 15 item 1): what `torchspec fuzz --live
--programs` generates (src/live/plan.rs), built here into a zoo `Export`
(oracle/zoo.py) that torch.export exports and saves.

A plan decides everything: inputs (shapes, dtypes, the symbol of each dynamic
dim), how they reach forward, the module's parameters, buffers and lifted
constants, the ops in order (each reading named values: x0 inputs, p0
parameters, b0 buffers, c0 constants, v3 op 3's output, v3.1 its second), the
in-place updates at the end, and the outputs. Nothing here looks at a shape:
src/live/plan/rules.rs has already checked every op on its arguments, and
OPS below implements the same ops. A plan PyTorch cannot export is counted
apart by the fuzzer, by exception class.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from zoo_models import Entry, Export, T

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
          "bool": torch.bool}


def _unary(f: Callable) -> Callable:
    return lambda args, ints: f(args[0])


UNARY = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp,
    "abs": torch.abs, "neg": torch.neg, "sin": torch.sin, "cos": torch.cos, "gelu": F.gelu,
    "silu": F.silu, "softplus": F.softplus, "leaky_relu": F.leaky_relu, "elu": F.elu,
    "hardtanh": F.hardtanh, "hardswish": F.hardswish, "mish": F.mish,
    "logsigmoid": F.logsigmoid, "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil,
    "round": torch.round, "sign": torch.sign, "square": torch.square,
    "rsqrt1": lambda a: torch.rsqrt(a.abs() + 1), "log1p_abs": lambda a: torch.log1p(a.abs()),
    "sqrt_abs": lambda a: a.abs().sqrt(), "clamp": lambda a: a.clamp(-1.0, 1.0),
    "add_scalar": lambda a: a + 2.0, "mul_scalar": lambda a: a * 0.5,
    "rsub_scalar": lambda a: 1.0 - a, "clone": lambda a: a.clone(),
    "contiguous": lambda a: a.contiguous(), "dropout": lambda a: F.dropout(a, 0.5, True),
    "double": lambda a: a.double(), "float": lambda a: a.float(),
}
DIMWISE = {
    "softmax": lambda a, d: torch.softmax(a, d),
    "log_softmax": lambda a, d: torch.log_softmax(a, d),
    "cumsum": lambda a, d: torch.cumsum(a, d),
    "flip": lambda a, d: torch.flip(a, [d]),
    "roll": lambda a, d: torch.roll(a, 1, d),
}
INPLACE = {
    "relu_": lambda a: a.relu_(), "add_": lambda a: a.add_(1.0), "mul_": lambda a: a.mul_(2.0),
    "clamp_": lambda a: a.clamp_(-2.0, 2.0), "sigmoid_": lambda a: a.sigmoid_(),
}
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul,
    "div": lambda a, b: a / (b.abs() + 1), "maximum": torch.maximum, "minimum": torch.minimum,
    "atan2": torch.atan2, "where_gt": lambda a, b: torch.where(a > 0, a, b),
    "lerp": lambda a, b: torch.lerp(a, b, 0.5), "eq_float": lambda a, b: (a == b).float(),
    "gt_float": lambda a, b: (a > b).float(),
    "and_float": lambda a, b: torch.logical_and(a > 0, b > 0).float(),
    "copysign": torch.copysign, "hypot": torch.hypot,
}
REDUCE = {
    "sum": lambda a, d, k: a.sum(d, keepdim=k), "mean": lambda a, d, k: a.mean(d, keepdim=k),
    "amax": lambda a, d, k: a.amax(d, keepdim=k), "amin": lambda a, d, k: a.amin(d, keepdim=k),
    "prod": lambda a, d, k: a.prod(d, keepdim=k), "var": lambda a, d, k: a.var(d, keepdim=k),
    "std": lambda a, d, k: a.std(d, keepdim=k),
    "logsumexp": lambda a, d, k: torch.logsumexp(a, d, keepdim=k),
    "norm": lambda a, d, k: torch.linalg.vector_norm(a, dim=d, keepdim=k),
    "argmax": lambda a, d, k: a.argmax(d, keepdim=k),
    "argmin": lambda a, d, k: a.argmin(d, keepdim=k),
    "any_float": lambda a, d, k: (a > 0).any(d, keepdim=k).float(),
}
REDUCE_ALL = {"sum_all": torch.sum, "mean_all": torch.mean, "max_all": torch.max}


def _slice_dim(a, d: int, s: slice):
    return a[(slice(None),) * d + (s,)]


VIEW = {
    "transpose": lambda a, i: a.transpose(i[0], i[1]),
    "permute_rev": lambda a, i: a.permute(list(reversed(range(a.dim())))),
    "unsqueeze": lambda a, i: a.unsqueeze(i[0]),
    "squeeze": lambda a, i: a.squeeze(i[0]),
    "flatten": lambda a, i: a.flatten(),
    "flatten1": lambda a, i: a.flatten(1),
    "reshape_last": lambda a, i: a.reshape(-1, a.shape[-1]),
    "t": lambda a, i: a.t(),
    "narrow": lambda a, i: a.narrow(i[0], 0, 1),
    "select": lambda a, i: a.select(i[0], 0),
    "slice_from1": lambda a, i: _slice_dim(a, i[0], slice(1, None)),
    "slice_step": lambda a, i: _slice_dim(a, i[0], slice(None, None, 2)),
    "repeat": lambda a, i: a.repeat(2, *([1] * (a.dim() - 1))),
    "getitem0": lambda a, i: a[0],
    "size_reshape": lambda a, i: a.reshape(a.shape[0], -1),
}
MULTI = {
    "split2": lambda a, d: a.split(2, d), "chunk2": lambda a, d: a.chunk(2, d),
    "unbind": lambda a, d: a.unbind(d), "topk1": lambda a, d: tuple(a.topk(1, d)),
    "sort": lambda a, d: tuple(a.sort(d)), "max_dim": lambda a, d: tuple(a.max(d)),
    "min_dim": lambda a, d: tuple(a.min(d)), "var_mean": lambda a, d: torch.var_mean(a, d),
    "std_mean": lambda a, d: torch.std_mean(a, d),
    "aminmax": lambda a, d: tuple(torch.aminmax(a, dim=d)),
    "cummax": lambda a, d: tuple(torch.cummax(a, d)),
}


def _item_zeros(a):
    u = (a > 0).sum().item()
    torch._check(u >= 0)
    return a.new_zeros(u)


def _cond(a):
    return torch.cond(a.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (a,))


def _map(a):
    from torch._higher_order_ops.map import map as hop_map
    return hop_map(lambda x: x * 2 + 1, a)


def _while_loop(a):
    from torch._higher_order_ops.while_loop import while_loop
    _, out = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                        (torch.zeros((), dtype=torch.int64), a))
    return out


def _scan(a):
    from torch._higher_order_ops.scan import scan
    carry, ys = scan(lambda c, x: (c + x, (c + x).clone()), torch.zeros_like(a[0]), a)
    return carry, ys


SPECIAL = {
    "linear": lambda args, i: F.linear(*args),
    "matmul": lambda args, i: torch.matmul(*args),
    "bmm": lambda args, i: torch.bmm(*args),
    "addmm": lambda args, i: torch.addmm(args[2], args[0], args[1]),
    "conv1d": lambda args, i: F.conv1d(args[0], args[1], padding=1),
    "conv2d": lambda args, i: F.conv2d(args[0], args[1], padding=1),
    "max_pool1d": lambda args, i: F.max_pool1d(args[0], 2),
    "avg_pool1d": lambda args, i: F.avg_pool1d(args[0], 2),
    "adaptive_avg_pool1d": lambda args, i: F.adaptive_avg_pool1d(args[0], 1),
    "max_pool2d": lambda args, i: F.max_pool2d(args[0], 2),
    "layer_norm": lambda args, i: F.layer_norm(args[0], [args[0].shape[-1]], args[1], args[2]),
    "group_norm": lambda args, i: F.group_norm(args[0], 1, args[1], args[2]),
    "batch_norm": lambda args, i: F.batch_norm(args[0], args[1], args[2], training=True),
    "embedding": lambda args, i: F.embedding(args[0].clamp(0, args[1].shape[0] - 1), args[1]),
    "add_buffer": lambda args, i: args[0] + args[1],
    "add_constant": lambda args, i: args[0] + args[1],
    "cat": lambda args, i: torch.cat(args, i[0]),
    "stack": lambda args, i: torch.stack(args, i[0]),
    "expand_as": lambda args, i: args[0].expand_as(args[1]),
    "index_select": lambda args, i: args[0].index_select(i[0], torch.tensor([0])),
    "masked_fill": lambda args, i: args[0].masked_fill(args[0] > 0, 0.5),
    "masked_select": lambda args, i: args[0][args[0] > 0],
    "nonzero": lambda args, i: args[0].nonzero(),
    "item_zeros": lambda args, i: _item_zeros(args[0]),
    "size_full": lambda args, i: torch.full((args[0].shape[i[0]] * 2 + 1,), 0.5),
    "new_ones_size": lambda args, i: args[0].new_ones(args[0].shape[i[0]], 2),
    "cond": lambda args, i: _cond(args[0]),
    "map": lambda args, i: _map(args[0]),
    "while_loop": lambda args, i: _while_loop(args[0]),
    "scan": lambda args, i: _scan(args[0]),
}


def run_op(name: str, args: list, ints: list) -> Any:
    """Op NAME on ARGS (tensors) and INTS, as src/live/plan/rules.rs defines it."""
    if name in UNARY:
        return UNARY[name](args[0])
    if name in DIMWISE:
        return DIMWISE[name](args[0], ints[0])
    if name in INPLACE:
        return INPLACE[name](args[0])
    if name in BINARY:
        return BINARY[name](args[0], args[1])
    if name in REDUCE:
        return REDUCE[name](args[0], ints[0], bool(ints[1]))
    if name in REDUCE_ALL:
        return REDUCE_ALL[name](args[0])
    if name in VIEW:
        return VIEW[name](args[0], ints)
    if name in MULTI:
        return MULTI[name](args[0], ints[0])
    if name in SPECIAL:
        return SPECIAL[name](args, ints)
    raise KeyError(f"plan op {name!r} is not in oracle/plans.py")


def all_ops() -> list[str]:
    return [*UNARY, *DIMWISE, *INPLACE, *BINARY, *REDUCE, *REDUCE_ALL, *VIEW, *MULTI,
            *SPECIAL]


class PlanModule(nn.Module):
    """The module of one plan; ``run`` interprets its ops."""

    def __init__(self, plan: dict):
        super().__init__()
        self.plan = plan
        for k, p in enumerate(plan["params"]):
            self.register_parameter(f"p{k}", nn.Parameter(_module_tensor(p, k)))
        for k, b in enumerate(plan["buffers"]):
            self.register_buffer(f"b{k}", _module_tensor(b, k + 100),
                                 persistent=b.get("persistent", True))
        for k, c in enumerate(plan["constants"]):
            setattr(self, f"c{k}", _module_tensor(c, k + 200))

    def run(self, xs: list) -> Any:
        plan = self.plan
        env: dict[str, Any] = {f"x{k}": x for k, x in enumerate(xs)}
        for kind, n in (("p", len(plan["params"])), ("b", len(plan["buffers"])),
                        ("c", len(plan["constants"]))):
            for k in range(n):
                env[f"{kind}{k}"] = getattr(self, f"{kind}{k}")
        for op in plan["ops"]:
            out = run_op(op["op"], [env[a] for a in op["args"]], op.get("ints", []))
            if isinstance(out, (tuple, list)):
                for k, v in enumerate(out):
                    env[f"v{op['id']}.{k}"] = v
            else:
                env[f"v{op['id']}"] = out
        for m in plan["mutations"]:
            target = env[m["target"]]
            target.add_(env[m["src"]].mean().to(target.dtype))
        return _outputs(plan["outputs"], [env[r] for r in plan["outputs"]["refs"]])


def _module_tensor(t: dict, salt: int) -> torch.Tensor:
    dtype = DTYPES[t.get("dtype", "float32")]
    shape = t["shape"]
    n = 1
    for d in shape:
        n *= d
    base = (torch.arange(n, dtype=torch.float64) * 0.37 + salt).sin().reshape(shape)
    return base.to(dtype)


def _outputs(o: dict, vals: list) -> Any:
    extra = []
    if o.get("none"):
        extra.append(None)
    if o.get("constant"):
        extra.append(3)
    layout = o["layout"]
    if layout == "single" and not extra:
        return vals[0]
    if layout == "list":
        return [*vals, *extra]
    if layout == "dict":
        return {f"out{k}": v for k, v in enumerate([*vals, *extra])}
    if layout == "nested":
        return (vals[0], list(vals[1:]), {"n": extra[0] if extra else None})
    return (*vals, *extra)


# Each input layout: the forward's source, how the example inputs are
# passed (args, kwargs) and the dynamic_shapes spelling for per-input specs.
def _forward_source(layout: str, n: int) -> str:
    names = [f"x{k}" for k in range(n)]
    if layout == "nested":
        return ("def forward(self, xs):\n"
                "    return self.run([xs[0], *xs[1]])\n")
    if layout == "dict":
        keys = ", ".join(f"xs[{_key(k)!r}]" for k in range(n))
        return f"def forward(self, xs):\n    return self.run([{keys}])\n"
    if layout == "kwargs" and n > 1:
        rest = ", ".join(f"{x}=None" for x in names[1:])
        return f"def forward(self, x0, *, {rest}):\n    return self.run([{', '.join(names)}])\n"
    return f"def forward(self, {', '.join(names)}):\n    return self.run([{', '.join(names)}])\n"


def _key(k: int) -> str:
    return "abcdefgh"[k]


def _symbols(plan: dict) -> list:
    out: list = []
    for s in plan["symbols"]:
        kind = s["kind"]
        if kind == "dim":
            kw = {k: s[k] for k in ("min", "max") if s.get(k) is not None}
            out.append(Dim(s["name"], **kw))
        elif kind == "derived":
            out.append(out[s["of"]] * s["mul"] + s["add"] if s["add"] else out[s["of"]] * s["mul"])
        elif kind == "auto":
            out.append(Dim.AUTO)
        else:
            out.append(Dim.DYNAMIC)
    return out


def build(plan: dict) -> Export:
    """The zoo Export of PLAN: the module, example inputs, dynamic shapes."""
    inputs = plan["inputs"]
    xs = [T(*x["shape"], dtype=DTYPES[x["dtype"]]) for x in inputs]
    symbols = _symbols(plan)
    specs = [{d: symbols[s] for d, s in enumerate(x["dims"]) if s is not None} or None
             for x in inputs]
    dynamic = any(s is not None for s in specs)
    namespace: dict[str, Any] = {}
    exec(_forward_source(plan["layout"], len(xs)), namespace)
    cls = type("PlanModule_", (PlanModule,), {"forward": namespace["forward"]})
    module = cls(plan)
    layout = plan["layout"]
    kwargs: dict = {}
    if layout == "nested":
        args: tuple = ((xs[0], xs[1:]),)
        shapes: Any = {"xs": (specs[0], specs[1:])}
    elif layout == "dict":
        args = ({_key(k): x for k, x in enumerate(xs)},)
        shapes = {"xs": {_key(k): s for k, s in enumerate(specs)}}
    elif layout == "kwargs" and len(xs) > 1:
        args = (xs[0],)
        kwargs = {f"x{k}": x for k, x in enumerate(xs) if k > 0}
        shapes = {f"x{k}": s for k, s in enumerate(specs)}
    else:
        args = tuple(xs)
        shapes = {f"x{k}": s for k, s in enumerate(specs)}
    return Export(module=module, args=args, kwargs=kwargs,
                  dynamic_shapes=shapes if dynamic else None, strict=plan["strict"],
                  decompose=plan["decompose"], keep_debug_meta=False)


def entries(directory: str) -> list[Entry]:
    """The generated programs kept by `torchspec fuzz --live --programs`
    (DIRECTORY/NAME.plan.json), as zoo entries: oracle/zoo.py exports them after its own."""
    import glob
    import json
    import os

    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.plan.json"))):
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
        name = os.path.basename(path)[:-len(".plan.json")]
        out.append(Entry(name, lambda plan=plan: build(plan)))
    return out
