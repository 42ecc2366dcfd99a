"""The program zoo: small models exported with real PyTorch 2.15.0.

Usage (from the repo root):
    .oracle/bin/python oracle/zoo.py            # write every program and its probes
    .oracle/bin/python oracle/zoo.py NAME ...   # only these

For each entry below this writes ``corpus/programs/NAME.pt2``
(``torch.export.save``) and ``corpus/programs/NAME.probes.jsonl`` (input
probes, see ``probes_for``), then ``corpus/programs/registrations.json``
(``oracle/registrations.py``: the custom ops and pytree types that
``oracle/zoo_types.py`` registers, which every loading process needs). The comment above each entry says what it
covers. Weights are tiny (widths of 2 to 8) so the folder stays small, seeds
are fixed and example inputs are built from ``arange``, so re-running gives
the same programs: the archive bytes depend only on the model, the inputs
and the file name (``torch.export.save`` names the archive root after it).

The programs are what ``oracle/capture.py --program`` and ``--probes``
read; their goldens are written by ``oracle/regen-goldens.sh``. Written
against the PyTorch API only, independently of the Rust reader.
"""

from __future__ import annotations

# No line above the entries comes or goes: the archives' stack traces record their lines.
import os
import sys
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch.export import Dim

import golden_encoding
import plans
import zoo_nn
from zoo_export import encode_value, normalize_metadata, probes_for
from zoo_models import Entry, Export, T
from zoo_types import Pair, Point  # noqa: F401  (registers them for serialization)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "corpus", "programs")


ZOO: list[Entry] = []


def program(name: str) -> Callable:
    def register(make: Callable[[], Export]) -> Callable[[], Export]:
        ZOO.append(Entry(name, make))
        return make
    return register


# The export of one entry and the probe file's writer (the sections below use them).
def export_entry(entry: Entry) -> tuple[Export, torch.export.ExportedProgram]:
    torch.manual_seed(0)
    spec = entry.make()
    # Export mutates inputs only symbolically, but input-mutation models
    # would mutate the example tensors if run; keep our own copies pristine.
    args, kwargs = pytree.tree_map(_clone, (spec.args, spec.kwargs))
    ep = torch.export.export(spec.module, args, kwargs, dynamic_shapes=spec.dynamic_shapes,
                             strict=spec.strict,
                             preserve_module_call_signature=spec.preserve)
    if spec.decompose:
        ep = ep.run_decompositions()
    if spec.edit is not None:
        spec.edit(ep)
    normalize_metadata(ep, spec.keep_debug_meta)
    return spec, ep


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


def write_probes(name: str, probes: list[tuple[str, Any, Any]], path: str) -> None:
    counts: dict[str, int] = {}
    lines = []
    for kind, args, kwargs in probes:
        counts[kind] = counts.get(kind, 0) + 1
        pid = f"{name}/{kind}" + (f"-{counts[kind]}" if counts[kind] > 1 else "")
        # a probe line is written as a golden line is (golden_encoding.dumps)
        lines.append(golden_encoding.dumps({"id": pid, "kind": kind, "args": encode_value(tuple(args)),
                                            "kwargs": encode_value(dict(kwargs))}))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------
# The zoo. One entry per program; the comment says what it covers.
# ---------------------------------------------------------------------------

# identity: the no-op program; the output is the input placeholder itself.
@program("identity")
def _() -> Export:
    class Identity(nn.Module):
        def forward(self, x):
            return x
    return Export(Identity(), (T(2, 3),))


# mlp-static: parameters (Linear, bias), static shapes, aten.linear/relu.
@program("mlp-static")
def _() -> Export:
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 2)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))
    return Export(MLP(), (T(3, 4),))


# mlp-dynamic: a named Dim with min/max on the batch; sym_size in the graph.
@program("mlp-dynamic")
def _() -> Export:
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x).reshape(x.shape[0] * 3)
    return Export(MLP(), (T(5, 4),), dynamic_shapes=({0: Dim("batch", min=2, max=64)},))


# mlp-decomposed: the same MLP after ep.run_decompositions() (core ATen:
# permute, addmm, view), dynamic batch.
@program("mlp-decomposed")
def _() -> Export:
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 2)

        def forward(self, x):
            return F.gelu(self.fc2(torch.relu(self.fc1(x))))
    return Export(MLP(), (T(3, 4),), dynamic_shapes=({0: Dim("batch", max=1024)},),
                  decompose=True)


# dim-auto: Dim.AUTO and Dim.DYNAMIC (unnamed symbols, unbounded above),
# an AUTO dim that export specializes to a constant.
@program("dim-auto")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            return x.sum(0) + y, x.shape[1] * 2
    return Export(M(), (T(3, 4), T(4)),
                  dynamic_shapes=({0: Dim.AUTO, 1: Dim.DYNAMIC}, {0: Dim.AUTO}))


# derived-dims: derived Dims 2*d and d+1 over one root Dim with min/max;
# range_constraints holds the derived expressions.
@program("derived-dims")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y, z):
            return x.repeat(2) + y, z[1:] * x
    d = Dim("d", min=2, max=32)
    return Export(M(), (T(4), T(8), T(5)),
                  dynamic_shapes=({0: d}, {0: 2 * d}, {0: d + 1}))


# shared-dims: two inputs sharing one Dim (equality guard), two Dims on one
# tensor, a static dim beside dynamic ones, matmul/softmax.
@program("shared-dims")
def _() -> Export:
    class M(nn.Module):
        def forward(self, a, b):
            return torch.softmax(a @ b, dim=-1), a.shape[0] + b.shape[1]
    n = Dim("n", min=1, max=16)
    k = Dim("k", min=2, max=16)
    m = Dim("m")
    return Export(M(), (T(3, 4), T(4, 5)),
                  dynamic_shapes=({0: n, 1: k}, {0: k, 1: m}))


# unbacked-item: .item() with torch._check_is_size and torch._check ->
# _assert_scalar / sym_constrain_range_for_size nodes, unbacked u0 in
# range_constraints, data-dependent slice.
@program("unbacked-item")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, n):
            k = n.item()
            torch._check_is_size(k)
            torch._check(k <= 6)
            return x[:k] * 2
    return Export(M(), (T(8), torch.tensor(3)), probes=[
        ("scalar-range", (T(8), torch.tensor(7)), {}),
        ("scalar-range", (T(8), torch.tensor(-1)), {}),
    ])


# unbacked-nonzero: nonzero (data-dependent output size), masked_select,
# the unbacked size's runtime asserts, dynamic input dim as well.
@program("unbacked-nonzero")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x):
            idx = torch.nonzero(x > 1)
            return idx, torch.masked_select(x, x > 0).sum()
    return Export(M(), (T(6),), dynamic_shapes=({0: Dim("len", min=2, max=100)},))


