"""Pytree goldens: TreeSpecs built and serialized by real PyTorch (2.15.0, or the
version of `oracle/regen-goldens.sh --torch X`).

Run (from the repo root; `oracle/regen-goldens.sh` does it):
  .oracle/bin/python oracle/pytree_cases.py > corpus/goldens/torch-2.15.0/pytree/treespecs.jsonl

Every line has an "id" and an "input" (the string given to `treespec_loads`),
plus either
  "error": {"type", "message"}   what `treespec_loads(input)` raises, or
  "str", "num_leaves", "pprint"  of the loaded spec, and
  "dumps"                        `treespec_dumps(spec)` (usually the input itself)
                                 or "dumps_error" when re-dumping raises, and
  "unflatten_error"              what `tree_unflatten` with one leaf too many raises.
"pprint" is {"error": ...} when `treespec_pprint` raises. Under an older torch a
tree built here that cannot be flattened and dumped is {"id", "tree_error": {"type",
"message"}} instead (2.15.0 writes no such line). The first line,
{"register": [...]}, lists the namedtuple classes the process registered
(`_register_namedtuple`) before loading anything:
[serialized_type_name, __module__, __qualname__, [fields]].
Output is deterministic: random trees come from a fixed seed.
"""

import collections
import json
import random
import sys
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from torch.fx.immutable_collections import immutable_dict, immutable_list  # noqa: E402

from golden_encoding import dumps  # noqa: E402  (compact=False: these goldens' separators)

# Namedtuple classes registered under serialized names, as a user of
# torch.export would before saving and before loading.
Point = namedtuple("Point", ["x", "y"])
Point.__module__ = "my.models"
Triple = namedtuple("Triple", ["a", "b", "c"])
Triple.__module__ = "my.models"
Empty = namedtuple("Empty", [])
Empty.__module__ = "other"
Unregistered = namedtuple("Unregistered", ["u"])
REGISTERED = [
    ("my.models.Point", Point),
    ("my.models.Triple", Triple),
    ("other.Empty", Empty),
]
for name, cls in REGISTERED:
    pytree._register_namedtuple(cls, serialized_type_name=name)
REGISTER = [[n, c.__module__, c.__qualname__, list(c._fields)] for n, c in REGISTERED]

STRUCTSEQS = [
    torch.return_types.max,
    torch.return_types.sort,
    torch.return_types.linalg_svd,
    torch.return_types._linalg_det,
    torch.return_types.aminmax_out,
]

lines = []


def err(e):
    return {"type": type(e).__name__, "message": str(e)}


def record(id_, text):
    line = {"id": id_, "input": text}
    try:
        spec = pytree.treespec_loads(text)
    except Exception as e:  # noqa: BLE001
        line["error"] = err(e)
        lines.append(line)
        return
    s = str(spec)
    if " at 0x" in s:
        raise SystemExit(f"{id_}: str() holds an address; not a reproducible case")
    line["str"] = s
    line["num_leaves"] = spec.num_leaves
    try:
        line["dumps"] = pytree.treespec_dumps(spec)
    except Exception as e:  # noqa: BLE001
        line["dumps_error"] = err(e)
    try:
        line["pprint"] = pytree.treespec_pprint(spec)
    except Exception as e:  # noqa: BLE001
        line["pprint"] = {"error": err(e)}
    try:
        pytree.tree_unflatten(list(range(spec.num_leaves + 1)), spec)
        raise SystemExit(f"{id_}: unflatten with too many leaves succeeded")
    except ValueError as e:
        line["unflatten_error"] = err(e)
    lines.append(line)


def tree(id_, value):
    # An older torch may not serialize a tree this one does (structseqs gained
    # serialized type names after 2.14): the line is then {"id", "tree_error"},
    # what flattening or treespec_dumps raised (never written under 2.15.0).
    try:
        _, spec = pytree.tree_flatten(value)
        text = pytree.treespec_dumps(spec)
    except Exception as e:  # noqa: BLE001
        lines.append({"id": id_, "tree_error": err(e)})
        return
    record(id_, text)


