"""Zoo programs of the shapes users export from torch.nn (issue 37).

Registered by ``oracle/zoo.py`` (its ``main`` adds ``entries()``): a new
module, so that no line of zoo.py moves and every existing archive, whose
stack traces name zoo.py line numbers, re-exports byte for byte. Same
conventions as zoo.py: tiny widths, fixed seeds, ``T`` inputs; the comment
above each entry says what it covers.
"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch.export import Dim

from zoo_models import Entry, Export, T

A = Dim.AUTO


def z(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.zeros(shape, dtype=dtype)


# nn-mha: nn.MultiheadAttention (embed 8, 2 heads, batch first) with query
# and key/value of different lengths, batch and both lengths dynamic
# (Dim.AUTO): guards_code holds torch.sym_max, torch.sym_min, //, % and an
# `or` of them over the batch sizes, as real attention exports do.
def _mha() -> Export:
    m = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    q, kv = T(2, 5, 8), T(2, 6, 8)
    ds = ({0: A, 1: A}, {0: A, 1: A}, {0: A, 1: A})
    return Export(m, (q, kv, kv), dynamic_shapes=ds, probes=[
        ("ok", (z(3, 7, 8), z(3, 4, 8), z(3, 4, 8)), {}),
        ("ok", (z(2, 1, 8), z(2, 1, 8), z(2, 1, 8)), {}),
        ("batch-one", (z(1, 5, 8), z(1, 6, 8), z(1, 6, 8)), {}),
        ("batch-zero", (z(0, 5, 8), z(0, 6, 8), z(0, 6, 8)), {}),
        ("batch-mismatch", (z(2, 5, 8), z(4, 6, 8), z(4, 6, 8)), {}),
        ("batch-mismatch", (z(4, 5, 8), z(2, 6, 8), z(2, 6, 8)), {}),
        ("batch-mismatch", (z(3, 5, 8), z(2, 6, 8), z(2, 6, 8)), {}),
        ("batch-mismatch", (z(2, 5, 8), z(3, 6, 8), z(3, 6, 8)), {}),
        ("batch-mismatch", (z(2, 5, 8), z(2, 6, 8), z(3, 6, 8)), {}),
        ("kv-length-mismatch", (z(2, 5, 8), z(2, 6, 8), z(2, 7, 8)), {}),
        ("embed-off", (z(2, 5, 9), z(2, 6, 8), z(2, 6, 8)), {}),
    ])


# nn-gru: nn.GRU (input 3, hidden 4, 2 layers, batch first) with an initial
# hidden state, batch and sequence dynamic (Dim.AUTO).
def _gru() -> Export:
    torch.manual_seed(0)
    m = nn.GRU(3, 4, num_layers=2, batch_first=True).eval()
    return Export(m, (T(2, 5, 3), T(2, 2, 4)),
                  dynamic_shapes=({0: A, 1: A}, {0: A, 1: A, 2: A}), probes=[
        ("ok", (z(3, 7, 3), z(2, 3, 4)), {}),
        ("ok", (z(1, 1, 3), z(2, 1, 4)), {}),
        ("batch-mismatch", (z(3, 5, 3), z(2, 2, 4)), {}),
        ("layers-off", (z(2, 5, 3), z(3, 2, 4)), {}),
        ("hidden-off", (z(2, 5, 3), z(2, 2, 5)), {}),
        ("seq-zero", (z(2, 0, 3), z(2, 2, 4)), {}),
    ])


# nn-lstm: nn.LSTM (input 3, hidden 4, projection 2, bidirectional) with
# its (h0, c0) tuple input, batch and sequence dynamic (Dim.AUTO).
def _lstm() -> Export:
    torch.manual_seed(0)
    m = nn.LSTM(3, 4, proj_size=2, bidirectional=True).eval()
    x, h0, c0 = T(5, 2, 3), T(2, 2, 2), T(2, 2, 4)
    return Export(m, (x, (h0, c0)),
                  dynamic_shapes=({0: A, 1: A}, ({1: A}, {1: A})), probes=[
        ("ok", (z(7, 3, 3), (z(2, 3, 2), z(2, 3, 4))), {}),
        ("ok", (z(1, 1, 3), (z(2, 1, 2), z(2, 1, 4))), {}),
        ("batch-mismatch", (z(5, 3, 3), (z(2, 2, 2), z(2, 2, 4))), {}),
        ("batch-mismatch", (z(5, 2, 3), (z(2, 2, 2), z(2, 3, 4))), {}),
        ("proj-off", (z(5, 2, 3), (z(2, 2, 4), z(2, 2, 4))), {}),
        ("state-not-tuple", (z(5, 2, 3), [z(2, 2, 2), z(2, 2, 4)]), {}),
    ])


# nn-nonzero: nonzero of a dynamic 2-D input (an unbacked row count u0),
# the unbacked size checked against the input's numel and used to build
# the output (new_ones(u0), index_select).
def _nonzero() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor([0.5, 2.0, -1.0]))

        def forward(self, x):
            idx = torch.nonzero(x > 1)
            n = idx.shape[0]
            torch._check(n <= x.shape[0] * x.shape[1])
            rows = x.index_select(0, idx[:, 0])
            return rows * self.scale, x.new_ones(n).sum() + idx.sum()
    return Export(M(), (T(4, 3),), dynamic_shapes=({0: A},), probes=[
        ("ok", (z(9, 3),), {}),
        ("ok", (z(1, 3),), {}),
        ("static-dim", (z(4, 2),), {}),
        ("empty", (z(0, 3),), {}),
    ])


# nn-cond-nested: a cond whose true branch holds another cond (data
# predicates at both levels, a shape predicate on the batch inside), a
# parameter used in the inner branch, batch and width dynamic (Dim.AUTO).
def _cond_nested() -> Export:
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.tensor([1.5, -0.5, 2.0]))

        def forward(self, x, y):
            def inner_true(x, y):
                return torch.cond(x.shape[0] > 3,
                                  lambda x, y: x * self.w + y,
                                  lambda x, y: x - y * self.w, (x, y))

            def inner_false(x, y):
                return torch.cond(y.sum() > 0, lambda x, y: x.sin() + y,
                                  lambda x, y: x.cos() - y, (x, y))

            return torch.cond(x.sum() > 0, inner_true, inner_false, (x, y))
    return Export(M(), (T(4, 3), T(4, 3)), dynamic_shapes=({0: A}, {0: A}), probes=[
        ("ok", (z(2, 3), z(2, 3)), {}),
        ("ok", (z(6, 3), z(6, 3)), {}),
        ("batch-mismatch", (z(4, 3), z(5, 3)), {}),
        ("static-dim", (z(4, 2), z(4, 2)), {}),
    ])


# guards-printer-forms: a program whose `guards_code` holds, over two
# dynamic sizes n = x.size()[0] and m = y.size()[0], each form
# ShapeGuardPythonPrinter prints for the guards of torch.nn exports
# (docs/guard-forms.md) and the functions it prints for other sympy nodes:
# torch.sym_max / sym_min (ints, and a float), // and % with negative
# operands (Python's floor semantics), `or`, `not`, a chained comparison,
# torch.sym_float with true division, math.floor / ceil / trunc, abs,
# builtins max / min, ** and math.inf. The probes are the sample, a size of
# 0 (ZeroDivisionError in the first guard), and for each guard the first
# (n, m) in [0, 64]^2 that passes every guard before it and fails it.
_FORMS = [
    "torch.sym_max(1, (4*L['y'].size()[0]) // L['x'].size()[0]) != 7",
    "torch.sym_min(L['x'].size()[0], 2*L['y'].size()[0]) != 3",
    "(L['x'].size()[0] % (L['y'].size()[0] + 1)) != 5",
    "((-L['x'].size()[0]) // 4) != -3",
    "((-L['x'].size()[0]) % 7) != 3",
    "(L['x'].size()[0] // 3) == 1 or L['y'].size()[0] != 9 or L['x'].size()[0] > 10",
    "not (L['x'].size()[0] == 13)",
    "2 <= L['x'].size()[0] <= 60",
    "torch.sym_float(L['x'].size()[0]) / 2 != 7.5",
    "math.floor(torch.sym_float(L['y'].size()[0]) / 3) != 5",
    "math.ceil(L['x'].size()[0] / 4) != 5",
    "math.trunc(-L['y'].size()[0] / 4) != -4",
    "abs(L['x'].size()[0] - L['y'].size()[0]) != 20",
    "max(L['x'].size()[0], L['y'].size()[0], 3) != 50",
    "min(L['x'].size()[0], L['y'].size()[0]) != 33",
    "L['y'].size()[0]**2 != 49",
    "torch.sym_max(L['x'].size()[0], 1.5) != 21.0",
    "L['x'].size()[0] != math.inf",
]


def _first_failing(k: int) -> tuple[int, int] | None:
    """The first (n, m) that passes _FORMS[:k] and fails _FORMS[k] (chooses inputs only)."""
    import math
    for n in range(0, 65):
        for m in range(0, 65):
            env = {"torch": torch, "math": math, "L": {"x": z(n, 3), "y": z(m)}}
            try:
                if all(eval(g, env) for g in _FORMS[:k]) and not eval(_FORMS[k], env):
                    return n, m
            except ZeroDivisionError:
                continue
    return None


def _printer_forms() -> Export:
    class M(nn.Module):
        def forward(self, x, y):
            return x * 2, y + 1

    def edit(ep) -> None:
        ep._guards_code = list(_FORMS)

    probes = [("zero", (z(0, 3), z(4)), {})]
    for k in range(len(_FORMS)):
        nm = _first_failing(k)
        if nm is not None:
            probes.append((f"fails-{k}", (z(nm[0], 3), z(nm[1])), {}))
    probes.append(("ok", (z(22, 3), z(30)), {}))
    return Export(M(), (T(6, 3), T(4)),
                  dynamic_shapes=({0: Dim("n", max=64)}, {0: Dim("m", max=64)}),
                  edit=edit, probes=probes)


def entries() -> list[Entry]:
    return [
        Entry("nn-mha", _mha),
        Entry("nn-gru", _gru),
        Entry("nn-lstm", _lstm),
        Entry("nn-nonzero", _nonzero),
        Entry("nn-cond-nested", _cond_nested),
        Entry("guards-printer-forms", _printer_forms),
    ]