# unbacked-compare: an .item() checked into a range by torch._check pairs,
# then used as a size (new_zeros) and compared with a backed size.
@program("unbacked-compare")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, n):
            k = n.item()
            torch._check(k >= 1)
            torch._check(k <= x.shape[0])
            return x.new_zeros(k) + 1, x[:k].sum()
    return Export(M(), (T(10), torch.tensor(4)),
                  dynamic_shapes=({0: Dim("len", min=4, max=40)}, None), probes=[
        ("scalar-range", (T(10), torch.tensor(0)), {}),
        ("scalar-range", (T(10), torch.tensor(11)), {}),
    ])


# multi-output: split, topk, max.dim, unbind, sort -> call_function nodes
# with several outputs and operator.getitem nodes (some outputs unused).
@program("multi-output")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x):
            a, b = torch.split(x, [2, 4], dim=1)
            values, indices = torch.topk(x, 3)
            mx, _argmax = x.max(dim=1)
            first, *_ = torch.unbind(x, 1)
            s = torch.sort(x, dim=1, descending=True).values
            return a + 1, b.sum(), values, indices, mx + first, s
    return Export(M(), (T(2, 6),))


# buffer-mutation: in-place buffer update (counter, running stat) in the
# default training IR: add_/copy_ in the graph, buffers_to_mutate empty;
# a non-persistent buffer (lifted into constants, not in state_dict).
@program("buffer-mutation")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))
            self.register_buffer("running", torch.zeros(3))
            self.register_buffer("scale", torch.full((3,), 2.0), persistent=False)

        def forward(self, x):
            self.count.add_(1)
            self.running.mul_(0.9).add_(x.mean(0) * 0.1)
            return x * self.scale + self.running
    return Export(M(), (T(2, 3),))


# buffer-mutation-decomposed: the same after run_decompositions():
# functional graph, buffers_to_mutate and BUFFER_MUTATION outputs.
@program("buffer-mutation-decomposed")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(1))
            self.register_buffer("running", torch.zeros(3))
            self.register_buffer("scale", torch.full((3,), 2.0), persistent=False)

        def forward(self, x):
            self.count.add_(1)
            self.running.mul_(0.9).add_(x.mean(0) * 0.1)
            return x * self.scale + self.running
    return Export(M(), (T(2, 3),), decompose=True)


# input-mutation: a user input mutated in place (x.add_, y[0] = ...) in the
# training IR, plus a mutated input that is also returned.
@program("input-mutation")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            x.add_(1)
            y[0] = 5.0
            return x * 2, y
    return Export(M(), (T(3), T(3)))


# input-mutation-decomposed: the same after run_decompositions():
# user_inputs_to_mutate, USER_INPUT_MUTATION outputs.
@program("input-mutation-decomposed")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            x.add_(1)
            y[0] = 5.0
            return x * 2, y
    return Export(M(), (T(3), T(3)), decompose=True)


# batchnorm-train: BatchNorm1d in training mode (running_mean/var and
# num_batches_tracked mutated, int64 buffer), decomposed (functional).
@program("batchnorm-train")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x):
            return self.bn(x)
    return Export(M().train(), (T(4, 3),), decompose=True)


# conv-bn-eval: Conv2d + BatchNorm2d in eval mode + pooling: parameters and
# persistent buffers read only.
@program("conv-bn-eval")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1)
            self.bn = nn.BatchNorm2d(3)

        def forward(self, x):
            return F.adaptive_avg_pool2d(torch.relu(self.bn(self.conv(x))), 1).flatten(1)
    return Export(M().eval(), (T(2, 2, 5, 5),),
                  dynamic_shapes=({0: Dim("batch", max=8), 2: Dim("h", min=3, max=32),
                                   3: Dim("w", min=3, max=32)},))


# lifted-constants: plain tensor attributes (not parameters or buffers) ->
# lifted tensor constants (c_ placeholders, inputs_to_lifted_tensor_constants),
# and a torch.tensor([...]) built in forward.
@program("lifted-constants")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = torch.tensor([1.0, 2.0, 3.0])
            self.mask = torch.tensor([True, False, True])

        def forward(self, x):
            return torch.where(self.mask, x * self.table, x) + torch.tensor([0.5, 0.25, 0.125])
    return Export(M(), (T(3),))


# nested-inputs: tuple, list and dict args, kwargs, a None input, int /
# float / bool / str inputs (constants in user_inputs), a default argument.
@program("nested-inputs")
def _() -> Export:
    class M(nn.Module):
        def forward(self, pair, items, table, n, scale, flag, mode, *, bias, extra=None,
                    offset=1):
            a, b = pair
            out = a + b + items[0] * items[1] + table["u"] - table["v"]
            if flag and mode == "add":
                out = out + n * scale
            if extra is not None:
                out = out + extra
            return out + bias + offset
    return Export(M(), ((T(2), T(2)), [T(2), T(2)], {"u": T(2), "v": T(2)}, 3, 0.5, True,
                        "add"), {"bias": T(2), "extra": None})


# pytree-types: a registered namedtuple and a registered dataclass as
# inputs (serialized_type_name in in_spec), the namedtuple also returned.
@program("pytree-types")
def _() -> Export:
    class M(nn.Module):
        def forward(self, p, pair):
            return Point(p.x + p.y, p.y * pair.scale), pair.first.sum()
    return Export(M(), (Point(T(2), T(2)), Pair(T(3), 2)))


# nested-outputs: outputs nested in dict / list / tuple, with None, int and
# float constants among them, and an input returned as is. (A str output
# exports and saves, but torch.export.load then fails: "Unable to
# deserialize output node Argument(as_string=ok)", so there is none.)
@program("nested-outputs")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x):
            return {"sum": x.sum(), "parts": [x + 1, (x * 2, None)], "k": 7,
                    "ratio": 0.25, "same": x}
    return Export(M(), (T(2, 2),))


# symint-output: SymInt outputs (x.shape[0], a derived size expression) and
# a dynamic int input (Dim.DYNAMIC on an int: a SymInt placeholder).
@program("symint-output")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, n: int):
            return x[:n] * 2, x.shape[0], x.shape[0] * 2 + n
    return Export(M(), (T(8), 3), dynamic_shapes=({0: Dim("len", min=4, max=64)}, Dim.DYNAMIC))


# int-input-specialized: an int input specialized to its example value
# (ConstantArgument in the signature; a different int fails the guard).
@program("int-input-specialized")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, repeat: int):
            return x.repeat(repeat)
    return Export(M(), (T(2), 3))


