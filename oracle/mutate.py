"""Mutated program files: the zoo's `.pt2` archives with one schema-aware change
to `models/model.json` each (issue 15 item 3, issue 20).

Usage:
    .oracle/bin/python oracle/mutate.py --seed 1 --count 2000 --out target/mutants/s1

Mutant i (0-based) of a seed is drawn in two lanes (issue 37 item 3: a 5,071-node
program takes PyTorch 20-45 s to load, the others 5-150 ms):

- the program's cost is 1 + its node count (every graph, the subgraphs of
  higher-order ops too: Zoo.costs), an estimate of torch.export.load's time read
  from the zoo's JSON, never measured on the machine; programs of cost above
  LARGE_NODES + 1 (200 nodes: large-mlp, decoder-5k) form the large lane, the
  others the small lane;
- mutant i is of the large lane when i % LARGE_PERIOD == LARGE_PERIOD - 1, else
  of the small lane; its class is CLASSES[i % len(CLASSES)] in the small lane and
  CLASSES[(i // LARGE_PERIOD) % len(CLASSES)] in the large one;
- the program, variant and site come from random.Random(f"{seed}:{i}"): the
  program uniformly from the small lane's, or from the large lane's weighted by
  1/cost (each large program gets the same share of the time); a class listed
  in WANTS (subgraph, effects_top) draws only from the programs it has sites in.

Before issue 37 the program was drawn uniformly from the whole zoo and the class
was CLASSES[i % 18]: seeds made before then make other mutants now.

So a mutant depends only on (seed, i, the zoo, torch's schema and operator set):
a larger --count is the smaller run plus more mutants, and `--jobs` changes
which worker makes a mutant, never what it is. Every archive is the original zip
with only `<prefix>/models/model.json` replaced; every other entry keeps its
bytes, its ZipInfo and its place. DIR gets one `<id>.pt2` per mutant and
`mutants.jsonl`, one record per mutant:

    {"id", "program", "class", "mutation": "<what changed, with its JSON path>",
     "expect": "accept" | "refuse" | null}

"expect" is only the author's guess when writing the variant (null: no guess);
the outcome is what `oracle/mutant_outcomes.py` measures.

The classes of issue 37 item 2 reach what the first eighteen did not: `subgraph`
(any site class on the graphs of cond/map/while_loop/scan, `as_graph` arguments,
and symbolic sizes made constants or given other hints there), `metadata_keys`
(every key deserialize_metadata parses, with other JSON types and edge strings),
`range_edges` (ranges that exclude sizes: max_val < 0, min_val > max_val, a point,
on backed and unbacked symbols; ranges for symbols with none; hints outside and
at the edges of their ranges), `scalar_retype` (each scalar given each other JSON
type) and `effects_top` (`treespec_namedtuple_fields`, `with_effects` outputs,
token specs). Those of issue 35 item 6 aim at the writers: `edge_values` (-inf,
inf, nan, -0.0, subnormals, integers at and past +-2**63, very long strings,
non-ASCII names), `union_arms` (a union written as each other arm, well typed)
and `field_defaults` (required fields left at their type's default).

The mutations are schema-aware (oracle/mutate_schema.py): the model JSON is
walked against the dataclasses of `torch/_export/serde/schema.py` (schema.yaml in
the same directory is the same schema), so every JSON node is known as a
dataclass, a union (one tag), an enum, a list, a dict or a scalar. The classes
(CLASSES, oracle/mutate_classes.py) cover both directions: changes PyTorch
refuses and ones it accepts (a float 2.0 where an int is, a moved schema minor
version, a `torchx.ops.aten...` target prefix, unknown fields, a duplicated key
whose last copy is the original, ...).

DIR must be under target/ (mutants are never committed).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import zipfile

import torch
from torch._export.serde import schema as S

# Mutants are written as torch.export.save writes program JSON (mutate.dumps).
from golden_encoding import dumps_program_json as dumps
from mutate_classes import CLASSES, WANTS
from mutate_schema import Ctx, walk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "corpus", "programs")


# ---------------------------------------------------------------------------
# Archives.
# ---------------------------------------------------------------------------

def model_entry(z: zipfile.ZipFile) -> str:
    names = [n for n in z.namelist() if n.endswith("models/model.json")]
    if not names and "serialized_exported_program.json" in z.namelist():
        # the pre-2.8 layout (legacy-format.pt2): its program JSON is at the root
        names = ["serialized_exported_program.json"]
    if len(names) != 1:
        raise SystemExit(f"{z.filename}: expected one models/model.json, found {names}")
    return names[0]


def write_mutant(src: str, dst, model_bytes: bytes) -> None:
    """The archive `src` with its program JSON replaced, written to `dst` (a
    path or a binary file object)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        name = model_entry(zin)
        for info in zin.infolist():
            data = model_bytes if info.filename == name else zin.read(info)
            zi = copy.copy(info)
            zout.writestr(zi, data, compress_type=info.compress_type)