# --- hand-written trees ---------------------------------------------------
T = torch.zeros(1)
tree("leaf", T)
tree("leaf-none", None)
tree("empty-tuple", ())
tree("empty-list", [])
tree("empty-dict", {})
tree("args-kwargs", ((T,), {}))
tree("args-kwargs-2", ((T, T, 3), {"y": T, "z": None}))
tree("nested-tuple-4", ((((T,),),),))
tree("list-of-lists", [[1, 2], [], [3, [4, [5, 6]]]])
tree("dict-str-keys", {"a": 1, "b": [2, 3], "c": {"d": 4}})
tree("dict-int-keys", {1: "x", -2: "y", 10**30: "z"})
tree("dict-mixed-keys", {"s": 1, 2: 2, 3.5: 3, True: 4, None: 5})
tree("dict-tuple-key", {(1, "a"): 1, (): 2})
tree("dict-float-keys", {float("inf"): 1, float("-inf"): 2, 1e16: 3, 1e-7: 4, 0.1: 5})
tree("dict-non-ascii", {"é": 1, "日本": 2, "😀": 3, "a\"b": 4, "back\\slash": 5, "nl\n": 6, "\x00\x7f": 7})
tree("dict-empty-key", {"": [1, 2]})
tree("ordereddict", OrderedDict([("b", 1), ("a", (2, 3))]))
tree("ordereddict-empty", OrderedDict())
tree("defaultdict-int", defaultdict(int, {"a": 1, "b": [2]}))
tree("defaultdict-list", defaultdict(list, {}))
tree("defaultdict-dict", defaultdict(dict, {1: {2: 3}}))
tree("defaultdict-len", defaultdict(len, {"k": 1}))
tree("defaultdict-ordereddict", defaultdict(OrderedDict, {"k": 1}))
tree("deque", deque([1, 2, 3]))
tree("deque-maxlen", deque([1, (2, 3)], maxlen=5))
tree("deque-maxlen-0", deque([], maxlen=0))
tree("namedtuple", Point(1, 2))
tree("namedtuple-nested", Triple(Point(1, [2, 3]), {"k": Point(4, 5)}, ()))
tree("namedtuple-empty", Empty())
tree("structseq-max", torch.return_types.max((T, T)))
tree("structseq-svd", torch.return_types.linalg_svd((1, (2, 3), {"u": 4})))
tree("torch-size", torch.Size([2, 3]))
tree("immutable-list", immutable_list([1, 2]))
tree("immutable-dict", immutable_dict({"a": 1, "b": 2}))
tree("mixed-everything", (
    [Point(1, 2), OrderedDict(x=deque([3], maxlen=2))],
    {"kw": defaultdict(int, {"q": torch.return_types.sort((4, 5))}), "none": None},
))
deep = T
for i in range(40):
    deep = [deep] if i % 3 == 0 else ((deep, i) if i % 3 == 1 else {"k": deep})
tree("deep-40", deep)
wide = {f"key{i}": (i, [i] * (i % 3)) for i in range(30)}
tree("wide-30", wide)

# --- hand-written loads inputs --------------------------------------------
L = '{"type": null, "context": null, "children_spec": []}'


def node(t, ctx, children=()):
    return '{"type": %s, "context": %s, "children_spec": [%s]}' % (
        json.dumps(t), json.dumps(ctx), ", ".join(children))