# cond: torch.cond on a data-dependent predicate, both branches as
# submodules (true_graph_0 / false_graph_0), dynamic input, one branch
# using a parameter.
@program("cond")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.tensor([0.5, -0.5, 2.0]))

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: x.sin() * self.w, lambda x: x.cos() - 1,
                              (x,))
    return Export(M(), (T(4, 3),), dynamic_shapes=({0: Dim("rows", max=32)},))


# cond-shape: torch.cond on a shape predicate (x.shape[0] > 4), nested cond.
@program("cond-shape")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            def inner_true(x, y):
                return torch.cond(y.sum() > 0, lambda x, y: x + y, lambda x, y: x - y, (x, y))

            return torch.cond(x.shape[0] > 4, inner_true, lambda x, y: x * y, (x, y))
    d = Dim("d", min=2, max=16)
    return Export(M(), (T(6), T(6)), dynamic_shapes=({0: d}, {0: d}))


# cond-unbacked: an unbacked symbol bound inside a cond branch (k.item() with
# torch._check bounds): the branch subgraph holds the runtime assertions, and
# add-inline-constraint-assertions after remove-runtime-assertions raises in
# the verifier (SpecViolationError: Node.meta ge is missing val field).
@program("cond-unbacked")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, k):
            def true_fn(x, k):
                n = k.item()
                torch._check(n >= 2)
                torch._check(n <= 16)
                return x * n
            return torch.cond(x.sum() > 0, true_fn, lambda x, k: x - 1, (x, k))
    return Export(M(), (T(2, 3), torch.tensor(3)))


# map: torch._higher_order_ops.map over the leading dim (body_graph_0,
# map_impl), with a closed-over extra argument.
@program("map")
def _() -> Export:
    from torch._higher_order_ops.map import map as hop_map

    class M(nn.Module):
        def forward(self, xs, y):
            return hop_map(lambda x, y: x * y + 1, xs, y)
    return Export(M(), (T(3, 2), T(2)))


# while-loop: torch._higher_order_ops.while_loop with a tensor counter
# (cond and body subgraphs, carried outputs).
@program("while-loop")
def _() -> Export:
    from torch._higher_order_ops.while_loop import while_loop

    class M(nn.Module):
        def forward(self, i, x):
            return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (i, x))
    return Export(M(), (torch.tensor(0), T(2)))


# no-grad-region: `with torch.no_grad()` inside forward ->
# wrap_with_set_grad_enabled higher-order op and a submod_ submodule.
@program("no-grad-region")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            with torch.no_grad():
                y = self.fc(x) + 1
            return y * 2
    return Export(M(), (T(1, 2),))


# submodules: nested submodules (module_call_graph with several entries),
# preserve_module_call_signature for two of them (in/out specs recorded),
# a submodule called twice (shared weights).
@program("submodules")
def _() -> Export:
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.norm = nn.LayerNorm(3)

        def forward(self, x, scale=1.0):
            return self.norm(self.fc(x)) * scale

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block()
            self.second = Block()

        def forward(self, x):
            return self.second(self.first(x), scale=0.5)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.head = nn.Linear(3, 1)

        def forward(self, x):
            h = self.encoder(x)
            return self.head(h), self.head(h * 2)
    return Export(M(), (T(2, 3),), preserve=("encoder", "encoder.second"))


# kwarg-only-ops: ops called with keyword-only and default arguments
# (sum dtype/keepdim, gelu approximate, clamp min only, full / arange with
# dtype, layer_norm eps, div rounding_mode, scatter reduce).
@program("kwarg-only-ops")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, idx):
            s = torch.sum(x, dim=1, keepdim=True, dtype=torch.float64)
            g = F.gelu(x, approximate="tanh")
            c = torch.clamp(x, min=0.5)
            f = torch.full((2, 3), 1.5, dtype=torch.float16)
            r = torch.arange(0, 6, 2, dtype=torch.int32)
            n = F.layer_norm(x, (3,), eps=1e-3)
            d = torch.div(x, 0.3, rounding_mode="floor")
            z = torch.zeros(2, 3).scatter_reduce(1, idx, x, reduce="amax", include_self=False)
            return s, g + c + n + d + z, f, r
    return Export(M(), (T(2, 3), torch.tensor([[0, 1, 1], [2, 2, 0]])))


# odd-names: parameters, buffers and a submodule with non-ASCII and
# non-identifier names (mangled placeholder names, targets kept verbatim).
@program("odd-names")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("π", torch.tensor([3.0, 1.0]))
            self.register_buffer("données", torch.ones(2), persistent=False)
            self.add_module("模块", nn.Linear(2, 2))
            self.register_parameter("w-1", nn.Parameter(torch.tensor([0.5, 0.25])))
            self.register_buffer("with space", torch.ones(2))

        def forward(self, x):
            return (getattr(self, "模块")(x) + getattr(self, "π") + getattr(self, "données")
                    + getattr(self, "w-1") * getattr(self, "with space"))
    return Export(M(), (T(2),))


# dtypes: bf16, float16, int8, uint8, bool, complex64, float64 and int64
# inputs and buffers, type promotion and casts (to, view_as_real).
@program("dtypes")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("q", torch.tensor([1, -2, 3], dtype=torch.int8))
            self.register_buffer("phase", torch.tensor([1 + 1j, 0.5j, 2], dtype=torch.complex64))
            self.register_buffer("h", torch.tensor([0.5, 1.5, 2.5], dtype=torch.float16))

        def forward(self, a, b, mask, c, u):
            x = a.float() * self.q + self.h
            y = torch.where(mask, x, b.to(torch.float32))
            z = torch.view_as_real(c * self.phase)
            return y.to(torch.bfloat16), z, (u.to(torch.int64) + 1), a.double().sum()
    return Export(M(), (T(3, dtype=torch.bfloat16), T(3, dtype=torch.int8),
                        T(3, dtype=torch.bool), T(3, dtype=torch.complex64, fill="zeros"),
                        T(3, dtype=torch.uint8)))


# strict-mode: the same kind of model exported with strict=True (TorchDynamo
# tracing), with a dynamic dim, a Python-side branch and an attribute read.
@program("strict-mode")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.mode = "tanh"

        def forward(self, x, y):
            h = self.fc(x)
            h = torch.tanh(h) if self.mode == "tanh" else h
            return h + y
    b = Dim("b", min=2, max=10)
    return Export(M(), (T(4, 3), T(4, 2)), dynamic_shapes=({0: b}, {0: b}), strict=True)


# strict-nested-inputs: strict=True with dict / list inputs and kwargs.
@program("strict-nested-inputs")
def _() -> Export:
    class M(nn.Module):
        def forward(self, d, xs, *, k):
            return d["a"] * xs[0] + xs[1] * k, [d["b"].sum()]
    return Export(M(), ({"a": T(2), "b": T(3)}, [T(2), T(2)]), {"k": T(2)}, strict=True)


