"""Writes the large-tree benchmark case file (issue 18): 6,000 mixed cases
shaped like case files written independently of this repo, 2,190 `build`,
2,780 `lookup` and 1,030 `source_name` cases (in that proportion for other
counts), interleaved. Spec trees are deep `ObjectSpec` / `DictSpec` /
`SeqSpec` nests of about 1.8 KB of case JSON, most leaves `TensorSpec`s
whose dims are derived expressions over the case's vars (`s*2`, `(s+1)//2`,
`s % 8`, `a*b - 1`, ...); each lookup walks into its own tree (mostly to a
leaf, sometimes to a missing key, an inner spec or a mismatched access).

No torch needed: this writes case format v1 only (shared/case-format.md),
deterministically from the seed. The file is generated at run time (by
`oracle/bench-ratio.sh bigtree`, into the cargo target directory), never
committed.

Usage: python3 oracle/make_bench_cases.py [--seed N] [--count N] > FILE.jsonl
"""

import argparse
import json
import random

NAMES = ["batch", "seq", "h", "w", "c", "n", "k", "d"]
FIELDS = ["weight", "bias", "layers", "encoder", "decoder", "attn", "proj",
          "norm", "mlp", "blocks", "embed", "head", "cache", "state", "x", "y"]
KEYS = ["q", "k", "v", "out", "in", "mask", "pos", "tok", 0, 1, 2, 3, 7]


def make_vars(rng):
    n = rng.randint(2, 4)
    out = []
    for i in range(n):
        kind = rng.choice(["ShapeVar", "ShapeVar", "IntVar"])
        v = {"kind": kind, "name": NAMES[i]}
        r = rng.random()
        if r < 0.4:
            v["min"] = rng.randint(2, 8)
            v["max"] = rng.choice([64, 128, 1024, 4096])
        elif r < 0.6:
            v["max"] = rng.choice([32, 512])
        elif kind == "IntVar" and r < 0.8:
            v["min"] = rng.randint(0, 4)
        out.append(v)
    return out


def var(rng, nvars):
    return {"var": rng.randrange(nvars)}


def expr(rng, nvars, depth=0):
    """A derived int expression: what a model author writes for a dim."""
    r = rng.random()
    if depth >= 2 or r < 0.25:
        return var(rng, nvars)
    op = rng.choice(["add", "add", "sub", "mul", "mul", "floordiv", "mod", "add"])
    a = expr(rng, nvars, depth + 1)
    if op in ("floordiv", "mod"):
        b = rng.choice([2, 4, 8, 16, 3])
    elif rng.random() < 0.6:
        b = rng.choice([1, 2, 3, 4, 8, 16, 64])
    else:
        b = expr(rng, nvars, depth + 1)
    if rng.random() < 0.3 and op in ("add", "mul"):
        a, b = b, a
    return {"op": op, "args": [a, b]}


def dim(rng, nvars):
    r = rng.random()
    if r < 0.15:
        return None
    if r < 0.3:
        return rng.choice([1, 3, 16, 64, 768])
    if r < 0.45:
        return var(rng, nvars)
    return expr(rng, nvars)


def tensor(rng, nvars):
    return {"TensorSpec": [dim(rng, nvars) for _ in range(rng.randint(1, 4))]}


def leaf(rng, nvars):
    r = rng.random()
    if r < 0.75:
        return tensor(rng, nvars)
    if r < 0.85:
        return expr(rng, nvars)
    if r < 0.92:
        return None
    return rng.choice([var(rng, nvars), 16])


def tree(rng, nvars, depth, budget):
    """A spec subtree; `budget` (a one-item list) bounds the leaves."""
    if depth == 0 or budget[0] <= 0 or (depth < 3 and rng.random() < 0.3):
        budget[0] -= 1
        return leaf(rng, nvars)
    kind = rng.choice(["ObjectSpec", "ObjectSpec", "DictSpec", "SeqSpec"])
    n = rng.randint(1, 3)
    if kind == "SeqSpec":
        return {"SeqSpec": [tree(rng, nvars, depth - 1, budget) for _ in range(n)]}
    keys = rng.sample(FIELDS if kind == "ObjectSpec" else KEYS, n)
    return {kind: {"dict": [[k, tree(rng, nvars, depth - 1, budget)] for k in keys]}}