record("load-leaf", "[1, " + L + "]")
record("load-compact-whitespace", '[1,{"type":"builtins.tuple","context":"null","children_spec":[' + L + "]}]")
record("load-protocol-true", "[true, " + L + "]")
record("load-protocol-float", "[1.0, " + node("builtins.list", "null", [L, L]) + "]")
record("load-key-order", '[1, {"children_spec": [], "context": "null", "type": "builtins.tuple"}]')
record("load-duplicate-key", '[1, {"type": "builtins.list", "type": "builtins.tuple", "context": "null", "children_spec": []}]')
record("load-dict-context-str", "[1, " + node("builtins.dict", '"abc"') + "]")
record("load-dict-context-dict", "[1, " + node("builtins.dict", '{"a": [1, 2.5, null]}') + "]")
record("load-dict-context-int-keys", "[1, " + node("builtins.dict", "[1, 2]", [L, L]) + "]")
record("load-dict-context-nan", "[1, " + node("builtins.dict", "[NaN, Infinity, -Infinity, 1e400]", [L, L, L, L]) + "]")
record("load-tuple-context-int", "[1, " + node("builtins.tuple", "5", [L]) + "]")
record("load-deque-maxlen", "[1, " + node("collections.deque", "2", [L, L, L]) + "]")
record("load-deque-maxlen-negative", "[1, " + node("collections.deque", "-1", [L]) + "]")
record("load-deque-maxlen-str", "[1, " + node("collections.deque", '"x"', [L]) + "]")
record("load-namedtuple-builtins-tuple", "[1, " + node("collections.namedtuple", "builtins.tuple") + "]")
record("load-namedtuple-ordereddict", "[1, " + node("collections.namedtuple", "collections.OrderedDict", [L]) + "]")
record("load-namedtuple-registered", "[1, " + node("collections.namedtuple", "my.models.Point", [L, L]) + "]")
record("load-namedtuple-arity", "[1, " + node("collections.namedtuple", "my.models.Point", [L]) + "]")
record("load-namedtuple-as-type", "[1, " + node("my.models.Point", "my.models.Point", [L, L]) + "]")
record("load-namedtuple-unregistered", "[1, " + node("collections.namedtuple", "my.models.Missing", [L, L]) + "]")
record("load-namedtuple-context-int", "[1, " + node("collections.namedtuple", 5) + "]")
record("load-namedtuple-context-list", "[1, " + node("collections.namedtuple", [1]) + "]")
record("load-structseq-arity", "[1, " + node("torch.return_types.max", "null", [L]) + "]")
record("load-size", "[1, " + node("torch.Size", "null", [L, L]) + "]")
record("load-no-serialized-name", "[1, " + node("NO_SERIALIZED_TYPE_NAME_FOUND", "null") + "]")
record("load-immutable-list", "[1, " + node("torch.fx.immutable_collections.immutable_list", "null", [L]) + "]")
record("load-immutable-dict", "[1, " + node("torch.fx.immutable_collections.immutable_dict", '["a"]', [L]) + "]")
dd = lambda m, n, c="[]": json.dumps({"default_factory_module": m, "default_factory_name": n, "dict_context": c})  # noqa: E731
record("load-defaultdict-float", '[1, {"type": "collections.defaultdict", "context": ' + dd("builtins", "float", ["a"]) + ', "children_spec": [' + L + "]}]")
record("load-defaultdict-missing-attr", '[1, {"type": "collections.defaultdict", "context": ' + dd("builtins", "nope") + ', "children_spec": []}]')
record("load-defaultdict-module-not-str", '[1, {"type": "collections.defaultdict", "context": ' + dd(1, "int") + ', "children_spec": []}]')
record("load-defaultdict-name-not-str", '[1, {"type": "collections.defaultdict", "context": ' + dd("builtins", None) + ', "children_spec": []}]')
record("load-defaultdict-context-str", '[1, {"type": "collections.defaultdict", "context": "[]", "children_spec": []}]')
record("load-defaultdict-dict-context-str", '[1, {"type": "collections.defaultdict", "context": ' + dd("builtins", "int", "ab") + ', "children_spec": [' + L + ", " + L + "]}]")

# --- errors of treespec_loads ---------------------------------------------
for id_, text in [
    ("err-empty", ""),
    ("err-not-json", "x"),
    ("err-trailing", "[1, {}] x"),
    ("err-int", "5"),
    ("err-null", "null"),
    ("err-one", "[1]"),
    ("err-three", "[1, 2, 3]"),
    ("err-str-2", '"ab"'),
    ("err-dict-2", '{"a": 1, "b": 2}'),
    ("err-protocol-2", "[2, " + L + "]"),
    ("err-protocol-0", "[0, " + L + "]"),
    ("err-protocol-str", '["1", ' + L + "]"),
    ("err-protocol-null", "[null, " + L + "]"),
    ("err-protocol-list", "[[1], " + L + "]"),
    ("err-protocol-float", "[1.5, " + L + "]"),
    ("err-schema-list", "[1, []]"),
    ("err-schema-str", '[1, "x"]'),
    ("err-schema-int", "[1, 7]"),
    ("err-schema-null", "[1, null]"),
    ("err-schema-empty", "[1, {}]"),
    ("err-no-context", '[1, {"type": null}]'),
    ("err-no-children", '[1, {"type": null, "context": null}]'),
    ("err-children-int", '[1, {"type": null, "context": null, "children_spec": 3}]'),
    ("err-leaf-with-children", '[1, {"type": null, "context": null, "children_spec": [' + L + "]}]"),
    ("err-leaf-with-context", '[1, {"type": null, "context": "null", "children_spec": []}]'),
    ("err-unknown-type", "[1, " + node("my.Thing", "null") + "]"),
    ("err-unknown-type-quote", "[1, " + node("it's \"q\"", "null") + "]"),
    ("err-unknown-type-int", '[1, {"type": 5, "context": "null", "children_spec": []}]'),
    ("err-type-list", '[1, {"type": ["x"], "context": "null", "children_spec": []}]'),
    ("err-tuple-no-context", '[1, {"type": "builtins.tuple", "children_spec": []}]'),
    ("err-tuple-context-null", '[1, {"type": "builtins.tuple", "context": null, "children_spec": []}]'),
    ("err-tuple-context-bad-json", '[1, {"type": "builtins.tuple", "context": "nul", "children_spec": []}]'),
    ("err-tuple-no-children", '[1, {"type": "builtins.tuple", "context": "null"}]'),
    ("err-tuple-children-dict", '[1, {"type": "builtins.tuple", "context": "null", "children_spec": {"a": 1}}]'),
    ("err-tuple-children-int", '[1, {"type": "builtins.tuple", "context": "null", "children_spec": 1}]'),
    ("err-child-bad", '[1, {"type": "builtins.tuple", "context": "null", "children_spec": [1]}]'),
    ("err-enum-no-fqn", "[1, " + node("builtins.dict", '[{"__enum__": true}]') + "]"),
    ("err-defaultdict-not-dict", '[1, {"type": "collections.defaultdict", "context": 5, "children_spec": []}]'),
    ("err-context-extra-data", "[1, " + node("builtins.dict", "[1] [2]") + "]"),
    ("err-unterminated", '[1, {"type": "builtins.tuple'),
    ("err-bad-escape", '[1, "\\x"]'),
]:
    record(id_, text)