# attention: embedding (int64 indices), scaled_dot_product_attention,
# transpose/view, dynamic sequence length, a causal mask buffer slice.
@program("attention")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.qkv = nn.Linear(4, 12)
            self.register_buffer("causal", torch.tril(torch.ones(16, 16, dtype=torch.bool)))

        def forward(self, tokens):
            b, t = tokens.shape
            h = self.emb(tokens)
            q, k, v = self.qkv(h).split(4, dim=-1)
            q, k, v = (z.view(b, t, 2, 2).transpose(1, 2) for z in (q, k, v))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=self.causal[:t, :t])
            return out.transpose(1, 2).reshape(b, t, 4)
    return Export(M(), (torch.tensor([[1, 2, 3, 4, 5]]),),
                  dynamic_shapes=({1: Dim("seq", min=2, max=15)},))


# shape-checks: torch._check on input sizes (x.shape[0] % 2, >= 4) over a
# derived dim 2*half, view/expand/permute with symbolic sizes, sym_size
# nodes, size arithmetic feeding a float (n / 2).
@program("shape-checks")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x):
            n = x.shape[0]
            torch._check(n >= 4)
            torch._check(n % 2 == 0)
            y = x.view(n // 2, 2, x.shape[1]).permute(2, 0, 1)
            return y.expand(2, *y.shape).contiguous(), x.mean() * (n / 2)
    # A plain Dim("n") is refused ("Constraints violated (n)"): export wants
    # the evenness spelled as a derived dim, n = 2*half.
    half = Dim("half", min=2, max=64)
    return Export(M(), (T(6, 3),), dynamic_shapes=({0: 2 * half},))


# large-mlp: the benchmark program: 40 residual blocks (Linear, LayerNorm,
# GELU, a sigmoid gate, a hand-written normalization with rsqrt, dropout
# in eval mode) at width 4, decomposed to core ATen: about 1000 graph
# nodes, 7 KB of weights, dynamic batch. Its stack traces, from_node and
# torch_fn metadata are dropped to keep the archive small.
@program("large-mlp")
def _() -> Export:
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.gate = nn.Linear(4, 4)
            self.norm = nn.LayerNorm(4)
            self.scale = nn.Parameter(torch.ones(4))

        def forward(self, x):
            h = self.norm(self.fc(x))
            h = F.gelu(h) * torch.sigmoid(self.gate(x))
            mu = h.mean(-1, keepdim=True)
            var = ((h - mu) ** 2).mean(-1, keepdim=True)
            h = (h - mu) * torch.rsqrt(var + 1e-5) * self.scale
            return x + F.dropout(h, 0.1, self.training)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*(Block() for _ in range(40)))
            self.out = nn.Linear(4, 1)

        def forward(self, x):
            return self.out(self.blocks(x))
    return Export(M().eval(), (T(2, 4),), dynamic_shapes=({0: Dim("batch", max=512)},),
                  decompose=True, keep_debug_meta=False)


# decoder-5k: the many-node benchmark program: a 50-layer decoder-only
# transformer from torch.nn and torch.nn.functional (token embedding, RMSNorm,
# fused QKV projection split into heads, rotary position embedding, causal
# scaled_dot_product_attention, a SiLU-gated MLP, an LM head) at width 8
# with 2 heads, dynamic batch and sequence length, decomposed to core ATen:
# 5,071 serialized nodes (5,400 in the FX graph) and 5.3 MB of program JSON,
# 40 KB of weights. Its stack traces, from_node and torch_fn metadata are
# dropped, as large-mlp's.
@program("decoder-5k")
def _() -> Export:
    class RMSNorm(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class Layer(nn.Module):
        def __init__(self, d: int, heads: int) -> None:
            super().__init__()
            self.heads = heads
            self.attn_norm = RMSNorm(d)
            self.mlp_norm = RMSNorm(d)
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.gate = nn.Linear(d, 2 * d, bias=False)
            self.up = nn.Linear(d, 2 * d, bias=False)
            self.down = nn.Linear(2 * d, d, bias=False)

        def forward(self, x, cos, sin):
            b, t, d = x.shape
            q, k, v = self.qkv(self.attn_norm(x)).split(d, -1)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for z in (q, k, v))

            def rotate(z):
                z1, z2 = z.chunk(2, -1)
                return z * cos + torch.cat((-z2, z1), -1) * sin

            a = F.scaled_dot_product_attention(rotate(q), rotate(k), v, is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
            h = self.mlp_norm(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class M(nn.Module):
        def __init__(self, layers: int = 50, d: int = 8, heads: int = 2, vocab: int = 16) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
            self.norm = RMSNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            half = d // heads // 2
            inv = 1.0 / (10000 ** (torch.arange(0, 2 * half, 2, dtype=torch.float32) / (2 * half)))
            self.register_buffer("inv_freq", inv, persistent=False)

        def forward(self, ids):
            freqs = torch.outer(torch.arange(ids.shape[1], dtype=torch.float32), self.inv_freq)
            emb = torch.cat((freqs, freqs), -1)
            cos, sin = emb.cos(), emb.sin()
            x = self.embed(ids)
            for layer in self.layers:
                x = layer(x, cos, sin)
            return self.head(self.norm(x))

    ids = torch.arange(12).reshape(2, 6) % 16
    return Export(M().eval(), (ids,),
                  dynamic_shapes=({0: Dim("batch", max=64), 1: Dim("seq", min=2, max=128)},),
                  decompose=True, keep_debug_meta=False)


# pass-targets: a decomposed program edited by hand so that
# remove-unnecessary-copy has work to do: the buffer mutation is written
# back through aten.copy.default (run_decompositions already runs that pass,
# so exported programs never keep such a copy). The edit is graph surgery on
# the ExportedProgram before saving, meta["val"] copied so the verifier and
# the serializer accept it. (Duplicate getitem nodes, the work of
# common-getitem-elimination, cannot be saved: the schema has no getitem
# nodes, and the reader makes one per output of a multi-output node.)
@program("pass-targets")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("state", torch.zeros(2))

        def forward(self, x):
            a, b = torch.split(x, 2)
            self.state.copy_(a * 2)
            return a + b

    def edit(ep: Any) -> None:
        graph = ep.graph
        out = graph.output_node()
        sig = ep.graph_signature
        mutated = sig.buffers_to_mutate
        placeholders = {n.name: n for n in graph.nodes if n.op == "placeholder"}
        buffer_inputs = {target: name for name, target in sig.inputs_to_buffers.items()}
        outs = list(out.args[0])
        for i, value in enumerate(outs):
            if isinstance(value, torch.fx.Node) and value.name in mutated:
                target = mutated[value.name]
                with graph.inserting_before(out):
                    copy = graph.call_function(torch.ops.aten.copy.default,
                                               (placeholders[buffer_inputs[target]], value))
                copy.meta = dict(value.meta)
                outs[i] = copy
                sig.output_specs[i].arg.name = copy.name
        out.args = (tuple(outs),)
        graph.lint()
        ep.graph_module.recompile()
    return Export(M(), (T(4),), decompose=True, edit=edit)


# scalar-inputs: every non-tensor input kind export takes: a float and a
# bool (specialized to their example values), a str (a constant of the
# signature), None, and an int made dynamic; sym_max / sym_min and
# sym_float of a size in the graph.
@program("scalar-inputs")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, n, alpha, flag, mode, nothing):
            k = torch.sym_max(x.shape[0], n)
            y = x * alpha if flag else x
            y = torch.relu(y) if mode == "relu" else y
            return y.sum() * k + torch.sym_float(torch.sym_min(x.shape[0], 8)), nothing
    return Export(M(), (T(4, 2), 3, 0.5, True, "relu", None),
                  dynamic_shapes=({0: Dim("rows", min=2, max=32)}, Dim.DYNAMIC, None, None, None,
                                  None))


# lstm: nn.LSTM (a multi-output aten op, getitem of getitem, flat weights)
# with an embedding, Dim.AUTO on both input dims.
@program("lstm")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(8, 3)
            self.rnn = nn.LSTM(3, 2, batch_first=True)

        def forward(self, tokens):
            out, (h, c) = self.rnn(self.emb(tokens))
            return out, h + c
    # The LSTM kernel specializes the sequence length: Dim.AUTO keeps
    # whatever export can keep dynamic (the batch).
    return Export(M().eval(), (torch.tensor([[1, 2, 3, 4], [4, 3, 2, 1]]),),
                  dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))