def shapes_spec(rng, nvars, target_bytes=1350):
    """A `ShapesSpec` of about `target_bytes` of JSON: params until full."""
    params = []
    used = set()
    while True:
        name = rng.choice(["self", "x", "y", "cfg", "inputs", "state", "mask", "kv"])
        if name in used:
            if len(used) >= 8:
                break
            continue
        used.add(name)
        params.append([name, tree(rng, nvars, rng.randint(3, 6), [rng.randint(4, 10)])])
        if len(json.dumps(params, separators=(",", ":"))) >= target_bytes:
            break
    return {"ShapesSpec": {"params": {"dict": params}}}


def paths(node, prefix):
    """Every (path, node) of a spec tree, path a list of (kind, key)."""
    yield prefix, node
    if isinstance(node, dict) and len(node) == 1:
        (kind, body), = node.items()
        if kind in ("ObjectSpec", "DictSpec"):
            for k, v in body["dict"]:
                yield from paths(v, prefix + [(kind, k)])
        elif kind == "SeqSpec":
            for i, v in enumerate(body):
                yield from paths(v, prefix + [(kind, i)])


def local(name):
    return {"LocalSource": {"local_name": name, "is_input": True}}


def source_for(rng, root, steps):
    src = local(root)
    if root == "self" and rng.random() < 0.5:
        src = {"NNModuleSource": {"base": src}}
    for kind, key in steps:
        if kind == "ObjectSpec":
            src = {"AttrSource": {"base": src, "member": key}}
            if rng.random() < 0.2:
                src = {"NNModuleSource": {"base": src}}
        elif kind == "DictSpec":
            src = {"DictGetItemSource": {"base": src, "index": key}}
        else:
            src = {"GetItemSource": {"base": src, "index": key}}
    return src


def lookup_case(rng, i):
    vars_ = make_vars(rng)
    spec = shapes_spec(rng, len(vars_))
    params = spec["ShapesSpec"]["params"]["dict"]
    root, sub = rng.choice(params)
    all_paths = list(paths(sub, []))
    leaves = [p for p, n in all_paths
              if not (isinstance(n, dict) and len(n) == 1
                      and next(iter(n)) in ("ObjectSpec", "DictSpec", "SeqSpec"))]
    r = rng.random()
    if r < 0.75 and leaves:
        steps = rng.choice(leaves)
    elif r < 0.85:
        steps, _ = rng.choice(all_paths)  # possibly an inner spec: an error
    elif r < 0.95:
        steps = rng.choice(leaves or [[]]) + [("ObjectSpec", "missing")]
    else:
        steps = [("ObjectSpec", "nothere")]
        root = "absent"
    return {"id": f"bigtree-lookup-{i}", "kind": "lookup", "vars": vars_,
            "spec": spec, "source": source_for(rng, root, steps)}


def build_case(rng, i):
    vars_ = make_vars(rng)
    r = rng.random()
    if r < 0.5:
        value = shapes_spec(rng, len(vars_), rng.choice([600, 1200, 1800]))
    elif r < 0.8:
        value = tree(rng, len(vars_), rng.randint(2, 5), [rng.randint(3, 8)])
    else:
        value = expr(rng, len(vars_))
    return {"id": f"bigtree-build-{i}", "kind": "build", "vars": vars_, "value": value}


def source_name_case(rng, i):
    root = rng.choice(["self", "x", "L", "cfg"])
    steps = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(["ObjectSpec", "ObjectSpec", "DictSpec", "SeqSpec"])
        steps.append((kind, rng.choice(FIELDS) if kind == "ObjectSpec"
                      else rng.choice(KEYS) if kind == "DictSpec" else rng.randrange(8)))
    return {"id": f"bigtree-source-name-{i}", "kind": "source_name",
            "source": source_for(rng, root, steps)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--count", type=int, default=6000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n_build = args.count * 2190 // 6000
    n_lookup = args.count * 2780 // 6000
    n_name = args.count - n_build - n_lookup
    kinds = ["build"] * n_build + ["lookup"] * n_lookup + ["source_name"] * n_name
    rng.shuffle(kinds)
    make = {"build": build_case, "lookup": lookup_case, "source_name": source_name_case}
    for i, kind in enumerate(kinds):
        print(json.dumps(make[kind](rng, i), separators=(",", ":")))


if __name__ == "__main__":
    main()