def zoo_programs() -> list[str]:
    """The zoo's archive names, sorted (the mutants' choice of program)."""
    return sorted(f for f in os.listdir(PROGRAMS) if f.endswith(".pt2"))


def read_docs(programs, directory=PROGRAMS) -> dict:
    docs = {}
    for p in programs:
        with zipfile.ZipFile(os.path.join(directory, p)) as z:
            docs[p] = json.loads(z.read(model_entry(z)))
    return docs


# ---------------------------------------------------------------------------
# The draw: lanes by cost (issue 37 item 3).
# ---------------------------------------------------------------------------

# A program with more graph nodes than this (subgraphs counted) is in the large
# lane: PyTorch's load grows with the nodes (measured on torch 2.15.0: 5-20 ms
# for the zoo's programs of 0-29 nodes, 2.5-4.4 s for large-mlp's 722, 19-45 s
# for decoder-5k's 5,071).
LARGE_NODES = 200
# Mutant i is of the large lane when i % LARGE_PERIOD == LARGE_PERIOD - 1, so
# the large lane takes about a tenth of the time (one large mutant, 1-60 s, per
# 1,999 small ones of 20-70 ms).
LARGE_PERIOD = 2000
# The large lane's oracle timeout is the run's --timeout times this.
LARGE_TIMEOUT_FACTOR = 15


def count_nodes(doc) -> int:
    """Nodes of every graph of the program (the nested graphs of higher-order ops too)."""
    n = 0
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            nodes = v.get("nodes")
            if isinstance(nodes, list) and "tensor_values" in v:
                n += len(nodes)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return n