# core-aten: a small conv net run through run_decompositions() to core
# ATen: convolution, max_pool2d_with_indices, native_layer_norm, softmax,
# upsample, avg_pool, cat, index_select, where, clamp, cumsum, topk,
# argmax: a broad op vocabulary with multi-output ops and int lists.
@program("core-aten")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1, stride=1, dilation=1, groups=1)
            self.norm = nn.LayerNorm([3, 4, 4])

        def forward(self, x, idx):
            h = self.conv(x)
            h = F.max_pool2d(h, 2, ceil_mode=True)
            h = F.interpolate(h, scale_factor=2.0, mode="nearest")
            h = self.norm(h)
            s = torch.softmax(h.flatten(1), -1)
            v, i = torch.topk(s, 3, dim=-1)
            c = torch.cat([v, torch.index_select(s, 1, idx)], dim=1)
            c = torch.where(c > 0.1, c, torch.zeros_like(c)).clamp(min=0.0, max=0.9)
            return c.cumsum(-1), i, torch.argmax(s, dim=-1, keepdim=True), F.avg_pool2d(h, 2)
    return Export(M().eval(), (T(1, 2, 4, 4), torch.tensor([0, 5])), decompose=True,
                  keep_debug_meta=False)


# complex: complex64 inputs and outputs, view_as_real / view_as_complex,
# abs and angle, a complex buffer.
@program("complex")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("rot", torch.tensor([1j, -1j], dtype=torch.complex64))

        def forward(self, z):
            w = z * self.rot
            r = torch.view_as_real(w)
            return torch.view_as_complex(r * 2), w.abs(), w.angle()
    # Probe tensors are written as JSON: a complex example input is zeros.
    return Export(M(), (torch.zeros(2, dtype=torch.complex64),))


# autocast: an autocast region (wrap_with_autocast higher-order op in the
# training IR). (A set_grad_enabled region inside it cannot be saved:
# the verifier finds no meta["val"] on wrap_with_set_grad_enabled.)
@program("autocast")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                h = self.fc(x)
            return h.float() * 2 + 1
    return Export(M(), (T(2, 4),))


# scan: the scan higher-order op (a cumulative product written as a loop
# body), with its combine graph as a submodule.
@program("scan")
def _() -> Export:
    from torch._higher_order_ops.scan import scan

    class M(nn.Module):
        def forward(self, init, xs):
            def combine(carry, x):
                nxt = carry * x + 1
                return nxt, nxt.clone()
            return scan(combine, init, xs)
    return Export(M(), (T(3), T(4, 3)))


# effects: an effectful op (aten._print) threads an effect token through
# the graph: input_tokens / output_tokens in the signature, with_effects.
@program("effects")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x):
            torch.ops.aten._print("hello")
            return x + 1
    return Export(M(), (T(2),))


# effects-tokens: the effects program after run_decompositions(): the token
# is a graph input (InputKind.TOKEN) that ep.module() drops
# (_remove_effect_tokens) before building its guards; a dim shared by both
# inputs with a range.
@program("effects-tokens")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            torch.ops.aten._print("a")
            z = x + y
            torch.ops.aten._print("b")
            return z
    n = Dim("n", min=2, max=6)
    return Export(M(), (T(3, 2), T(3, 2)), dynamic_shapes=({0: n}, {0: n}), decompose=True,
                  probes=[("shared-dim", (T(3, 2), T(4, 2)), {})])


# runtime-asserts: torch._check on input dims and an int input (guards_code:
# checked by the _guards_fn, before any kernel) and on an .item() value bound
# by torch._check_is_size (sym_constrain_range_for_size) and related to an
# input dim (_assert_scalar nodes after sym_size / item in the graph: raised
# by a kernel, pre_kernel false).
@program("runtime-asserts")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y, n):
            torch._check(x.shape[0] % 2 == 0)
            torch._check(n >= 2)
            torch._check(n <= x.shape[0])
            k = y.item()
            torch._check_is_size(k)
            torch._check(k >= 2)
            torch._check(k <= x.shape[0])
            return x[:k] * n
    return Export(M(), (T(6), torch.tensor(3), 3),
                  dynamic_shapes=({0: Dim.DYNAMIC}, None, Dim.DYNAMIC), probes=[
        ("odd-dim", (T(7), torch.tensor(3), 3), {}),
        ("scalar-low", (T(6), torch.tensor(3), 1), {}),
        ("scalar-above-dim", (T(6), torch.tensor(3), 8), {}),
        ("item-low", (T(6), torch.tensor(1), 3), {}),
        ("item-negative", (T(6), torch.tensor(-1), 3), {}),
        ("item-above-dim", (T(6), torch.tensor(9), 3), {}),
    ])


