"""The program JSON of a `.pt2` walked against PyTorch's serde schema (the
dataclasses of torch/_export/serde/schema.py): JSON paths, the sites of a
document (every node known as a dataclass, a union, an enum, a list, a dict
or a scalar) and the context one mutation works in. The lowest layer of
oracle/mutate.py: mutate_classes.py and mutate.py build on it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import types
import typing

from torch._export.serde import schema as S
from torch._export.serde.union import _Union

# Mutants are written as torch.export.save writes program JSON.
from golden_encoding import dumps_program_json as dumps


# ---------------------------------------------------------------------------
# JSON paths.
# ---------------------------------------------------------------------------

def fmt_path(path) -> str:
    out = "$"
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and p.isidentifier():
            out += "." + p
        else:
            out += "[" + json.dumps(p) + "]"
    return out


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def put(doc, path, value):
    get(doc, path[:-1])[path[-1]] = value


def short(v, n=60) -> str:
    s = dumps(v)
    return s if len(s) <= n else s[: n - 3] + "..."


# ---------------------------------------------------------------------------
# The schema walk.
# ---------------------------------------------------------------------------

_HINTS: dict = {}


def hints(cls):
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, globalns=vars(S))
    return _HINTS[cls]


@functools.lru_cache(maxsize=None)
def strip_optional(tp):
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0], True
    return tp, False


@functools.lru_cache(maxsize=None)
def kind_of(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is list:
        return "list"
    if origin is dict:
        return "dict"
    if isinstance(tp, type):
        if issubclass(tp, _Union):
            return "union"
        if dataclasses.is_dataclass(tp):
            return "dataclass"
        if issubclass(tp, enum.IntEnum):
            return "enum"
        if tp is bool:
            return "bool"
        if tp is int:
            return "int"
        if tp is float:
            return "float"
        if tp is str:
            return "str"
    return "other"


@dataclasses.dataclass
class Site:
    path: tuple
    tp: typing.Any
    optional: bool
    kind: str

    @property
    def name(self) -> str:
        tp = self.tp
        return getattr(tp, "__name__", None) or str(tp)


def walk(v, tp, path=(), out=None):
    if out is None:
        out = []
    tp, optional = strip_optional(tp)
    k = kind_of(tp)
    out.append(Site(path, tp, optional, k))
    if v is None:
        return out
    if k == "union":
        if isinstance(v, dict) and len(v) == 1:
            tag = next(iter(v))
            h = hints(tp)
            if tag in h:
                walk(v[tag], h[tag], path + (tag,), out)
    elif k == "dataclass" and isinstance(v, dict):
        for name, ftp in _field_hints(tp):
            if name in v:
                walk(v[name], ftp, path + (name,), out)
    elif k == "list" and isinstance(v, list):
        (et,) = typing.get_args(tp)
        for i, x in enumerate(v):
            walk(x, et, path + (i,), out)
    elif k == "dict" and isinstance(v, dict):
        vt = typing.get_args(tp)[1]
        for key, x in v.items():
            walk(x, vt, path + (key,), out)
    return out


@functools.lru_cache(maxsize=None)
def _field_hints(cls):
    h = hints(cls)
    return tuple((f.name, h[f.name]) for f in dataclasses.fields(cls))


def field_default(cls, name) -> bool:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    return False


# ---------------------------------------------------------------------------
# Context of one program.
# ---------------------------------------------------------------------------

class Ctx:
    def __init__(self, doc, rng, ops, sites=None):
        self.doc = doc
        self.rng = rng
        self.ops = ops
        # the walk of a fresh copy of the program is the walk of the program:
        # make_mutant passes the one it cached (site_list)
        self.sites = list(sites) if sites is not None else walk(doc, S.ExportedProgram)
        self.expect = None

    def pick(self, seq):
        seq = list(seq)
        return self.rng.choice(seq) if seq else None

    def of_kind(self, *kinds):
        return [s for s in self.sites if s.kind in kinds]

    def nodes(self):
        """(path, node) of every node, nested graphs too."""
        return [(s.path, get(self.doc, s.path)) for s in self.sites
                if s.tp is S.Node and isinstance(get(self.doc, s.path), dict)]

    def graphs(self):
        return [s.path for s in self.sites if s.tp is S.Graph]

    def tensor_names(self, graph_path):
        g = get(self.doc, graph_path)
        return list(g.get("tensor_values", {}))

    def sym_expr_sites(self):
        return [s for s in self.sites if s.tp is S.SymExpr]

    def fresh(self, base="mut"):
        return f"{base}_{self.rng.randrange(10**6)}"


def graph_of(node_path):
    # .../graph/nodes/i  ->  .../graph
    return node_path[:-2]


def arg_tensor_refs(arg_path, arg):
    """Paths of TensorArgument names in an Argument (as_tensor / as_tensors / optional)."""
    out = []
    if not isinstance(arg, dict) or len(arg) != 1:
        return out
    (tag, v), = arg.items()
    if tag == "as_tensor" and isinstance(v, dict):
        out.append(arg_path + (tag, "name"))
    elif tag == "as_tensors" and isinstance(v, list):
        out += [arg_path + (tag, i, "name") for i, x in enumerate(v) if isinstance(x, dict)]
    elif tag == "as_optional_tensors" and isinstance(v, list):
        out += [arg_path + (tag, i, "as_tensor", "name") for i, x in enumerate(v)
                if isinstance(x, dict) and "as_tensor" in x]
    elif tag == "as_optional_tensor" and isinstance(v, dict) and "as_tensor" in v:
        out.append(arg_path + (tag, "as_tensor", "name"))
    return out


def other_values(v, rng):
    """Replacement values of another JSON type than v."""
    cands = []
    if isinstance(v, bool):
        cands = [int(v), str(v).lower(), None, [v]]
    elif isinstance(v, int):
        cands = [float(v), float(v), str(v), v != 0, None, [v], v + 0.5]
    elif isinstance(v, float):
        cands = [int(v), str(v), None, True]
    elif isinstance(v, str):
        cands = [len(v), None, [v], {"s": v}, True]
    elif isinstance(v, list):
        cands = [{}, "", None, 0, {"0": v[0]} if v else {"x": 1}]
    elif isinstance(v, dict):
        cands = [[], [v], "", None, 1]
    elif v is None:
        cands = [0, "", [], {}, False]
    return rng.choice(cands)
