"""The hand-written ``export_spec`` case files (shared/export-spec-format.md),
one per topic, written compactly here and expanded to JSON Lines:

    python3 corpus/hand-src/export_spec.py corpus/cases

Each case is chosen by hand; its expected result comes only from the oracle
(``oracle/regen-goldens.sh``). A case listed with several APIs becomes one
line per API (``ID-export``, ``ID-strict``, ``ID-make_fx``, ``ID-compile``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

ALL = ("export", "export_strict", "make_fx", "compile")
EXPORTS = ("export", "export_strict", "make_fx")
SUFFIX = {"export": "export", "export_strict": "strict", "make_fx": "make_fx",
          "compile": "compile"}


# --- VALUE builders -----------------------------------------------------------

def T(*shape: int, dtype: str = "float32") -> dict:
    return {"tensor": {"shape": list(shape), "dtype": dtype}}


def tup(*xs: Any) -> dict:
    return {"tuple": list(xs)}


def dct(*pairs: tuple[Any, Any]) -> dict:
    return {"dict": [[k, v] for k, v in pairs]}


def V(i: int) -> dict:
    return {"var": i}


def op(name: str, *args: Any) -> dict:
    return {"op": name, "args": list(args)}


def add(a: Any, b: Any) -> dict:
    return op("add", a, b)


def mul(a: Any, b: Any) -> dict:
    return op("mul", a, b)


def TS(*dims: Any) -> dict:
    return {"TensorSpec": list(dims)}


def Seq(*xs: Any) -> dict:
    return {"SeqSpec": list(xs)}


def Dct(*pairs: tuple[Any, Any]) -> dict:
    return {"DictSpec": dct(*pairs)}


def Obj(*pairs: tuple[str, Any]) -> dict:
    return {"ObjectSpec": dct(*pairs)}


def PS(*pairs: tuple[str, Any]) -> dict:
    return {"ParamsSpec": dct(*pairs)}


def SS(*pairs: tuple[str, Any], assumptions: list | None = None, params: Any = None) -> dict:
    body: dict[str, Any] = {}
    if pairs:
        body["params"] = dct(*pairs)
    elif params is not None:
        body["params"] = params
    if assumptions is not None:
        body["assumptions"] = assumptions
    return {"ShapesSpec": body}


def Point(x: Any, y: Any) -> dict:
    return {"namedtuple": {"type": "torchspec.zoo.Point", "fields": [["x", x], ["y", y]]}}


def Pair(first: Any, scale: Any) -> dict:
    return {"dataclass": {"type": "torchspec.zoo.Pair", "fields": [["first", first], ["scale", scale]]}}


def SV(name: str, **kw: Any) -> dict:
    return {"kind": "ShapeVar", "name": name, **kw}


def IV(name: str, **kw: Any) -> dict:
    return {"kind": "IntVar", "name": name, **kw}


def sig(*params: str) -> list:
    """``x``, ``*args``, ``**kw``, ``k:`` (keyword-only), ``p/`` (positional-only),
    ``y=VALUE`` is not expressible here: use ``sig_default``."""
    out = []
    for p in params:
        if p.startswith("**"):
            out.append([p[2:], "VAR_KEYWORD"])
        elif p.startswith("*"):
            out.append([p[1:], "VAR_POSITIONAL"])
        elif p.endswith(":"):
            out.append([p[:-1], "KEYWORD_ONLY"])
        elif p.endswith("/"):
            out.append([p[:-1], "POSITIONAL_ONLY"])
        else:
            out.append([p, "POSITIONAL_OR_KEYWORD"])
    return out


def default(param: list, value: Any) -> list:
    return [*param, {"default": value}]


# --- case files ---------------------------------------------------------------

class File:
    def __init__(self, name: str) -> None:
        self.name = name
        self.lines: list[dict] = []
        self.n = 0

    def case(self, apis: tuple[str, ...] | str = ALL, *, vars: list | None = None,
             signature: list, args: dict, **rest: Any) -> None:
        self.n += 1
        if isinstance(apis, str):
            apis = (apis,)
        for api in apis:
            if api == "make_fx" and "kwargs" in rest:
                continue
            c: dict[str, Any] = {"id": f"{self.name}-{self.n:03d}-{SUFFIX[api]}",
                                 "kind": "export_spec", "api": api}
            if vars:
                c["vars"] = vars
            c["signature"] = signature
            c["args"] = args
            c.update(rest)
            if api != "compile":
                c.pop("calls", None)
            self.lines.append(c)

    def write(self, out_dir: str) -> None:
        with open(os.path.join(out_dir, f"{self.name}.jsonl"), "w", encoding="utf-8") as f:
            for c in self.lines:
                f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")


XY = sig("x", "y")


def binding() -> File:
    f = File("export-spec-binding")
    a = [SV("a")]
    # SeqSpec over a list and a tuple; nested; static holes.
    f.case(vars=a, signature=sig("xs"), args=tup([T(4, 3), T(5, 3)]),
           spec=SS(("xs", Seq(TS(V(0), 3), None))))
    f.case(vars=a, signature=sig("xs"), args=tup(tup(T(4, 3), T(4, 3))),
           spec=SS(("xs", Seq(TS(V(0), 3), TS(V(0), 3)))))
    f.case(vars=a, signature=sig("xs"), args=tup([[T(4)], T(2)]),
           spec=SS(("xs", Seq(Seq(TS(V(0))), None))))
    f.case(vars=a, signature=sig("xs"), args=tup([T(4, 3), T(5, 3)]),
           spec=SS(("xs", Seq(TS(V(0), 3), None, TS(V(0), 3)))))
    f.case(vars=a, signature=sig("xs"), args=tup([T(4, 3)]),
           spec=SS(("xs", Seq(TS(V(0), 3), None, None, None))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("p", T(4)), ("q", T(5)))),
           spec=SS(("d", Seq(TS(V(0))))))
    # DictSpec: runtime order, unmatched keys.
    f.case(vars=[SV("a"), SV("b")], signature=sig("d"),
           args=tup(dct(("q", T(5)), ("p", T(4, 2)))),
           spec=SS(("d", Dct(("p", TS(V(0), 2)), ("q", TS(V(1)))))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("p", T(4)), ("q", T(5)))),
           spec=SS(("d", Dct(("r", TS(V(0))), (0, TS(V(0)))))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("p", T(4)), ("q", T(5)))),
           spec=SS(("d", Dct(("p", TS(V(0))), ("zz", None)))))
    f.case(vars=a, signature=sig("xs"), args=tup([T(4)]),
           spec=SS(("xs", Dct(("p", TS(V(0)))))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("k", [T(4), T(6)]))),
           spec=SS(("d", Dct(("k", Seq(None, TS(V(0))))))))
    f.case(vars=a, signature=sig("d"), args=tup(dct((1, T(4)), (2, T(6)))),
           spec=SS(("d", Dct((2, TS(V(0)))))))
    # ObjectSpec on registered types, on a dict, on unregistered leaves.
    f.case(vars=a, signature=sig("p"), args=tup(Point(T(4, 3), T(2))),
           spec=SS(("p", Obj(("x", TS(V(0), 3))))))
    f.case(vars=[SV("a"), IV("n")], signature=sig("p"), args=tup(Pair(T(4, 3), 5)),
           spec=SS(("p", Obj(("first", TS(V(0), 3)), ("scale", V(1))))))
    f.case(vars=a, signature=sig("p"), args=tup(Pair(T(4, 3), 5)),
           spec=SS(("p", Obj(("first", TS(V(0), 3)), ("zz", None), ("b", None)))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("first", T(4)))),
           spec=SS(("d", Obj(("first", TS(V(0)))))))
    f.case(vars=a, signature=sig("t"), args=tup(T(4)),
           spec=SS(("t", Obj(("first", TS(V(0)))))))
    f.case(vars=a, signature=sig("t"), args=tup(tup(T(4))),
           spec=SS(("t", Obj(("first", TS(V(0)))))))
    f.case(vars=a, signature=sig("n"), args=tup(3),
           spec=SS(("n", Obj(("first", TS(V(0)))))))
    f.case(vars=a, signature=sig("args"), args=tup([Point(T(4, 3), T(2))]),
           spec=SS(("args", Seq(Obj(("y", TS(V(0))))))))
    # Leaf type checks.
    f.case(vars=a, signature=XY, args=tup(T(4, 3), 5), spec=SS(("y", TS(V(0)))))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), T(5)), spec=SS(("y", V(0))))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), 2.5), spec=SS(("y", V(0))))
    f.case(vars=[], signature=XY, args=tup(T(4, 3), 2.5), spec=SS(("y", 3)))
    f.case(vars=[], signature=XY, args=tup(T(4, 3), T(3)), spec=SS(("y", 3)))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), True), spec=SS(("y", V(0))))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), 7),
           spec=SS(("y", add(V(0), 1))))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), 7),
           spec=SS(("x", TS(V(0), None)), ("y", add(V(0), 1))))
    f.case(vars=[IV("n")], signature=XY, args=tup(T(4, 3), None), spec=SS(("y", V(0))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), "s"), spec=SS(("y", TS(V(0)))))
    # Parameters: unpassed, defaulted, keyword, *args, **kwargs, self.
    f.case(vars=a, signature=[["x", "POSITIONAL_OR_KEYWORD"], default(["y", "POSITIONAL_OR_KEYWORD"], None)],
           args=tup(T(4, 3)), spec=SS(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3)), kwargs=dct(("y", T(4))),
           spec=SS(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(vars=a, signature=XY, args=tup(), kwargs=dct(("y", T(4)), ("x", T(4, 3))),
           spec=SS(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("x", TS(V(0), 3)), ("z", None)))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)),
           spec=SS(("x", TS(V(0), 3)), ("zz", TS(V(0))), ("w", None)))
    f.case(vars=[SV("a"), SV("b")], signature=sig("x", "*rest"), args=tup(T(4, 3), T(5), T(6, 2)),
           spec=SS(("x", TS(V(0), 3)), ("*args", [TS(V(1)), TS(V(0), 2)])))
    f.case(vars=a, signature=sig("x", "*rest"), args=tup(T(4, 3), T(5), T(6)),
           spec=SS(("*args", [None, TS(V(0))])))
    f.case(vars=a, signature=sig("x", "*rest"), args=tup(T(4, 3)),
           spec=SS(("x", TS(V(0), 3)), ("*args", [TS(V(0))])))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(5)),
           spec=SS(("x", TS(V(0), 3)), ("*args", [TS(V(0))])))
    f.case(vars=[SV("a"), SV("b")], signature=sig("x", "**extra"), args=tup(T(4, 3)),
           kwargs=dct(("k", T(5)), ("j", T(6))),
           spec=SS(("x", TS(V(0), 3)), ("**kwargs", dct(("j", TS(V(1)))))))
    f.case(vars=a, signature=sig("x", "**extra"), args=tup(T(4, 3)), kwargs=dct(("k", T(5))),
           spec=SS(("**kwargs", dct(("j", TS(V(0)))))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3)), kwargs=dct(("y", T(5))),
           spec=SS(("**kwargs", dct(("y", TS(V(0)))))))
    f.case(vars=[SV("a"), SV("b")], signature=sig("x", "k:"), args=tup(T(4, 3)),
           kwargs=dct(("k", T(7))), spec=SS(("x", TS(V(0), 3)), ("k", TS(V(1)))))
    f.case(vars=a, signature=sig("x/", "y"), args=tup(T(4, 3), T(2)), spec=SS(("x", TS(V(0), 3))))
    f.case(vars=a, signature=sig("x", "**extra"), args=tup(T(4, 3)),
           kwargs=dct(("kw", dct(("z", [T(5)])))),
           spec=SS(("**kwargs", dct(("kw", Dct(("z", Seq(TS(V(0))))))))))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)),
           module={"parameters": [["weight", T(4, 3)]]},
           spec=SS(("self", Obj(("weight", TS(V(0), None))))))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)),
           module={"parameters": [["weight", T(5, 3)]], "buffers": [["inner.b", T(2)]]},
           spec=SS(("x", TS(V(0), 3))))
    # Spec forms: a dict, a ParamsSpec, None, no spec, an empty ShapesSpec, a list.
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)),
           spec=dct(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)),
           spec=PS(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(signature=XY, args=tup(T(4, 3), T(4)), spec=None)
    f.case(signature=XY, args=tup(T(4, 3), T(4)))
    f.case(signature=XY, args=tup(T(4, 3), T(4)), spec={"ShapesSpec": {}})
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=[TS(V(0), 3), TS(V(0))])
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=tup(TS(V(0), 3), None))
    # Ints: bare IntVar, static int, unspecified, floats and bools left alone.
    f.case(vars=[IV("n")], signature=sig("x", "n", "s", "b"), args=tup(T(4), 7, 2.5, True),
           spec=SS(("n", V(0))))
    f.case(vars=[IV("n")], signature=sig("x", "n", "m"), args=tup(T(4), 7, 3),
           spec=SS(("n", V(0)), ("m", 3)))
    return f


def checks() -> File:
    f = File("export-spec-checks")
    a = [SV("a")]
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("x", TS(V(0)))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("y", TS(V(0), 1, 2))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("x", TS(V(0), 5))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("x", TS(4, 3)), ("y", TS(5))))
    f.case(vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("x", TS(None, None)), ("y", TS(V(0)))))
    f.case(vars=a, signature=sig("x"), args=tup(T()), spec=SS(("x", TS())))
    f.case(vars=a, signature=sig("x"), args=tup(T()), spec=SS(("x", TS(V(0)))))
    f.case(vars=a, signature=sig("d"), args=tup(dct(("k", [T(2), T(3, 3)]))),
           spec=SS(("d", Dct(("k", Seq(None, TS(V(0))))))))
    f.case(vars=a, signature=sig("x", "*rest"), args=tup(T(4), T(5, 2)),
           spec=SS(("*args", [TS(V(0))])))
    f.case(vars=a, signature=sig("x", "**extra"), args=tup(T(4)), kwargs=dct(("k", dct(("z", [T(5, 2)])))),
           spec=SS(("**kwargs", dct(("k", Dct(("z", Seq(TS(V(0))))))))))
    f.case(vars=a, signature=sig("p"), args=tup(Pair(T(4, 3), 5)),
           spec=SS(("p", Obj(("first", TS(V(0)))))))
    f.case(signature=sig("x", "n"), args=tup(T(4), 7), spec=SS(("n", 8)))
    f.case(signature=sig("x", "n"), args=tup(T(4), 8), spec=SS(("n", 8)))
    f.case(signature=sig("x", "d"), args=tup(T(4), dct(("k", [1, 7]))),
           spec=SS(("d", Dct(("k", Seq(None, 8))))))
    f.case(signature=sig("x", "*rest"), args=tup(T(4), 3, 7), spec=SS(("*args", [None, 8])))
    f.case(signature=sig("x", "**extra"), args=tup(T(4)), kwargs=dct(("kw", dct(("z", [7])))),
           spec=SS(("**kwargs", dct(("kw", Dct(("z", Seq(8))))))))
    f.case(signature=sig("x", "p"), args=tup(T(4), Pair(T(3), 7)),
           spec=SS(("p", Obj(("scale", 8)))))
    f.case(vars=[SV("a", min=10, max=5)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0)))))
    f.case(vars=[IV("n", min=10, max=5)], signature=sig("x", "n"), args=tup(T(4), 7),
           spec=SS(("n", V(0))))
    f.case(vars=[SV("a", min=3, max=3)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0)))))
    f.case(vars=[SV("a", min=10)], signature=sig("x"), args=tup(T(4)), spec=SS(("x", TS(V(0)))))
    f.case(vars=[SV("a", max=2)], signature=sig("x"), args=tup(T(4)), spec=SS(("x", TS(V(0)))))
    f.case(vars=[IV("n", min=-5)], signature=sig("x", "n"), args=tup(T(4), -3),
           spec=SS(("n", V(0))))
    f.case(vars=[IV("n", min=-5, max=-1)], signature=sig("x", "n"), args=tup(T(4), -3),
           spec=SS(("n", V(0))))
    f.case(vars=[IV("n", min=-5)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0)))))
    f.case(vars=[IV("n")], signature=sig("x", "n"), args=tup(T(4), -3), spec=SS(("n", V(0))))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(0, 1)), spec=SS(("x", TS(V(0), V(0)))))
    return f


def relations() -> File:
    f = File("export-spec-relations")
    ab = [SV("a"), SV("b")]
    # Bounds.
    f.case(vars=[SV("a", min=2, max=64)], signature=XY, args=tup(T(4, 3), T(4)),
           spec=SS(("x", TS(V(0), 3)), ("y", TS(V(0)))))
    f.case(vars=[SV("a", max=10)], signature=sig("x"), args=tup(T(4, 3)), spec=SS(("x", TS(V(0), V(0)))))
    f.case(vars=[IV("n", min=1, max=10)], signature=sig("x", "n"), args=tup(T(4), 5),
           spec=SS(("n", V(0))))
    f.case(vars=[IV("n", max=10)], signature=sig("x", "n"), args=tup(T(4), 5),
           spec=SS(("n", V(0))))
    f.case(vars=[IV("n")], signature=sig("x", "n"), args=tup(T(4), 5), spec=SS(("n", V(0))))
    f.case(vars=[IV("n", min=0)], signature=sig("x", "n"), args=tup(T(4), 5), spec=SS(("n", V(0))))
    f.case(vars=[SV("a", min=1)], signature=sig("x"), args=tup(T(4)), spec=SS(("x", TS(V(0)))))
    f.case(vars=[SV("a", min=2, max=64, optimization_hint=16)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0)))))
    # Repeated vars.
    f.case(vars=[SV("a", min=2, max=64)], signature=XY, args=tup(T(4, 3), T(4, 3)),
           spec=SS(("x", TS(V(0), 3)), ("y", TS(V(0), 3))))
    f.case(vars=ab, signature=sig("x", "y", "z"), args=tup(T(4, 5), T(4, 5), T(5, 4)),
           spec=SS(("x", TS(V(0), V(1))), ("y", TS(V(0), V(1))), ("z", TS(V(1), V(0)))))
    f.case(vars=[IV("n", min=1, max=8)], signature=sig("x", "n"), args=tup(T(4), 4),
           spec=SS(("x", TS(V(0))), ("n", V(0))))
    # Derived dims: after and before their var, several forms.
    f.case(vars=[SV("a", min=1, max=100)], signature=XY, args=tup(T(4), T(9)),
           spec=SS(("x", TS(V(0))), ("y", TS(add(mul(V(0), 2), 1)))))
    f.case(vars=[SV("a", min=1, max=100)], signature=XY, args=tup(T(9), T(4)),
           spec=SS(("x", TS(add(mul(V(0), 2), 1))), ("y", TS(V(0)))))
    f.case(vars=[SV("a")], signature=XY, args=tup(T(4), T(8)),
           spec=SS(("x", TS(V(0))), ("y", TS(mul(V(0), 2)))))
    f.case(vars=[SV("a", max=100)], signature=XY, args=tup(T(8), T(4)),
           spec=SS(("x", TS(V(0))), ("y", TS(op("floordiv", V(0), 2)))))
    f.case(vars=[SV("a")], signature=XY, args=tup(T(8), T(3)),
           spec=SS(("x", TS(V(0))), ("y", TS(op("sub", V(0), 5)))))
    f.case(vars=ab, signature=sig("x", "y", "z"), args=tup(T(2), T(3), T(6)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), ("z", TS(mul(V(0), V(1))))))
    f.case(vars=ab, signature=sig("x", "y", "z"), args=tup(T(2), T(3), T(5)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), ("z", TS(add(V(0), V(1))))))
    f.case(vars=[SV("a")], signature=XY, args=tup(T(4), T(3)),
           spec=SS(("x", TS(V(0))), ("y", TS(add(op("sub", V(0), V(0)), 3)))))
    f.case(vars=[SV("a")], signature=XY, args=tup(T(4), T(16)),
           spec=SS(("x", TS(V(0))), ("y", TS(op("pow", V(0), 2)))))
    f.case(vars=[SV("a")], signature=XY, args=tup(T(4), T(1)),
           spec=SS(("x", TS(V(0))), ("y", TS(op("mod", V(0), 3)))))
    f.case(vars=[IV("n", min=1, max=10)], signature=sig("x", "n", "m"), args=tup(T(4), 3, 7),
           spec=SS(("n", V(0)), ("m", add(V(0), 4))))
    # Assumptions.
    f.case(vars=[SV("a", min=2, max=64)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0))), assumptions=[op("eq", op("mod", V(0), 2), 0)]))
    f.case(vars=ab, signature=XY, args=tup(T(4), T(6)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), assumptions=[op("gt", V(1), V(0))]))
    f.case(vars=[SV("a"), SV("b", max=50)], signature=XY, args=tup(T(4), T(6)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), assumptions=[op("gt", V(1), V(0))]))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(6)),
           spec=SS(("x", TS(V(0))), assumptions=[op("gt", V(0), 5)]))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(6)),
           spec=SS(("x", TS(V(0))), assumptions=[op("gt", V(0), 5), op("lt", V(0), 3)]))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(6)),
           spec=SS(("x", TS(V(0))), assumptions=[op("ge", V(0), 0)]))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0))), assumptions=[op("eq", V(0), 4)]))
    f.case(vars=[SV("a", max=9)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0))), assumptions=[op("lt", V(0), 10)]))
    f.case(vars=[SV("a", min=6)], signature=sig("x"), args=tup(T(6)),
           spec=SS(("x", TS(V(0))), assumptions=[op("gt", V(0), 5)]))
    f.case(vars=[IV("n", min=-5)], signature=sig("x", "n"), args=tup(T(4), -3),
           spec=SS(("n", V(0)), assumptions=[op("ge", V(0), -5)]))
    f.case(vars=ab, signature=XY, args=tup(T(8), T(4)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), assumptions=[op("eq", V(0), mul(V(1), 2))]))
    f.case(vars=[SV("a", max=100), SV("b")], signature=XY, args=tup(T(8), T(4)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), assumptions=[op("eq", V(0), mul(V(1), 2))]))
    f.case(vars=ab, signature=XY, args=tup(T(8), T(4)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))),
                   assumptions=[op("le", mul(V(0), V(1)), 1000)]))
    f.case(vars=ab, signature=XY, args=tup(T(8), T(4)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))),
                   assumptions=[op("eq", op("mod", V(0), 4), 0), op("eq", V(0), mul(V(1), 2))]))
    # Unbound vars, pending checks, finalize.
    f.case(vars=ab, signature=XY, args=tup(T(4), T(9)),
           spec=SS(("x", TS(V(0))), ("y", TS(add(mul(V(1), 2), 1))), assumptions=[op("gt", V(1), V(0))]))
    f.case(vars=ab, signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0))), assumptions=[op("gt", V(1), 1)]))
    f.case(vars=[SV("v"), SV("v")], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(add(mul(V(0), 2), V(1))))))
    f.case(vars=[SV("b"), SV("a"), SV("c")], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(add(V(2), V(0)))), assumptions=[op("gt", V(1), 1)]))
    f.case(vars=[SV("a")], signature=sig("x"), args=tup(T(4)),
           spec=SS(assumptions=[op("gt", V(0), 1)]))
    # Divisibility (issue 34): a Mod(a, k) == 0 fact makes simplify's FloorDiv(a, k)
    # a CleanDiv, and k*CleanDiv(a, k) cancels to a.
    fd = lambda v, k: op("floordiv", v, k)
    even = op("eq", op("mod", V(0), 2), 0)
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=XY, args=tup(T(8), T(8)),
           spec=SS(("x", TS(V(0))), ("y", TS(mul(fd(V(0), 2), 2))), assumptions=[even]))
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=sig("x"), args=tup(T(8)),
           spec=SS(("x", TS(V(0))), assumptions=[even, op("eq", mul(fd(V(0), 2), 2), V(0))]))
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=sig("x"), args=tup(T(8)),
           spec=SS(("x", TS(V(0))), assumptions=[op("eq", mul(fd(V(0), 2), 2), V(0)), even]))
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=XY, args=tup(T(8), T(8)),
           spec=SS(("x", TS(V(0))), ("y", TS(mul(fd(V(0), 2), 4))), assumptions=[even]))
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=XY, args=tup(T(8), T(8)),
           spec=SS(("x", TS(V(0))), ("y", TS(add(mul(fd(V(0), 2), 2), 3))), assumptions=[even]))
    f.case(EXPORTS, vars=[SV("a", max=64)], signature=sig("x"), args=tup(T(8)),
           spec=SS(("x", TS(V(0))),
                   assumptions=[op("eq", add(op("mod", V(0), 2), 1), 1), op("le", mul(fd(V(0), 2), 2), 40)]))
    f.case(EXPORTS, vars=[IV("n", max=64)], signature=sig("x", "n"), args=tup(T(4), 8),
           spec=SS(("n", V(0)), assumptions=[even, op("eq", mul(fd(V(0), 2), 2), V(0))]))
    f.case(EXPORTS, vars=ab, signature=sig("x", "y", "z"), args=tup(T(8), T(4), T(8)),
           spec=SS(("x", TS(V(0))), ("y", TS(V(1))), ("z", TS(mul(fd(V(0), V(1)), V(1)))),
                   assumptions=[op("eq", op("mod", V(0), V(1)), 0)]))
    # Replacement chains (issue 34): an int input's symbol replaced by each
    # repeat of its var in turn (no _get_key change, so simplify's cache is
    # stale for the axioms), then by what the runtime-assert pass solves.
    f.case(EXPORTS, vars=[IV("c")], signature=sig("x", "y", "z"), args=tup(5, T(5, 4, 5), [T(5, 9)]),
           spec=SS(("x", V(0)), ("y", TS(V(0), add(V(0), -1), V(0))), ("z", Seq(TS(V(0), 9)))))
    f.case(EXPORTS, vars=[IV("c", min=2, max=7)], signature=sig("x", "y", "z"), args=tup(3, T(3, 5), T(3)),
           spec=SS(("x", V(0)), ("y", TS(V(0), add(mul(V(0), 2), -1))), ("z", TS(V(0)))))
    f.case(EXPORTS, vars=[IV("c", min=1, max=20)], signature=sig("x", "y", "z"), args=tup(T(4), 4, T(4, 4)),
           spec=SS(("x", TS(V(0))), ("y", V(0)), ("z", TS(V(0), V(0)))))
    f.case(EXPORTS, vars=[IV("c")], signature=sig("n", "y", "z"), args=tup(6, T(6), T(3)),
           spec=SS(("n", V(0)), ("y", TS(V(0))), ("z", TS(fd(V(0), 2)))),)
    return f


def entry() -> File:
    f = File("export-spec-entry")
    a = [SV("a")]
    xs = SS(("x", TS(V(0), 3)))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=xs)
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=dct(("x", TS(V(0), 3))))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=PS(("x", TS(V(0), 3))))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=xs, spec=xs)
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=xs, spec=None)
    f.case(signature=sig("x"), args=tup(T(4, 3)), decorator=None)
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=[TS(V(0), 3)])
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=TS(V(0), 3))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=TS(V(0), 3))
    f.case(vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=7)
    f.case(EXPORTS[:2], vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"prefer_deferred_runtime_asserts_over_guards": True})
    f.case(EXPORTS[:2], vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"prefer_deferred_runtime_asserts_over_guards": False})
    f.case("make_fx", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"tracing_mode": "symbolic"})
    f.case("make_fx", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"tracing_mode": "real"})
    f.case("make_fx", signature=sig("x"), args=tup(T(4, 3)), options={"tracing_mode": "real"})
    f.case("compile", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"dynamic": True})
    f.case("compile", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=xs,
           options={"dynamic": False})
    f.case("compile", vars=a, signature=sig("x"), args=tup(T(4, 3)), decorator=xs,
           options={"dynamic": None})
    # The Dim API's first checks on what is not a ShapesSpec (issue 34).
    EX = ("export", "export_strict")
    ab = [SV("a"), IV("n", min=1, max=9)]
    f.case(EX, vars=ab, signature=XY, args=tup(T(4, 3), T(4)),
           spec=dct(("y", TS(V(0))), ("x", None)))
    f.case(EX, vars=ab, signature=XY, args=tup(T(4, 3), T(4)),
           spec=[None, TS(V(1))])
    f.case(EX, vars=ab, signature=sig("x"), args=tup(T()), spec=dct(("x", TS())))
    f.case(EX, vars=ab, signature=sig("x"), args=tup(T(4)), spec=TS(V(0)), decorator=None)
    f.case(EX, vars=ab, signature=sig("x"), args=tup(T(4)), spec=-3)
    return f


def make_fx() -> File:
    f = File("export-spec-make-fx")
    a = [SV("a", min=2, max=64)]
    f.case("make_fx", vars=a, signature=sig("x", "n"), args=tup(T(4, 3), 5), spec=SS(("x", TS(V(0), 3))))
    f.case("make_fx", vars=[IV("n", min=1)], signature=sig("x", "n"), args=tup(T(4, 3), 5),
           spec=SS(("n", V(0))))
    f.case("make_fx", signature=sig("x", "n"), args=tup(T(4, 3), 5), spec=SS(("n", 6)))
    f.case("make_fx", vars=a, signature=sig("x", "*rest"), args=tup(T(4, 3), T(4), 2),
           spec=SS(("*args", [TS(V(0))])))
    f.case("make_fx", vars=a, signature=sig("x"), args=tup(T(4, 3)),
           module={"parameters": [["w", T(3)]], "buffers": [["b", T(2)]]},
           spec=SS(("x", TS(V(0), 3))))
    f.case("make_fx", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=SS(("x", TS(V(0)))))
    f.case("make_fx", vars=a, signature=sig("x"), args=tup(T(4, 3)), spec=SS(("x", TS(V(0), 5))))
    f.case("make_fx", vars=a, signature=XY, args=tup(T(4, 3), T(4)), spec=SS(("y", TS(V(0)))),
           body="touch_tensors")
    f.case("make_fx", vars=[IV("n")], signature=sig("x", "n"), args=tup(T(4, 3), 5),
           spec=SS(("n", V(0))), body="touch_tensors")
    f.case("make_fx", vars=a, signature=sig("x", "d"), args=tup(T(4, 3), dct(("k", T(4)))),
           spec=SS(("d", Dct(("k", TS(V(0)))))))
    return f


def compile_() -> File:
    f = File("export-spec-compile")
    a = [SV("a", min=2, max=64)]
    xy = SS(("x", TS(V(0), 3)), ("y", TS(V(0), None)))
    calls = [{"args": tup(T(6, 3), T(6, 2))}, {"args": tup(T(6, 3), T(6, 5))},
             {"args": tup(T(6, 4), T(6, 5))}, {"args": tup(T(1, 3), T(1, 5))},
             {"args": tup(T(0, 3), T(0, 5))}]
    f.case("compile", vars=a, signature=XY, args=tup(T(4, 3), T(4, 2)), spec=xy, calls=calls)
    f.case("compile", vars=[IV("n", min=1, max=10)], signature=sig("x", "n", "m"), args=tup(T(4), 3, 5),
           spec=SS(("n", V(0))),
           calls=[{"args": tup(T(4), 4, 5)}, {"args": tup(T(4), 4, 6)}, {"args": tup(T(5), 4, 6)}])
    f.case("compile", signature=XY, args=tup(T(4, 3), T(4, 2)),
           calls=[{"args": tup(T(5, 3), T(5, 2))}, {"args": tup(T(6, 3), T(6, 2))}])
    f.case("compile", vars=[SV("a")], signature=sig("x"), args=tup(T(4, 3)),
           module={"parameters": [["weight", T(4, 3)]]},
           spec=SS(("self", Obj(("weight", TS(V(0), None))))), calls=[])
    f.case("compile", vars=[SV("a")], signature=sig("x"), args=tup(T(4, 3)),
           module={"parameters": [["weight", T(4, 3)]]},
           spec=SS(("x", TS(V(0), 3))), calls=[{"args": tup(T(5, 3))}])
    f.case("compile", vars=[SV("a")], signature=sig("d"), args=tup(dct(("p", T(4)))),
           spec=SS(("d", Seq(TS(V(0))))))
    f.case("compile", vars=[SV("a")], signature=sig("xs"), args=tup([T(4)]),
           spec=SS(("xs", TS(V(0)))))
    f.case("compile", vars=[SV("a")], signature=sig("x"), args=tup(T(4, 3)),
           spec=SS(("x", TS(V(0)))))
    f.case("compile", vars=[SV("a")], signature=sig("x", "y"), args=tup(T(4), T(9)),
           spec=SS(("x", TS(V(0))), ("y", TS(add(mul(V(0), 2), 1)))),
           calls=[{"args": tup(T(5), T(11))}])
    f.case("compile", vars=[SV("a", min=2, max=64)], signature=sig("x"), args=tup(T(4)),
           spec=SS(("x", TS(V(0))), assumptions=[op("eq", op("mod", V(0), 2), 0)]),
           calls=[{"args": tup(T(6))}])
    f.case("compile", vars=[SV("a")], signature=sig("x"), args=tup(T(4, 3)), decorator=SS(("x", TS(V(0), 3))),
           calls=[{"args": tup(T(7, 3))}])
    return f


def compile_auto() -> File:
    """torch.compile without a spec over later calls: automatic dynamic shapes
    (a dim that changed becomes dynamic, its own backed symbol; sizes 0 and 1
    are specialized)."""
    f = File("export-spec-compile-auto")
    runs = [
        ((4, 3), (4, 2), [((5, 3), (5, 2)), ((6, 3), (6, 2))]),
        ((4, 3), (4, 2), [((5, 3), (6, 2)), ((7, 3), (7, 2))]),
        ((4, 3), (4, 2), [((5, 3), (5, 2)), ((6, 3), (7, 2)), ((8, 3), (8, 2))]),
        ((4, 3), (4, 2), [((1, 3), (1, 2)), ((5, 3), (5, 2)), ((1, 3), (1, 2))]),
        ((4, 3), (4, 2), [((4, 5), (4, 2)), ((4, 6), (4, 2)), ((4, 1), (4, 2))]),
        ((4, 4), (4, 2), [((5, 5), (4, 2)), ((6, 7), (4, 2)), ((8, 8), (4, 2))]),
        ((4, 3), (4, 2), [((0, 3), (4, 2)), ((0, 3), (4, 2)), ((9, 3), (4, 2))]),
        ((4, 3), (4, 2), [((4, 3), (4, 2)), ((5, 3), (4, 2)), ((4, 3), (4, 2))]),
        ((2, 2), (2, 2), [((3, 3), (3, 3)), ((3, 4), (3, 3)), ((2, 2), (2, 2))]),
        ((4, 3), (3, 4), [((5, 3), (3, 5)), ((6, 3), (3, 6)), ((6, 3), (3, 7))]),
        ((1, 3), (4, 2), [((2, 3), (4, 2)), ((1, 3), (4, 2)), ((3, 3), (5, 2))]),
        ((4, 3), (4, 2), [((5, 3), (5, 2)), ((5, 3), (6, 2)), ((9, 3), (9, 2)), ((1, 3), (9, 2))]),
    ]
    for x, y, calls in runs:
        f.case("compile", signature=XY, args=tup(T(*x), T(*y)),
               calls=[{"args": tup(T(*a), T(*b))} for a, b in calls])
    return f


def main(argv: list[str]) -> int:
    out_dir = argv[0] if argv else "corpus/cases"
    for make in (binding, checks, relations, entry, make_fx, compile_, compile_auto):
        make().write(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