# derived-dims-hidden: three derived dims of one root that no input has as
# a dim of its own: the first solves the root, the others get the
# substituted equation printed with rationals, checked in floats by the
# _guards_fn ((-5/3) + (2/3)*a == b fails for d = 3, a valid input).
@program("derived-dims-hidden")
def _() -> Export:
    class M(nn.Module):
        def forward(self, a, b, c):
            return a.sum() + b.sum() + c.sum()
    d = Dim("d", min=3, max=30)
    return Export(M(), (T(22), T(13), T(42)),
                  dynamic_shapes=({0: 3 * d + 1}, {0: 2 * d - 1}, {0: 6 * d}), probes=[
        ("float-rounding", (T(10), T(5), T(18)), {}),
        ("derived-dim", (T(16), T(9), T(31)), {}),
    ])


# dict-reordered: dict inputs, positional and keyword, called with their
# keys in another order than at export (eq_spec accepts it; the forward
# binds the placeholders in the in_spec's key order).
@program("dict-reordered")
def _() -> Export:
    class M(nn.Module):
        def forward(self, d, *, e):
            return d["a"] + d["b"].sum() + e["p"].sum() + e["q"]
    return Export(M(), ({"a": T(2), "b": T(3)},), {"e": {"p": T(4), "q": T(2)}}, probes=[
        ("reordered", ({"b": T(3), "a": T(2)},), {"e": {"q": T(2), "p": T(4)}}),
        ("reordered-static-dim", ({"b": T(5), "a": T(2)},), {"e": {"p": T(4), "q": T(2)}}),
        ("reordered-static-dim", ({"a": T(2), "b": T(3)},), {"e": {"q": T(2), "p": T(5)}}),
    ])


# no-inputs: a forward without parameters (forward_arg_names is null, no
# placeholder, so no _guards_fn: only _check_inputs_match).
@program("no-inputs")
def _() -> Export:
    class M(nn.Module):
        def forward(self):
            return torch.zeros(3)
    return Export(M(), ())


# vmap-jvp: torch.vmap and torch.func.jvp in the training IR, which keeps
# them as calls of the predispatch wrapper functions
# (torch._functorch.predispatch._add_batch_dim, _make_dual, ...) that the
# verifier allows; the loader builds them as plain Python callables, and
# renames the ones returning None `NAME_unused`.
@program("vmap-jvp")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, t):
            y = torch.vmap(torch.sin)(x)
            out, tangent = torch.func.jvp(torch.cos, (x,), (t,))
            return y + out, tangent
    return Export(M(), (T(3, 4), T(3, 4)), dynamic_shapes=({0: Dim("n")}, {0: Dim("n")}))


# tensor-subclass: a parameter and a buffer that are tensor subclasses
# (TwoTensor, from torch.testing): torch.export.save pickles them
# (`use_pickle: true` in the weights config, with their tensor_meta), and
# torch.export.load reads them back with torch.load.
@program("tensor-subclass")
def _() -> Export:
    from torch.testing._internal.two_tensor import TwoTensor

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(TwoTensor(T(3), T(3) * 2))
            self.register_buffer("b", TwoTensor(torch.ones(3), torch.zeros(3)))

        def forward(self, x):
            return x * self.w + self.b
    return Export(M(), (T(3),))


# custom-op: a user op defined with torch.library.custom_op in
# oracle/zoo_types.py (imported by every process that loads the zoo), with a
# mutating variant: auto_functionalized in the graph.
@program("custom-op")
def _() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            z = torch.ops.torchspec.scale(x, 2.5)
            torch.ops.torchspec.add_into(y, z)
            return z, y
    return Export(M(), (T(3), T(3)), dynamic_shapes=({0: Dim("n")}, {0: Dim("n")}))


# custom-op-unregistered: a mutating custom op defined only in the exporting
# process (not in zoo_types.py, so no loading process has it): after
# run_decompositions() it is an OpOverload *argument* of
# auto_functionalized_v2, which the loader's deserialize_operator leaves as
# the string `torch.ops.zoo_local.bump.default` (printed as is).
@program("custom-op-unregistered")
def _() -> Export:
    @torch.library.custom_op("zoo_local::bump", mutates_args=("x",))
    def bump(x: torch.Tensor, y: torch.Tensor) -> None:
        x.add_(y)

    class M(nn.Module):
        def forward(self, x, y):
            bump(x, y)
            return x + 1
    return Export(M(), (T(3), T(3)), decompose=True)


# legacy-format: the archive layout torch.export.save wrote up to 2.7 (a
# zip with `version`, `serialized_exported_program.json` and pickled state
# dict, constants and example inputs at its root), which torch.export.load
# still reads through its backward-compatibility path. Written here with
# the same serializer and entries as 2.7's save.
def _save_legacy(ep: Any, path: str) -> None:
    import zipfile

    from torch._export.serde.schema import SCHEMA_VERSION
    from torch._export.serde.serialize import serialize
    artifact = serialize(ep)
    entries = [
        ("serialized_exported_program.json", artifact.exported_program),
        ("serialized_state_dict.pt", artifact.state_dict),
        ("serialized_constants.pt", artifact.constants),
        ("serialized_example_inputs.pt", artifact.example_inputs),
        ("version", ".".join(map(str, SCHEMA_VERSION))),
    ]
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries:
            # A fixed timestamp: the same bytes on every run.
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)


@program("legacy-format")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.register_buffer("shift", torch.ones(2))

        def forward(self, x):
            return self.fc(x) + self.shift
    return Export(M(), (T(2, 3),), dynamic_shapes=({0: Dim("b", max=8)},), save=_save_legacy)


# two-models: a pt2 archive with two programs (pt2_archive's package_pt2),
# `other` first: torch.export.load returns `models/model.json`'s.
def _save_two(ep: Any, path: str) -> None:
    from torch.export.pt2_archive._package import package_pt2

    class Other(nn.Module):
        def forward(self, x):
            return x * 2
    other = torch.export.export(Other(), (T(3),))
    package_pt2(path, exported_programs={"other": other, "model": ep})


@program("two-models")
def _() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return torch.relu(self.fc(x))
    return Export(M(), (T(1, 2),), save=_save_two)


# guards-*: programs whose `guards_code` (the tracer's guard texts, which
# ep.module() compiles into its `_guards_fn`) is what a hand-edited or
# fuzzed file may hold: a string left open, a bare `L` that no placeholder
# path replaces, 200,000 nested parentheses (CPython's tokenizer stops at
# 200), a double quote that breaks the generated `torch._assert(..., "...")`
# line, an unclosed parenthesis, and a unary chain deep enough that
# `ast.parse` raises RecursionError (which _convert_guards_code_to_fn
# catches for the message only).
_HOSTILE_GUARDS = {
    "open-string": ["L['x'].size()[0] == 'b"],
    "bare-l": ["L['y'].size()[0] == 2"],
    "deep-parens": ["(" * 200000 + "L['x'].size()[0]" + ")" * 200000],
    "message-quote": ["L['x'].size()[0] != len(\"it's\")"],
    "unclosed": ["(L['x'].size()[0] == 6"],
    "deep-unary": ["-" * 2000 + "L['x'].size()[0] != 0"],
}