class Zoo:
    """The programs mutants are drawn from, with their lanes and costs: the
    cost of a program is 1 + its node count, a deterministic estimate of
    PyTorch's load time (it depends on the zoo only, never on the machine)."""

    def __init__(self, programs, docs, texts=None, laned=True):
        self.programs = list(programs)
        self.docs = docs
        self.texts = texts if texts is not None else {p: dumps(d) for p, d in docs.items()}
        self.costs = {p: 1 + count_nodes(docs[p]) for p in self.programs}
        large = [p for p in self.programs if laned and self.costs[p] > LARGE_NODES + 1]
        # laned=False (the one generated program of `--mutate --programs`): one lane
        self.lanes = {"small": [p for p in self.programs if p not in large], "large": large}
        self._sites: dict = {}
        self._wants: dict = {}

    def lane_of(self, i: int) -> str:
        if not self.lanes["small"]:
            return "large"
        if self.lanes["large"] and i % LARGE_PERIOD == LARGE_PERIOD - 1:
            return "large"
        return "small"

    def class_of(self, i: int, classes) -> str:
        if self.lane_of(i) == "large":
            return classes[(i // LARGE_PERIOD) % len(classes)]
        return classes[i % len(classes)]

    def sites(self, prog):
        """The schema walk of the program (cached for the small lane's)."""
        got = self._sites.get(prog)
        if got is None:
            got = walk(self.docs[prog], S.ExportedProgram)
            if self.costs[prog] <= LARGE_NODES + 1:
                self._sites[prog] = got
        return got

    def wants(self, cls, prog) -> bool:
        pred = WANTS.get(cls)
        if pred is None:
            return True
        key = (cls, prog)
        if key not in self._wants:
            self._wants[key] = bool(pred(self.docs[prog], self.sites(prog)))
        return self._wants[key]

    def describe(self) -> dict:
        """What the fuzzer's Rust side is told (the `mutant_lanes` request)."""
        return {"period": LARGE_PERIOD, "timeout_factor": LARGE_TIMEOUT_FACTOR,
                "lanes": {k: [p[:-len(".pt2")] for p in v] for k, v in self.lanes.items()},
                "costs": {p[:-len(".pt2")]: c for p, c in self.costs.items()}}


def make_mutant(seed: int, i: int, zoo: Zoo, ops, op_keys, classes):
    """Mutant i of `seed`: (program, class, description, expect, model JSON
    text, lane), or None when no program of its lane has a site for its class.

    The draw: the lane is zoo.lane_of(i); the class CLASSES[i % n] in the small
    lane, CLASSES[(i // LARGE_PERIOD) % n] in the large one; then, from
    random.Random(f"{seed}:{i}"), up to 50 attempts of: a program of the lane
    (uniform in the small lane, weighted by 1/cost in the large one, so each
    large program gets the same share of time; a class of WANTS draws only from
    the programs it has sites in), then the class's variant and site."""
    lane = zoo.lane_of(i)
    cls = zoo.class_of(i, classes)
    rng = random.Random(f"{seed}:{i}")
    progs = [p for p in zoo.lanes[lane] if zoo.wants(cls, p)]
    if not progs:
        return None
    weights = [1.0 / zoo.costs[p] for p in progs] if lane == "large" else None
    for _attempt in range(50):
        prog = rng.choices(progs, weights)[0] if weights else rng.choice(progs)
        c = Ctx(json.loads(zoo.texts[prog]), rng, ops, zoo.sites(prog))
        c.op_keys = op_keys
        desc = CLASSES[cls](c)
        if desc is not None:
            return prog, cls, desc, c.expect, dumps(c.doc), lane
    return None


def aten_ops():
    ops = {}
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        name = full[len("aten::"):]
        base, _, overload = name.partition(".")
        try:
            schema = str(torch._C._get_schema("aten::" + base, overload))
        except Exception:
            continue
        ops[(base, overload or "default")] = schema
    return ops


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--classes", help="comma-separated subset of the classes")
    args = ap.parse_args(argv)

    out = os.path.abspath(args.out)
    if not out.startswith(os.path.join(ROOT, "target") + os.sep) and "/target" not in out:
        raise SystemExit(f"--out must be under target/ (mutants are never committed): {out}")
    os.makedirs(out, exist_ok=True)

    classes = list(CLASSES) if not args.classes else args.classes.split(",")
    programs = zoo_programs()
    zoo = Zoo(programs, read_docs(programs))
    ops = aten_ops()
    op_keys = sorted(ops)

    written = 0
    with open(os.path.join(out, "mutants.jsonl"), "w") as rec:
        for i in range(args.count):
            made = make_mutant(args.seed, i, zoo, ops, op_keys, classes)
            if made is None:
                print(f"mutant {i}: no site for {zoo.class_of(i, classes)}", file=sys.stderr)
                continue
            prog, cls, desc, expect, text, lane = made
            mid = f"s{args.seed}-{i:05d}-{cls}"
            write_mutant(os.path.join(PROGRAMS, prog), os.path.join(out, mid + ".pt2"),
                         text.encode("utf-8"))
            rec.write(json.dumps({"id": mid, "program": prog[:-4], "class": cls, "lane": lane,
                                  "mutation": desc, "expect": expect}) + "\n")
            written += 1
    print(f"{written} mutants in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