# --- call specs of exported programs (what model.json stores) -------------


class Args(torch.nn.Module):
    def forward(self, x, y, *, scale=None):
        return x + y, {"sum": x.sum(), "pair": [x, y]}


class NestedIn(torch.nn.Module):
    def forward(self, xs, d):
        return (xs[0] + d["a"],)


class Structured(torch.nn.Module):
    def forward(self, x):
        return torch.max(x, 0), Point(x, x + 1)


X = torch.ones(2, 3)
for id_, mod, args, kwargs in [
    ("export-args-kwargs", Args(), (X, X), {"scale": X}),
    ("export-nested-in", NestedIn(), ([X, X], {"a": X, "é": None}), {}),
    ("export-structured-out", Structured(), (X,), {}),
]:
    try:
        ep = torch.export.export(mod, args, kwargs)
    except Exception as e:  # noqa: BLE001  (an older torch; see tree())
        lines.append({"id": id_ + "-in", "tree_error": err(e)})
        lines.append({"id": id_ + "-out", "tree_error": err(e)})
        continue
    for side, spec in (("-in", ep.call_spec.in_spec), ("-out", ep.call_spec.out_spec)):
        try:
            text = pytree.treespec_dumps(spec)
        except Exception as e:  # noqa: BLE001
            lines.append({"id": id_ + side, "tree_error": err(e)})
            continue
        record(id_ + side, text)

# --- random trees ---------------------------------------------------------
rng = random.Random(20260)
KEYS = ["a", "b", "key", "é", "日本語", "x y", "q\"uote", "", "\u2028", "tab\t"]


def rkey():
    r = rng.random()
    if r < 0.6:
        return rng.choice(KEYS) + str(rng.randrange(3))
    if r < 0.8:
        return rng.randrange(-5, 100)
    if r < 0.9:
        return rng.choice([0.5, -2.25, 1e20, 3.0])
    return rng.choice([True, None, (1, "t")])


def rtree(depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([T, None, 1, "s", 2.5])
    n = rng.randrange(0, 4)
    kids = [rtree(depth - 1) for _ in range(n)]
    kind = rng.randrange(10)
    if kind == 0:
        return tuple(kids)
    if kind == 1:
        return list(kids)
    if kind in (2, 3):
        return {rkey(): k for k in kids}
    if kind == 4:
        return OrderedDict((rkey(), k) for k in kids)
    if kind == 5:
        return defaultdict(rng.choice([int, list, dict, str]), {rkey(): k for k in kids})
    if kind == 6:
        return deque(kids, maxlen=rng.choice([None, n, n + 2]))
    if kind == 7:
        cls = rng.choice([Point, Triple])
        kids = [rtree(depth - 1) for _ in cls._fields]
        return cls(*kids)
    if kind == 8:
        return torch.return_types.max([rtree(depth - 1), rtree(depth - 1)])
    return (kids, {})


for i in range(150):
    tree(f"random-{i:03}", rtree(rng.randrange(1, 6)))

out = sys.stdout
out.write(dumps({"register": REGISTER}, compact=False) + "\n")
for line in lines:
    out.write(dumps(line, compact=False) + "\n")