def _hostile_guards(code: list[str]) -> Callable[[], Export]:
    def make() -> Export:
        class M(nn.Module):
            def forward(self, x):
                return x * 2

        def edit(ep: Any) -> None:
            ep._guards_code = list(code)
        return Export(M(), (T(6, 3),), dynamic_shapes=({0: Dim("n", min=4, max=64)},),
                      edit=edit)
    return make


for _name, _code in _HOSTILE_GUARDS.items():
    program(f"guards-{_name}")(_hostile_guards(_code))


# spec-*: programs exported with a ShapesSpec (torch.fx.experimental.dynamic_spec,
# issue 34 item 3). Every dynamic dim and int gets an unbacked symbol; bounds,
# repeated vars, derived dims and assumptions become range constraints (the
# `Guard failed: ...` of ep.module()'s _guards_fn) and `_assert_scalar` nodes
# at the top of the graph (`RuntimeError: Runtime assertion failed for
# expression ... on node '...'`). Bodies add no shape constraint of their own.
# Each entry's extra probes hit: a dim below min, above max, an assumption
# violated, a derived dim off by one, a static dim wrong, an int out of range.
def _spec_mod():
    from torch.fx.experimental import dynamic_spec as ds
    return ds


class _SumTwo(nn.Module):
    def forward(self, x, y):
        return x.sum(0) + y.sum(0)


class _SumAll(nn.Module):
    def forward(self, x, y):
        return x.sum() + y.sum()


# spec-assume-even: ShapeVar a in [2, 64] on x, y as 2*a+1, assumption
# a % 2 == 0 (the issue's example; non-strict).
@program("spec-assume-even")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=64)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 3]),
                                        "y": ds.TensorSpec([a * 2 + 1, 3])}),
                         assumptions=[a % 2 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(_SumTwo(), (T(4, 3), T(9, 3)), dynamic_shapes=spec, probes=[
        ("below-min", (z(0, 3), z(1, 3)), {}),
        ("below-min", (z(1, 3), z(3, 3)), {}),
        ("assumption", (z(3, 3), z(7, 3)), {}),
        ("derived-off", (z(4, 3), z(10, 3)), {}),
        ("derived-off", (z(4, 3), z(8, 3)), {}),
        ("above-max", (z(66, 3), z(133, 3)), {}),
        ("static-dim", (z(4, 2), z(9, 3)), {}),
        ("static-dim", (z(4, 3), z(9, 4)), {}),
        ("ok", (z(2, 3), z(5, 3)), {}),
        ("ok", (z(64, 3), z(129, 3)), {}),
    ])


# spec-assume-even-strict: the same spec through strict export.
@program("spec-assume-even-strict")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=64)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 3]),
                                        "y": ds.TensorSpec([a * 2 + 1, 3])}),
                         assumptions=[a % 2 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(_SumTwo(), (T(4, 3), T(9, 3)), dynamic_shapes=spec, strict=True, probes=[
        ("below-min", (z(1, 3), z(3, 3)), {}),
        ("assumption", (z(5, 3), z(11, 3)), {}),
        ("derived-off", (z(4, 3), z(10, 3)), {}),
        ("above-max", (z(66, 3), z(133, 3)), {}),
        ("ok", (z(6, 3), z(13, 3)), {}),
    ])


# spec-double: y as 2*a with a in [3, 32] (min > 2: below min is a guard).
@program("spec-double")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=3, max=32)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 2]),
                                        "y": ds.TensorSpec([a * 2, 2])}))
    z = lambda *s: torch.zeros(s)
    return Export(_SumTwo(), (T(5, 2), T(10, 2)), dynamic_shapes=spec, probes=[
        ("below-min", (z(2, 2), z(4, 2)), {}),
        ("derived-off", (z(5, 2), z(11, 2)), {}),
        ("derived-off", (z(5, 2), z(9, 2)), {}),
        ("above-max", (z(33, 2), z(66, 2)), {}),
        ("ok", (z(3, 2), z(6, 2)), {}),
    ])


# spec-derived-first: the derived dim (2*a) on the first input, its var on
# the second; strict.
@program("spec-derived-first")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=1, max=16)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a * 2, 3]),
                                        "y": ds.TensorSpec([a, 3])}))
    z = lambda *s: torch.zeros(s)
    return Export(_SumTwo(), (T(6, 3), T(3, 3)), dynamic_shapes=spec, strict=True, probes=[
        ("below-min", (z(0, 3), z(0, 3)), {}),
        ("derived-off", (z(7, 3), z(3, 3)), {}),
        ("derived-off", (z(6, 3), z(4, 3)), {}),
        ("above-max", (z(34, 3), z(17, 3)), {}),
        ("ok", (z(2, 3), z(1, 3)), {}),
    ])


# spec-floordiv: y as a // 2 with the assumption a % 2 == 0.
@program("spec-floordiv")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=100)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 4]),
                                        "y": ds.TensorSpec([a // 2, 4])}),
                         assumptions=[a % 2 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(_SumTwo(), (T(8, 4), T(4, 4)), dynamic_shapes=spec, probes=[
        ("below-min", (z(1, 4), z(0, 4)), {}),
        ("assumption", (z(9, 4), z(4, 4)), {}),
        ("derived-off", (z(8, 4), z(5, 4)), {}),
        ("derived-off", (z(8, 4), z(3, 4)), {}),
        ("above-max", (z(102, 4), z(51, 4)), {}),
        ("ok", (z(100, 4), z(50, 4)), {}),
    ])


# spec-repeated: vars a and b repeated across inputs (x [a, b], y [b, a])
# with the assumption b > a.
@program("spec-repeated")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=1, max=8)
    b = ds.ShapeVar("b", min=2, max=12)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, b]),
                                        "y": ds.TensorSpec([b, a])}),
                         assumptions=[b > a])
    z = lambda *s: torch.zeros(s)
    return Export(_SumAll(), (T(2, 5), T(5, 2)), dynamic_shapes=spec, probes=[
        ("repeat-off", (z(2, 5), z(5, 3)), {}),
        ("repeat-off", (z(2, 5), z(4, 2)), {}),
        ("assumption", (z(5, 5), z(5, 5)), {}),
        ("assumption", (z(6, 4), z(4, 6)), {}),
        ("below-min", (z(0, 5), z(5, 0)), {}),
        ("below-min", (z(1, 1), z(1, 1)), {}),
        ("above-max", (z(9, 10), z(10, 9)), {}),
        ("above-max", (z(2, 13), z(13, 2)), {}),
        ("ok", (z(1, 2), z(2, 1)), {}),
        ("ok", (z(8, 12), z(12, 8)), {}),
    ])


class _ScaleByInt(nn.Module):
    def forward(self, x, n):
        return x.sum(0) * n


# spec-intvar: an int input with IntVar n in [1, 10] beside x [a, 3]
# (non-strict).
@program("spec-intvar")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=32)
    n = ds.IntVar("n", min=1, max=10)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 3]), "n": n}))
    z = lambda *s: torch.zeros(s)
    return Export(_ScaleByInt(), (T(4, 3), 3), dynamic_shapes=spec, probes=[
        ("int-below-min", (z(4, 3), 0), {}),
        ("int-below-min", (z(4, 3), -1), {}),
        ("int-above-max", (z(4, 3), 11), {}),
        ("below-min", (z(1, 3), 3), {}),
        ("static-dim", (z(4, 4), 3), {}),
        ("ok", (z(2, 3), 1), {}),
        ("ok", (z(32, 3), 10), {}),
    ])


# spec-intvar-strict: the same spec through strict export.
@program("spec-intvar-strict")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=32)
    n = ds.IntVar("n", min=1, max=10)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 3]), "n": n}))
    z = lambda *s: torch.zeros(s)
    return Export(_ScaleByInt(), (T(4, 3), 3), dynamic_shapes=spec, strict=True, probes=[
        ("int-below-min", (z(4, 3), 0), {}),
        ("int-above-max", (z(4, 3), 11), {}),
        ("below-min", (z(1, 3), 3), {}),
        ("ok", (z(2, 3), 10), {}),
    ])


# spec-intvar-neg: IntVar n with min=-5 and no max on an int input -3
# (non-strict keeps [-5, int_oo]), an assumption n < a.
@program("spec-intvar-neg")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=1, max=16)
    n = ds.IntVar("n", min=-5)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 2]), "n": n}),
                         assumptions=[n < a])
    z = lambda *s: torch.zeros(s)
    return Export(_ScaleByInt(), (T(3, 2), -3), dynamic_shapes=spec, probes=[
        ("int-below-min", (z(3, 2), -6), {}),
        ("assumption", (z(3, 2), 3), {}),
        ("assumption", (z(3, 2), 4), {}),
        ("ok", (z(3, 2), -5), {}),
        ("ok", (z(16, 2), 15), {}),
        ("below-min", (z(0, 2), -5), {}),
    ])


class _Sum3(nn.Module):
    def forward(self, x):
        return x.sum(1)


# spec-static: a spec with static dims (ints) beside one ShapeVar without a
# max, assumption a % 3 == 0.
@program("spec-static")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=0)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([2, a, 5])}),
                         assumptions=[a % 3 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(_Sum3(), (T(2, 6, 5),), dynamic_shapes=spec, probes=[
        ("static-dim", (z(3, 6, 5),), {}),
        ("static-dim", (z(2, 6, 4),), {}),
        ("assumption", (z(2, 7, 5),), {}),
        ("assumption", (z(2, 1, 5),), {}),
        ("ok", (z(2, 0, 5),), {}),
        ("ok", (z(2, 300, 5),), {}),
    ])


class _KwSum(nn.Module):
    def forward(self, x, *, y):
        return x.sum(0) + y.sum(0)


# spec-kwarg: a keyword-only input in the spec; y as a + 1, assumption
# a % 4 == 0; a strict export.
@program("spec-kwarg")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=4, max=40)
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 2]),
                                        "y": ds.TensorSpec([a + 1, 2])}),
                         assumptions=[a % 4 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(_KwSum(), (T(8, 2),), {"y": T(9, 2)}, dynamic_shapes=spec, strict=True,
                  probes=[
                      ("assumption", (z(6, 2),), {"y": z(7, 2)}),
                      ("derived-off", (z(8, 2),), {"y": z(8, 2)}),
                      ("below-min", (z(3, 2),), {"y": z(4, 2)}),
                      ("above-max", (z(44, 2),), {"y": z(45, 2)}),
                      ("ok", (z(40, 2),), {"y": z(41, 2)}),
                  ])


# spec-two-vars: two vars, y as 3*a - 1, w as b, assumptions b > a and b % 2 == 0 (non-strict).
@program("spec-two-vars")
def _() -> Export:
    ds = _spec_mod()
    a = ds.ShapeVar("a", min=2, max=20)
    b = ds.ShapeVar("b", min=3, max=50)

    class M(nn.Module):
        def forward(self, x, y, w):
            return x.sum() + y.sum() + w.sum()
    spec = ds.ShapesSpec(ds.ParamsSpec({"x": ds.TensorSpec([a, 2]),
                                        "y": ds.TensorSpec([3 * a - 1]),
                                        "w": ds.TensorSpec([b, 2])}),
                         assumptions=[b > a, b % 2 == 0])
    z = lambda *s: torch.zeros(s)
    return Export(M(), (T(3, 2), T(8), T(4, 2)), dynamic_shapes=spec, probes=[
        ("derived-off", (z(3, 2), z(9), z(4, 2)), {}),
        ("assumption", (z(3, 2), z(8), z(3, 2)), {}),
        ("assumption", (z(3, 2), z(8), z(5, 2)), {}),
        ("below-min", (z(1, 2), z(2), z(4, 2)), {}),
        ("below-min", (z(2, 2), z(5), z(2, 2)), {}),
        ("above-max", (z(3, 2), z(8), z(52, 2)), {}),
        ("ok", (z(2, 2), z(5), z(4, 2)), {}),
    ])


def main(argv: list[str]) -> int:
    ZOO.extend(zoo_nn.entries() + plans.entries(OUT_DIR))  # oracle/zoo_nn.py: no line here moves
    wanted = set(argv)
    unknown = wanted - {e.name for e in ZOO}
    if unknown:
        print(f"zoo.py: unknown program(s) {sorted(unknown)}", file=sys.stderr)
        return 2
    os.makedirs(OUT_DIR, exist_ok=True)
    for entry in ZOO:
        if wanted and entry.name not in wanted:
            continue
        print(f"export {entry.name}", file=sys.stderr)
        spec, ep = export_entry(entry)
        path = os.path.join(OUT_DIR, entry.name + ".pt2")
        if spec.save is not None:
            spec.save(ep, path)
        else:
            torch.export.save(ep, path)
        loaded = torch.export.load(path)
        write_probes(entry.name, probes_for(spec, loaded),
                     os.path.join(OUT_DIR, entry.name + ".probes.jsonl"))
    # What a process loading the zoo has registered (oracle/zoo_types.py),
    # read from a fresh process: the reference loads the zoo with it.
    import subprocess
    with open(os.path.join(OUT_DIR, "registrations.json"), "wb") as f:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__),
                                                     "registrations.py")],
                       stdout=f, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
