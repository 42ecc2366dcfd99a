"""The mutation classes of oracle/mutate.py (CLASSES): each takes the context of
one program (mutate_schema.Ctx) and changes its document at one site, returning
what it changed with its JSON path, or None when the program has no site for it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import typing

from torch._export.serde import schema as S

from golden_encoding import Dup
from mutate_schema import (
    Ctx, _field_hints, arg_tensor_refs, field_default, fmt_path, get, graph_of, hints, kind_of,
    other_values, put, short, strip_optional,
)


# ---------------------------------------------------------------------------
# Mutation classes. Each variant returns a description, or None when the
# program has no site for it (another variant or program is tried).
# ---------------------------------------------------------------------------

def _dataclass_field_site(c: Ctx, allow=lambda s, f: True):
    by_type: dict = {}
    for s in c.of_kind("dataclass"):
        v = get(c.doc, s.path)
        if isinstance(v, dict) and any(f in v and allow(s, f) for f in (x.name for x in dataclasses.fields(s.tp))):
            by_type.setdefault(s.name, []).append(s)
    if not by_type:
        return None, None
    s = c.pick(by_type[c.pick(sorted(by_type))])
    v = get(c.doc, s.path)
    f = c.pick([x.name for x in dataclasses.fields(s.tp) if x.name in v and allow(s, x.name)])
    return s, f


def field_delete(c: Ctx):
    s, f = _dataclass_field_site(c)
    if s is None:
        return None
    del get(c.doc, s.path)[f]
    c.expect = "accept" if field_default(s.tp, f) else None
    return f"delete field {f} of {s.name} at {fmt_path(s.path + (f,))}"


def field_duplicate(c: Ctx):
    s, f = _dataclass_field_site(c)
    if s is None:
        return None
    obj = get(c.doc, s.path)
    orig = obj[f]
    variant = c.rng.choice(["same", "first_other", "last_other"])
    other = other_values(orig, c.rng)
    pairs = []
    for k, v in obj.items():
        if k != f:
            pairs.append((k, v))
        elif variant == "same":
            pairs += [(k, v), (k, copy.deepcopy(v))]
        elif variant == "first_other":
            pairs += [(k, other), (k, v)]
        else:
            pairs += [(k, v), (k, other)]
    if s.path:
        put(c.doc, s.path, Dup(pairs))
    else:
        c.doc = Dup(pairs)
    where = fmt_path(s.path + (f,))
    if variant == "same":
        c.expect = "accept"
        return f"duplicate key {f!r} at {where} (same value twice)"
    if variant == "first_other":
        c.expect = "accept"
        return f"duplicate key {f!r} at {where}: first copy {short(other)}, last copy the original"
    return f"duplicate key {f!r} at {where}: last copy {short(other)} (was {short(orig)})"


def field_retype(c: Ctx):
    sites = [s for s in c.sites if s.path and s.kind != "other"]
    # choose by kind first so scalar sites do not drown the rest
    kinds = sorted({s.kind for s in sites})
    k = c.pick(kinds)
    s = c.pick([x for x in sites if x.kind == k])
    v = get(c.doc, s.path)
    new = other_values(v, c.rng)
    if isinstance(v, int) and not isinstance(v, bool) and isinstance(new, float) and new == int(new):
        c.expect = "accept"
    put(c.doc, s.path, new)
    return f"retype {s.name} at {fmt_path(s.path)}: {short(v)} -> {short(new)}"


def _union_site(c: Ctx):
    """A union value with one tag: a union type first, then one of its sites
    (so rare union types are drawn as often as common ones)."""
    sites = [s for s in c.of_kind("union") if s.path and isinstance(get(c.doc, s.path), dict)
             and len(get(c.doc, s.path)) == 1]
    by_type: dict = {}
    for s in sites:
        by_type.setdefault(s.name, []).append(s)
    if not by_type:
        return None
    return c.pick(by_type[c.pick(sorted(by_type))])


def union_tag_unknown(c: Ctx):
    s = _union_site(c)
    if s is None:
        return None
    v = get(c.doc, s.path)
    (tag, val), = v.items()
    tags = [f.name for f in dataclasses.fields(s.tp)]
    variant = c.rng.choice(["unknown", "unknown", "other_tag", "empty", "two_tags", "case"])
    if variant == "unknown":
        new_tag = c.rng.choice(["as_bogus", "as_" + tag, tag + "s", "type", ""])
        put(c.doc, s.path, {new_tag: val})
        return f"unknown tag {new_tag!r} for {s.name} at {fmt_path(s.path)} (was {tag!r})"
    if variant == "other_tag":
        new_tag = c.pick([t for t in tags if t != tag])
        put(c.doc, s.path, {new_tag: val})
        return f"tag {tag!r} -> {new_tag!r} (another {s.name} tag, value kept) at {fmt_path(s.path)}"
    if variant == "empty":
        put(c.doc, s.path, {})
        return f"empty object for {s.name} at {fmt_path(s.path)}"
    if variant == "two_tags":
        t2 = c.pick([t for t in tags if t != tag])
        put(c.doc, s.path, {tag: val, t2: copy.deepcopy(val)})
        return f"two tags {tag!r}, {t2!r} for {s.name} at {fmt_path(s.path)}"
    put(c.doc, s.path, {tag.upper(): val})
    return f"tag {tag!r} -> {tag.upper()!r} for {s.name} at {fmt_path(s.path)}"


def enum_value_unknown(c: Ctx):
    sites = [s for s in c.of_kind("enum") if s.path]
    by_type: dict = {}
    for s in sites:
        by_type.setdefault(s.name, []).append(s)
    if not by_type:
        return None
    s = c.pick(by_type[c.pick(sorted(by_type))])
    v = get(c.doc, s.path)
    values = sorted(int(m) for m in s.tp)
    gaps = [x for x in range(0, max(values) + 2) if x not in values]
    variant = c.rng.choice(["unknown", "unknown", "negative", "other_valid", "name", "float", "null"])
    if variant == "unknown":
        new = c.pick(gaps + [max(values) + 1, 99, 1000])
    elif variant == "negative":
        new = -1
    elif variant == "other_valid":
        new = c.pick([x for x in values if x != v])
    elif variant == "name":
        new = s.tp(v).name if isinstance(v, int) and v in values else "FLOAT"
    elif variant == "float":
        new = float(v) if isinstance(v, int) else 1.0
    else:
        new = None
        if s.optional:
            c.expect = "accept"
    put(c.doc, s.path, new)
    return f"{s.name} at {fmt_path(s.path)}: {short(v)} -> {short(new)}"


def schema_version(c: Ctx):
    sv = c.doc.get("schema_version")
    if not isinstance(sv, dict):
        return None
    major, minor = sv.get("major"), sv.get("minor")
    variant = c.rng.choice(["major+1", "major-1", "minor+1", "minor-1", "minor0", "minor_big",
                            "major_str", "minor_float", "major_float", "delete", "delete_minor",
                            "null_major", "major0"])
    if variant == "major+1":
        sv["major"] = major + 1
    elif variant == "major-1":
        sv["major"] = major - 1
    elif variant == "major0":
        sv["major"] = 0
    elif variant == "minor+1":
        sv["minor"] = minor + 1
        c.expect = "accept"
    elif variant == "minor-1":
        sv["minor"] = minor - 1
        c.expect = "accept"
    elif variant == "minor0":
        sv["minor"] = 0
        c.expect = "accept"
    elif variant == "minor_big":
        sv["minor"] = 2**40
    elif variant == "major_str":
        sv["major"] = str(major)
    elif variant == "minor_float":
        sv["minor"] = float(minor)
    elif variant == "major_float":
        sv["major"] = float(major)
    elif variant == "delete":
        del c.doc["schema_version"]
        return "delete $.schema_version"
    elif variant == "delete_minor":
        del sv["minor"]
    else:
        sv["major"] = None
    return f"$.schema_version {short({'major': major, 'minor': minor})} -> {short(sv)}"


def _op_nodes(c: Ctx, prefix="torch.ops."):
    return [(p, n) for p, n in c.nodes() if isinstance(n.get("target"), str) and n["target"].startswith(prefix)]


def target_missing_op(c: Ctx):
    nodes = _op_nodes(c)
    if not nodes:
        return None
    p, n = c.pick(nodes)
    t = n["target"]
    parts = t.split(".")
    variant = c.rng.choice(["name", "overload", "namespace", "packet", "extra", "torchx",
                            "empty", "operator", "math", "bare", "hash"])
    if variant == "name" and len(parts) >= 4:
        new = ".".join(parts[:3] + [parts[3] + "_nonexistent"] + parts[4:])
    elif variant == "overload" and len(parts) >= 5:
        new = ".".join(parts[:4] + ["nonexistent_overload"])
    elif variant == "namespace" and len(parts) >= 3:
        new = ".".join(parts[:2] + ["nonexistent_ns"] + parts[3:])
    elif variant == "packet" and len(parts) >= 5:
        new = ".".join(parts[:4])
    elif variant == "extra":
        new = t + ".extra"
    elif variant == "torchx":
        new = "torchx" + t[len("torch"):]
        c.expect = "accept"
    elif variant == "empty":
        new = ""
    elif variant == "operator":
        new = "_operator.nonexistent_fn"
    elif variant == "math":
        new = "math.nonexistent_fn"
    elif variant == "hash":
        new = "#nonexistent_extension"
    else:
        new = "nonexistent.module." + parts[-2] if len(parts) >= 2 else "nonexistent"
    n["target"] = new
    return f"target at {fmt_path(p + ('target',))}: {t!r} -> {new!r}"


def target_other_op(c: Ctx):
    nodes = _op_nodes(c, "torch.ops.aten.")
    if not nodes:
        return None
    p, n = c.pick(nodes)
    t = n["target"]
    parts = t.split(".")
    if len(parts) != 5:
        return None
    cur = (parts[3], parts[4])
    cur_schema = c.ops.get(cur)
    variant = c.rng.choice(["any", "any", "same_name"])
    cands = []
    if variant == "same_name":
        cands = [k for k in c.ops if k[0] == cur[0] and k != cur and c.ops[k] != cur_schema]
    if not cands:
        while True:
            k = c.rng.choice(c.op_keys)
            if k != cur and c.ops[k] != cur_schema:
                cands = [k]
                break
    k = c.pick(sorted(cands))
    new = f"torch.ops.aten.{k[0]}.{k[1]}"
    n["target"] = new
    return f"target at {fmt_path(p + ('target',))}: {t!r} -> {new!r} ({c.ops[k]})"


def node_args(c: Ctx):
    nodes = [(p, n) for p, n in c.nodes() if isinstance(n.get("inputs"), list) and n["inputs"]]
    if not nodes:
        return None
    p, n = c.pick(nodes)
    ins = n["inputs"]
    i = c.rng.randrange(len(ins))
    a = ins[i]
    where = fmt_path(p + ("inputs", i))
    variant = c.rng.choice(["rename", "swap_names", "drop", "retype", "kind", "extra", "reorder",
                            "int_float"])
    if variant == "rename":
        old = a.get("name")
        a["name"] = "bogus_arg"
        return f"rename argument {old!r} -> 'bogus_arg' at {where}"
    if variant == "swap_names" and len(ins) >= 2:
        j = c.pick([x for x in range(len(ins)) if x != i])
        ins[i]["name"], ins[j]["name"] = ins[j].get("name"), ins[i].get("name")
        return f"swap argument names at {where} and [{j}] ({ins[j].get('name')!r}, {ins[i].get('name')!r})"
    if variant == "reorder" and len(ins) >= 2:
        j = c.pick([x for x in range(len(ins)) if x != i])
        ins[i], ins[j] = ins[j], ins[i]
        return f"swap arguments {where} and [{j}]"
    if variant == "drop":
        del ins[i]
        return f"drop argument {a.get('name')!r} at {where}"
    if variant == "kind":
        old = a.get("kind")
        a["kind"] = {1: 2, 2: 1}.get(old, 1)
        return f"kind of argument {a.get('name')!r} at {where}: {old!r} -> {a['kind']!r}"
    if variant == "extra":
        ins.append({"name": "bogus_extra", "arg": {"as_int": 1}, "kind": 2})
        return f"extra keyword argument 'bogus_extra'=1 appended to {fmt_path(p + ('inputs',))}"
    arg = a.get("arg")
    if not isinstance(arg, dict) or len(arg) != 1:
        return None
    (tag, v), = arg.items()
    if variant == "int_float":
        if tag == "as_int":
            a["arg"] = {"as_int": float(v)}
            c.expect = "accept"
            return f"argument {a.get('name')!r} at {where}: as_int {v} -> {float(v)}"
        if tag == "as_ints":
            a["arg"] = {"as_ints": [float(x) for x in v]}
            c.expect = "accept"
            return f"argument {a.get('name')!r} at {where}: as_ints {short(v)} -> floats"
        return None
    # retype
    names = c.tensor_names(graph_of(p))
    if tag in ("as_tensor", "as_tensors"):
        new = c.rng.choice([{"as_int": 1}, {"as_none": True}, {"as_float": 1.5}, {"as_string": "x"}])
    elif tag == "as_none":
        new = {"as_tensor": {"name": c.pick(names)}} if names else {"as_int": 0}
    elif tag in ("as_int", "as_ints", "as_float", "as_floats", "as_bool", "as_bools"):
        new = c.rng.choice([{"as_string": "1"}, {"as_tensor": {"name": c.pick(names) or "x"}},
                            {"as_bool": True}, {"as_none": True}])
    else:
        new = {"as_int": 1}
    a["arg"] = new
    return f"argument {a.get('name')!r} at {where}: {short(arg)} -> {short(new)}"


def node_outputs(c: Ctx):
    nodes = [(p, n) for p, n in c.nodes() if isinstance(n.get("outputs"), list) and n["outputs"]]
    if not nodes:
        return None
    p, n = c.pick(nodes)
    outs = n["outputs"]
    i = c.rng.randrange(len(outs))
    o = outs[i]
    where = fmt_path(p + ("outputs", i))
    variant = c.rng.choice(["drop_all", "drop", "rename", "retype_list", "retype_none", "extra",
                            "retype_int"])
    if variant == "drop_all":
        n["outputs"] = []
        return f"drop all outputs of {fmt_path(p)}"
    if variant == "drop":
        del outs[i]
        return f"drop output {short(o)} at {where}"
    if variant == "extra":
        outs.append({"as_tensor": {"name": c.fresh("extra_out")}})
        return f"extra output {short(outs[-1])} appended at {fmt_path(p + ('outputs',))}"
    if variant == "retype_int":
        outs[i] = {"as_int": 3}
        return f"output at {where}: {short(o)} -> {{\"as_int\": 3}}"
    if variant == "retype_none":
        outs[i] = {"as_none": True}
        return f"output at {where}: {short(o)} -> {{\"as_none\": true}}"
    refs = arg_tensor_refs(p + ("outputs", i), o)
    if variant == "retype_list":
        if isinstance(o, dict) and "as_tensor" in o:
            outs[i] = {"as_tensors": [o["as_tensor"]]}
            return f"output at {where}: as_tensor -> as_tensors [same]"
        if isinstance(o, dict) and "as_tensors" in o:
            outs[i] = {"as_tensor": o["as_tensors"][0]} if o["as_tensors"] else {"as_none": True}
            return f"output at {where}: as_tensors -> {short(outs[i])}"
        return None
    if not refs:
        return None
    rp = c.pick(refs)
    old = get(c.doc, rp)
    new = c.fresh("renamed")
    put(c.doc, rp, new)
    return f"rename output value {old!r} -> {new!r} at {fmt_path(rp)} (uses not renamed)"


def value_dangling(c: Ctx):
    variant = c.rng.choice(["node_input", "node_input", "graph_output", "output_spec",
                            "input_spec", "tensor_values", "sym_values", "graph_input"])
    if variant == "node_input":
        refs = []
        for p, n in c.nodes():
            for i, a in enumerate(n.get("inputs") or []):
                if isinstance(a, dict):
                    refs += arg_tensor_refs(p + ("inputs", i, "arg"), a.get("arg"))
        rp = c.pick(refs)
    elif variant == "graph_output":
        refs = []
        for g in c.graphs():
            for i, a in enumerate(get(c.doc, g).get("outputs") or []):
                refs += arg_tensor_refs(g + ("outputs", i), a)
        rp = c.pick(refs)
    elif variant == "graph_input":
        refs = []
        for g in c.graphs():
            for i, a in enumerate(get(c.doc, g).get("inputs") or []):
                refs += arg_tensor_refs(g + ("inputs", i), a)
        rp = c.pick(refs)
    elif variant in ("output_spec", "input_spec"):
        key = variant + "s"
        specs = c.doc["graph_module"]["signature"].get(key) or []
        refs = []
        for i, sp in enumerate(specs):
            if isinstance(sp, dict) and len(sp) == 1:
                (tag, v), = sp.items()
                base = ("graph_module", "signature", key, i, tag)
                if isinstance(v, dict) and isinstance(v.get("arg"), dict):
                    if "name" in v["arg"] and isinstance(v["arg"]["name"], str):
                        refs.append(base + ("arg", "name"))
                    else:
                        refs += arg_tensor_refs(base + ("arg",), v["arg"])
        rp = c.pick(refs)
    elif variant == "tensor_values":
        cands = [(g, k) for g in c.graphs() for k in get(c.doc, g).get("tensor_values", {})]
        gk = c.pick(cands)
        if gk is None:
            return None
        del get(c.doc, gk[0])["tensor_values"][gk[1]]
        return f"delete tensor_values entry {gk[1]!r} at {fmt_path(gk[0] + ('tensor_values',))}"
    else:
        cands = [(g, d, k) for g in c.graphs() for d in ("sym_int_values", "sym_bool_values", "sym_float_values")
                 for k in (get(c.doc, g).get(d) or {})]
        gk = c.pick(cands)
        if gk is None:
            return None
        del get(c.doc, gk[0])[gk[1]][gk[2]]
        return f"delete {gk[1]} entry {gk[2]!r} at {fmt_path(gk[0] + (gk[1],))}"
    if rp is None:
        return None
    old = get(c.doc, rp)
    new = "dangling_" + str(old)
    put(c.doc, rp, new)
    return f"reference {old!r} -> undefined {new!r} at {fmt_path(rp)}"


def value_duplicate(c: Ctx):
    variant = c.rng.choice(["node_output", "node_output", "output_is_input", "node_name",
                            "graph_input", "input_spec"])
    nodes = c.nodes()
    if variant in ("node_output", "output_is_input"):
        outs = []
        for p, n in nodes:
            for i, o in enumerate(n.get("outputs") or []):
                outs += arg_tensor_refs(p + ("outputs", i), o)
        if not outs:
            return None
        rp = c.pick(outs)
        g = rp[: rp.index("nodes")]
        if variant == "node_output":
            others = [get(c.doc, q) for q in outs if q != rp and q[: q.index("nodes")] == g]
        else:
            others = []
            for a in get(c.doc, g).get("inputs") or []:
                if isinstance(a, dict) and "as_tensor" in a and isinstance(a["as_tensor"], dict):
                    others.append(a["as_tensor"].get("name"))
        others = [o for o in others if isinstance(o, str) and o != get(c.doc, rp)]
        if not others:
            return None
        old, new = get(c.doc, rp), c.pick(others)
        put(c.doc, rp, new)
        what = "another node's output" if variant == "node_output" else "a graph input"
        return f"output value {old!r} -> {new!r} ({what}) at {fmt_path(rp)}"
    if variant == "node_name":
        named = [(p, n) for p, n in nodes if isinstance(n.get("name"), str)]
        if len(named) < 2:
            return None
        (p, n), (q, m) = c.rng.sample(named, 2)
        old = n["name"]
        n["name"] = m["name"]
        return f"node name {old!r} -> {m['name']!r} (the name of {fmt_path(q)}) at {fmt_path(p + ('name',))}"
    if variant == "graph_input":
        gi = c.doc["graph_module"]["graph"].get("inputs") or []
        if len(gi) < 2:
            return None
        i, j = c.rng.sample(range(len(gi)), 2)
        old = gi[i]
        gi[i] = copy.deepcopy(gi[j])
        return f"graph input {short(old)} -> {short(gi[j])} (duplicate of [{j}]) at $.graph_module.graph.inputs[{i}]"
    specs = c.doc["graph_module"]["signature"].get("input_specs") or []
    if not specs:
        return None
    i = c.rng.randrange(len(specs))
    specs.insert(i, copy.deepcopy(specs[i]))
    return f"input spec {short(specs[i])} duplicated at $.graph_module.signature.input_specs[{i}]"


BROKEN_EXPRS = [
    "s0\n+1", "s77\n+1", "s0 +", "+", "", " ", "(((", "s0 $ 1", "s0 +* 1", "s0 @@ 2",
    "unknown_sym + 1", "zz9", "s999", "s77 + u99", "Symbol('s77', positive=True, integer=True",
    "Symbol(s77)", "Symbol('s77', bogus_kw=True)", "Integer('x')", "1/0", "oo", "nan", "True",
    "2", "Symbol('s77', positive=True, integer=True) + 1", "Max(", "Symbol('', integer=True)",
    "s0\t+ 1", "s0;1", "lambda: 1", "Symbol('s77', positive=True, integer=True)\n",
]


def expr_str_broken(c: Ctx):
    sites = c.sym_expr_sites()
    if not sites:
        # range constraint keys and sym values are the other expression texts
        return None
    s = c.pick(sites)
    e = get(c.doc, s.path)
    old = e.get("expr_str")
    new = c.rng.choice(BROKEN_EXPRS)
    if new in ("2",) or new == "Symbol('s77', positive=True, integer=True)\n":
        c.expect = None
    e["expr_str"] = new
    return f"expr_str at {fmt_path(s.path + ('expr_str',))}: {short(old, 40)} -> {new!r}"


def range_constraints(c: Ctx):
    rc = c.doc.get("range_constraints")
    if not isinstance(rc, dict):
        return None
    keys = list(rc)
    variant = c.rng.choice(["min_gt_max", "min_2_64", "max_2_64", "float", "float_int", "bool",
                            "string", "null", "negative", "unknown_key", "rename_key",
                            "expr_key", "delete_key", "infinity", "delete_field", "empty"])
    if variant == "unknown_key":
        rc["zz_unknown"] = {"min_val": 0, "max_val": 10}
        return "add range constraint 'zz_unknown' [0, 10] to $.range_constraints"
    if variant == "empty":
        c.doc["range_constraints"] = {}
        return f"$.range_constraints {short(rc)} -> {{}}"
    if not keys:
        return None
    k = c.pick(keys)
    r = rc[k]
    where = fmt_path(("range_constraints", k))
    if not isinstance(r, dict):
        return None
    lo, hi = r.get("min_val"), r.get("max_val")
    if variant == "min_gt_max":
        r["min_val"], r["max_val"] = (hi if isinstance(hi, int) else 10) + 5, hi if isinstance(hi, int) else 10
    elif variant == "min_2_64":
        r["min_val"] = 2**64
    elif variant == "max_2_64":
        r["max_val"] = 2**64
    elif variant == "float":
        f = c.rng.choice(["min_val", "max_val"])
        r[f] = (r[f] or 0) + 0.5
    elif variant == "float_int":
        f = c.rng.choice(["min_val", "max_val"])
        r[f] = float(r[f] or 0)
    elif variant == "bool":
        r[c.rng.choice(["min_val", "max_val"])] = c.rng.choice([True, False])
    elif variant == "string":
        f = c.rng.choice(["min_val", "max_val"])
        r[f] = str(r[f])
    elif variant == "null":
        r[c.rng.choice(["min_val", "max_val"])] = None
    elif variant == "negative":
        r["min_val"] = -5
    elif variant == "infinity":
        r["max_val"] = float("inf")
    elif variant == "delete_field":
        f = c.rng.choice(["min_val", "max_val"])
        del r[f]
        return f"delete {f} of {where}"
    elif variant == "rename_key":
        nk = c.fresh("s")
        rc[nk] = rc.pop(k)
        return f"rename range constraint key {k!r} -> {nk!r} at $.range_constraints"
    elif variant == "expr_key":
        nk = c.rng.choice([k + " + 1", k + "\n", "2*" + k, k + " $"])
        rc[nk] = rc.pop(k)
        return f"range constraint key {k!r} -> {nk!r} at $.range_constraints"
    elif variant == "delete_key":
        del rc[k]
        return f"delete range constraint {where}"
    return f"{where}: [{lo!r}, {hi!r}] -> {short(r)}"


def _spec_sites(c: Ctx):
    out = []
    for i, e in enumerate(c.doc["graph_module"].get("module_call_graph") or []):
        sig = e.get("signature") if isinstance(e, dict) else None
        if isinstance(sig, dict):
            for f in ("in_spec", "out_spec"):
                if isinstance(sig.get(f), str):
                    out.append(("graph_module", "module_call_graph", i, "signature", f))
    return out


def _spec_nodes(node, path=()):
    yield path, node
    for i, ch in enumerate(node.get("children_spec") or []):
        yield from _spec_nodes(ch, path + (i,))


def treespec(c: Ctx):
    sites = _spec_sites(c)
    variant = c.rng.choice(["version", "broken_json", "unknown_type", "drop_child", "add_child",
                            "context", "leaf", "not_list", "namedtuple_fields", "type_null",
                            "context_json", "spaces"])
    if variant == "namedtuple_fields":
        ntf = c.doc["graph_module"].get("treespec_namedtuple_fields")
        if ntf:
            k = c.pick(sorted(ntf))
            ntf[k]["field_names"] = ntf[k]["field_names"][:-1] + ["bogus_field"]
            return f"namedtuple fields of {k!r} at $.graph_module.treespec_namedtuple_fields -> {short(ntf[k])}"
        c.doc["graph_module"]["treespec_namedtuple_fields"] = {"bogus.Type": {"field_names": ["a"]}}
        c.expect = "accept"
        return "add unused $.graph_module.treespec_namedtuple_fields['bogus.Type']"
    if not sites:
        return None
    sp = c.pick(sites)
    text = get(c.doc, sp)
    where = fmt_path(sp)
    if variant == "broken_json":
        new = text[: c.rng.randrange(1, max(2, len(text)))]
        put(c.doc, sp, new)
        return f"{where} truncated to {len(new)} of {len(text)} chars"
    if variant == "spaces":
        put(c.doc, sp, json.dumps(json.loads(text), indent=1))
        c.expect = "accept"
        return f"{where} re-encoded with indent=1 (same JSON)"
    try:
        ver, spec = json.loads(text)
    except Exception:
        return None
    if variant == "version":
        new_ver = c.rng.choice([0, 2, "1", None, 1.0])
        put(c.doc, sp, json.dumps([new_ver, spec]))
        return f"{where} treespec version 1 -> {new_ver!r}"
    if variant == "not_list":
        put(c.doc, sp, json.dumps(c.rng.choice([spec, {"v": 1}, 1, None])))
        return f"{where} -> not a [version, spec] pair"
    if variant == "leaf":
        put(c.doc, sp, json.dumps([ver, {"type": None, "context": None, "children_spec": []}]))
        return f"{where} -> a single leaf"
    nodes = list(_spec_nodes(spec))
    if variant == "unknown_type":
        path, nd = c.pick([x for x in nodes if x[1].get("type") is not None] or nodes)
        old = nd.get("type")
        nd["type"] = c.rng.choice(["builtins.bogus", "collections.bogus", "torchspec.zoo.Missing", "bogus"])
        put(c.doc, sp, json.dumps([ver, spec]))
        return f"{where} node {list(path)} type {old!r} -> {nd['type']!r}"
    if variant == "type_null":
        inner = [x for x in nodes if x[1].get("type") is not None]
        if not inner:
            return None
        path, nd = c.pick(inner)
        old = nd["type"]
        nd["type"] = None
        put(c.doc, sp, json.dumps([ver, spec]))
        return f"{where} node {list(path)} type {old!r} -> null (children kept)"
    inner = [x for x in nodes if x[1].get("children_spec")]
    if variant == "drop_child":
        if not inner:
            return None
        path, nd = c.pick(inner)
        nd["children_spec"].pop()
        put(c.doc, sp, json.dumps([ver, spec]))
        return f"{where} node {list(path)} ({nd.get('type')}): last child dropped"
    if variant == "add_child":
        cont = [x for x in nodes if x[1].get("type") is not None]
        if not cont:
            return None
        path, nd = c.pick(cont)
        nd.setdefault("children_spec", []).append({"type": None, "context": None, "children_spec": []})
        put(c.doc, sp, json.dumps([ver, spec]))
        return f"{where} node {list(path)} ({nd.get('type')}): leaf child appended"
    # context / context_json
    cont = [x for x in nodes if x[1].get("type") is not None]
    if not cont:
        return None
    path, nd = c.pick(cont)
    old = nd.get("context")
    if variant == "context_json":
        nd["context"] = c.rng.choice(["[", "{\"a\": 1}", "42", "[\"x\", \"y\", \"z\", \"w\"]"])
    else:
        nd["context"] = c.rng.choice([None, 5, ["x"], "null"])
    put(c.doc, sp, json.dumps([ver, spec]))
    return f"{where} node {list(path)} ({nd.get('type')}) context {old!r} -> {nd['context']!r}"


def guards_code(c: Ctx):
    old = c.doc.get("guards_code")
    variant = c.rng.choice(["null", "string", "ints", "garbage", "valid", "empty", "nulls", "dict",
                            "delete", "empty_string"])
    new = {
        "null": None,
        "string": "L['x'].size()[0] > 2",
        "ints": [1, 2, 3],
        "garbage": ["!!! this is not python ((("],
        "valid": ["L['x'].size()[0] >= 0"],
        "empty": [],
        "nulls": [None],
        "dict": {"a": "b"},
        "empty_string": [""],
    }.get(variant)
    if variant == "delete":
        if "guards_code" not in c.doc:
            return None
        del c.doc["guards_code"]
        c.expect = "accept"
        return "delete $.guards_code"
    if variant in ("empty", "valid", "garbage", "empty_string"):
        c.expect = "accept"
    c.doc["guards_code"] = new
    return f"$.guards_code {short(old)} -> {short(new)}"


def node_metadata(c: Ctx):
    nodes = [(p, n) for p, n in c.nodes() if isinstance(n.get("metadata"), dict)]
    if not nodes:
        return None
    p, n = c.pick(nodes)
    md = n["metadata"]
    where = fmt_path(p + ("metadata",))
    variant = c.rng.choice(["stack_trace_int", "nn_module_stack", "nn_module_stack_parts",
                            "source_fn_stack", "torch_fn", "unknown_key", "null", "list",
                            "custom", "empty", "stack_trace_empty"])
    def setkey(k, v):
        md[k] = v
        return f"{fmt_path(p + ('metadata', k))} = {short(v)}"

    if variant == "stack_trace_int":
        return setkey("stack_trace", 7)
    if variant == "stack_trace_empty":
        c.expect = "accept"
        return setkey("stack_trace", "")
    if variant == "nn_module_stack":
        return setkey("nn_module_stack", c.rng.choice(["garbage", "a,b", "a,b,c,d", ",,", "a,(b,c"]))
    if variant == "nn_module_stack_parts":
        c.expect = "accept"
        return setkey("nn_module_stack", "L__self__,,bogus.Module")
    if variant == "source_fn_stack":
        return setkey("source_fn_stack", c.rng.choice(
            ["x", "a,b,c", "add_1,torch.nonexistent", "add,<built-in function add>"]))
    if variant == "torch_fn":
        return setkey("torch_fn", c.rng.choice(["x", "a;b;c", "sum_1", ";"]))
    if variant == "unknown_key":
        c.expect = "accept"
        return setkey("bogus_key", "anything")
    if variant == "custom":
        return setkey("custom", c.rng.choice(["{not json", "{\"a\": 1}", "[]", "1"]))
    if variant == "null":
        n["metadata"] = None
        return f"{where} -> null"
    if variant == "list":
        n["metadata"] = []
        return f"{where} -> []"
    n["metadata"] = {}
    c.expect = "accept"
    return f"{where} -> {{}}"


def top_level(c: Ctx):
    d = c.doc
    variant = c.rng.choice(["extra_field", "extra_nested", "opset", "opset_delete", "opset_str",
                            "verifiers", "verifiers_empty", "torch_version", "torch_version_int",
                            "graph_module_delete", "module_call_graph_empty", "gm_metadata",
                            "not_object", "opset_extra"])
    if variant == "extra_field":
        d["bogus_top_level_field"] = {"x": [1, 2]}
        c.expect = "accept"
        return "add unknown field $.bogus_top_level_field"
    if variant == "extra_nested":
        d["graph_module"]["graph"]["bogus_field"] = 1
        c.expect = "accept"
        return "add unknown field $.graph_module.graph.bogus_field"
    if variant == "opset":
        old = d.get("opset_version")
        d["opset_version"] = {k: v + 1 for k, v in (old or {"aten": 10}).items()}
        return f"$.opset_version {short(old)} -> {short(d['opset_version'])}"
    if variant == "opset_extra":
        d.setdefault("opset_version", {})["bogus_ns"] = 3
        return "add $.opset_version.bogus_ns = 3"
    if variant == "opset_delete":
        d.pop("opset_version", None)
        return "delete $.opset_version"
    if variant == "opset_str":
        d["opset_version"] = {k: str(v) for k, v in (d.get("opset_version") or {}).items()}
        return f"$.opset_version values -> strings {short(d['opset_version'])}"
    if variant == "verifiers":
        old = d.get("verifiers")
        d["verifiers"] = [c.rng.choice(["BOGUS", "training", "INFERENCE", ""])]
        return f"$.verifiers {short(old)} -> {short(d['verifiers'])}"
    if variant == "verifiers_empty":
        old = d.get("verifiers")
        d["verifiers"] = []
        return f"$.verifiers {short(old)} -> []"
    if variant == "torch_version":
        old = d.get("torch_version")
        d["torch_version"] = c.rng.choice(["garbage", "", "<=2.4", "3.0.0", "2.15.0"])
        c.expect = "accept"
        return f"$.torch_version {old!r} -> {d['torch_version']!r}"
    if variant == "torch_version_int":
        d["torch_version"] = 215
        return "$.torch_version -> 215"
    if variant == "graph_module_delete":
        del d["graph_module"]
        return "delete $.graph_module"
    if variant == "module_call_graph_empty":
        d["graph_module"]["module_call_graph"] = []
        return "$.graph_module.module_call_graph -> []"
    if variant == "gm_metadata":
        d["graph_module"]["metadata"] = c.rng.choice([{"bogus": "x"}, None, []])
        return f"$.graph_module.metadata -> {short(d['graph_module']['metadata'])}"
    c.doc = c.rng.choice([[d], "program", None, 1])
    return f"$ -> {short(c.doc)}"


# ---------------------------------------------------------------------------
# Classes of issue 37 item 2 (the families the ones above never reached) and
# issue 35 item 6 (values aimed at the writers). Each picks its sites from
# c.sites, so subgraphs are mutated as the top level is.
# ---------------------------------------------------------------------------

SUBGRAPH_CLASSES = ("field_retype", "union_tag_unknown", "enum_value_unknown", "node_args",
                    "node_outputs", "value_dangling", "value_duplicate", "expr_str_broken",
                    "node_metadata", "target_missing_op", "target_other_op", "size_constant",
                    "size_hint", "scalar_retype", "edge_values", "union_arms", "field_defaults",
                    "metadata_keys")


def in_subgraph(path) -> bool:
    return "as_graph" in path


def subgraph(c: Ctx):
    """One of the site classes with its sites restricted to the graphs of
    higher-order ops (`cond` branches, `map`, `while_loop`, `scan` bodies:
    `as_graph` arguments of a node's inputs)."""
    inner = [s for s in c.sites if in_subgraph(s.path)]
    if not inner:
        return None
    c.sites = inner
    sub = c.rng.choice(SUBGRAPH_CLASSES)
    desc = (ALL_SITE_CLASSES[sub])(c)
    return None if desc is None else f"in a subgraph ({sub}): {desc}"


def _sym_expr_with_hint(c: Ctx):
    """(path, SymExpr) of sizes and sym values that are one symbol with an int hint."""
    out = []
    for s in c.sym_expr_sites():
        e = get(c.doc, s.path)
        if isinstance(e, dict) and isinstance(e.get("expr_str"), str):
            out.append((s.path, e))
    return out


def size_constant(c: Ctx):
    """A symbolic size's expr_str made a constant: its hint, or another value."""
    cands = _sym_expr_with_hint(c)
    if not cands:
        return None
    p, e = c.pick(cands)
    hint = (e.get("hint") or {}).get("as_int") if isinstance(e.get("hint"), dict) else None
    base = hint if isinstance(hint, int) and not isinstance(hint, bool) else 2
    new = str(c.rng.choice([base, base + 1, base - 1, -1, 0, 1]))
    old = e["expr_str"]
    e["expr_str"] = new
    return f"expr_str at {fmt_path(p + ('expr_str',))}: {old!r} -> {new!r} (hint {hint!r})"


def _range_of(c: Ctx, expr: str):
    rc = c.doc.get("range_constraints")
    r = rc.get(expr) if isinstance(rc, dict) else None
    return r if isinstance(r, dict) else None


def size_hint(c: Ctx):
    """A symbolic size's hint outside, at the edges of, or far from its range."""
    cands = [(p, e) for p, e in _sym_expr_with_hint(c)]
    if not cands:
        return None
    p, e = c.pick(cands)
    r = _range_of(c, e["expr_str"]) or {}
    lo, hi = r.get("min_val"), r.get("max_val")
    opts = [-5, 0, 1, 2**63 - 1, 2**63, -(2**63) - 1]
    for v in (lo, hi):
        if isinstance(v, int) and not isinstance(v, bool):
            opts += [v - 1, v, v + 1]
    variant = c.rng.choice(["int", "int", "int", "null", "bool", "float", "delete"])
    old = e.get("hint")
    if variant == "int":
        e["hint"] = {"as_int": c.rng.choice(opts)}
    elif variant == "null":
        e["hint"] = None
        c.expect = "accept"
    elif variant == "bool":
        e["hint"] = {"as_bool": True}
    elif variant == "float":
        e["hint"] = {"as_float": 2.5}
    else:
        if "hint" not in e:
            return None
        del e["hint"]
        c.expect = "accept"
        return f"delete hint at {fmt_path(p + ('hint',))} (was {short(old)})"
    return (f"hint of {e['expr_str']!r} at {fmt_path(p + ('hint',))}: {short(old)} -> "
            f"{short(e['hint'])} (range [{lo!r}, {hi!r}])")


def range_edges(c: Ctx):
    """Ranges that exclude sizes (max_val < 0, min_val > max_val, a point, zero)
    on backed and unbacked symbols, ranges for symbols that have none, and hints
    outside or at the edges of their ranges."""
    rc = c.doc.get("range_constraints")
    if not isinstance(rc, dict):
        return None
    variant = c.rng.choice(["max_negative", "both_negative", "min_gt_max", "point", "max_zero",
                            "min_zero", "new_symbol", "hint", "hint", "max_expr"])
    if variant == "hint":
        return size_hint(c)
    keys = [k for k in rc if isinstance(rc[k], dict)]
    unbacked = [k for k in keys if k.startswith("u")]
    if variant == "new_symbol":
        syms = sorted({t for _, e in _sym_expr_with_hint(c)
                       for t in _symbols(e["expr_str"]) if t not in rc})
        k = c.pick(syms) or c.rng.choice(["u0", "u1", "s0"])
        rc[k] = c.rng.choice([{"min_val": 0, "max_val": -1}, {"min_val": -3, "max_val": -1},
                              {"min_val": 2, "max_val": 2}, {"min_val": 0, "max_val": None}])
        return f"add range constraint {k!r} = {short(rc[k])} to $.range_constraints"
    if not keys:
        return None
    k = c.pick(unbacked) if unbacked and c.rng.random() < 0.5 else c.pick(keys)
    r = rc[k]
    old = dict(r)
    lo = r.get("min_val") if isinstance(r.get("min_val"), int) else 0
    hi = r.get("max_val") if isinstance(r.get("max_val"), int) else lo + 8
    if variant == "max_negative":
        r["max_val"] = c.rng.choice([-1, -5])
    elif variant == "both_negative":
        r["min_val"], r["max_val"] = -7, -2
    elif variant == "min_gt_max":
        r["min_val"], r["max_val"] = hi + 1, hi
    elif variant == "point":
        v = c.rng.choice([lo, hi, 0, 1])
        r["min_val"], r["max_val"] = v, v
    elif variant == "max_zero":
        r["max_val"] = 0
    elif variant == "min_zero":
        r["min_val"] = 0
    else:
        nk = f"Max(1, {k})"
        rc[nk] = rc.pop(k)
        return f"range constraint key {k!r} -> {nk!r} at $.range_constraints"
    return f"{fmt_path(('range_constraints', k))}: {short(old)} -> {short(r)}"


def _symbols(expr: str):
    import re
    return re.findall(r"\b[su]\d+\b", expr)


JSON_TYPES = ("int", "float", "bool", "string", "null", "list", "dict")


def json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    return "dict"


def as_json_type(v, t: str):
    """v written as JSON type t (kept recognisable where a conversion exists)."""
    if t == "int":
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
            and abs(v) != float("inf") else (len(v) if isinstance(v, str) else 1)
    if t == "float":
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 1.5
    if t == "bool":
        return bool(v) if not isinstance(v, (list, dict)) else True
    if t == "string":
        return v if isinstance(v, str) else json.dumps(v)
    if t == "null":
        return None
    if t == "list":
        return [v]
    return {"value": v}


def scalar_retype(c: Ctx):
    """A scalar field (int, float, bool, string, enum, or an optional left null)
    given each other JSON type: int, float, bool, string, null, list, dict."""
    sites = [s for s in c.sites if s.path and s.kind in ("int", "float", "bool", "str", "enum")]
    if not sites:
        return None
    kinds = sorted({s.kind for s in sites})
    k = c.pick(kinds)
    s = c.pick([x for x in sites if x.kind == k])
    v = get(c.doc, s.path)
    t = c.rng.choice([t for t in JSON_TYPES if t != json_type(v)])
    new = as_json_type(v, t)
    if t == "null" and s.optional:
        c.expect = "accept"
    put(c.doc, s.path, new)
    return f"retype {s.name} at {fmt_path(s.path)} to {t}: {short(v)} -> {short(new)}"


METADATA_KEYS = ("from_node", "stack_trace", "seq_nr", "torch_fn", "nn_module_stack",
                 "source_fn_stack", "custom")

METADATA_STRINGS = {
    "from_node": ["[1, 2]", "{}", "[{}]", "[null]", "null", "[]", "\"x\"", "[{\"name\": 1}]",
                  "[{\"name\": \"a\", \"target\": \"b\", \"graph_id\": 0, \"pass_name\": \"p\", "
                  "\"action\": \"create\", \"from_node\": 5}]", "[" * 200 + "]" * 200, "{not json",
                  "[{\"name\": \"a\"}]", "NaN"],
    "stack_trace": ["", " ", "\u00e9\u540d", "x" * 100_000],
    "seq_nr": ["-1", "9223372036854775808", "x", "", "1.5"],
    "torch_fn": [";", "a;b;c", "", "x", "\u540d;\u540d"],
    "nn_module_stack": ["a,b", "a,b,c,d", ",,", "a,(b,c", "a,b,c" + "\u001f" + "d", "[,(,)]",
                        "\u540d,\u540d,\u540d"],
    "source_fn_stack": ["x", "a,b,c", "a,torch.nonexistent", "a,torch.nn.Nonexistent", "a,",
                        ",", "a,b" + "\u001f" + "x"],
    "custom": ["{not json", "[]", "1", "null", "{\"a\": NaN}", "\"s\"", "[" * 200 + "]" * 200],
}


def metadata_keys(c: Ctx):
    """Every node-metadata key PyTorch parses (deserialize_metadata), given a
    value of each other JSON type or an edge string of its own format."""
    nodes = [(p, n) for p, n in c.nodes() if isinstance(n.get("metadata"), dict)]
    if not nodes:
        return None
    p, n = c.pick(nodes)
    key = c.rng.choice(METADATA_KEYS)
    md = n["metadata"]
    old = md.get(key, "<absent>")
    if c.rng.random() < 0.5:
        t = c.rng.choice([t for t in JSON_TYPES if t != "string"])
        new = {"int": 7, "float": 1.5, "bool": True, "null": None, "list": [1, 2],
               "dict": {"a": "b"}}[t]
    else:
        new = c.rng.choice(METADATA_STRINGS[key])
    md[key] = new
    return f"{fmt_path(p + ('metadata', key))}: {short(old, 30)} -> {short(new, 40)}"


def _with_effects_nodes(c: Ctx):
    return [(p, n) for p, n in c.nodes() if n.get("target") == "torch.ops.higher_order.with_effects"]


def _token_specs(c: Ctx):
    out = []
    sig = c.doc.get("graph_module", {}).get("signature", {})
    for key in ("input_specs", "output_specs"):
        for i, sp in enumerate(sig.get(key) or []):
            if isinstance(sp, dict) and "token" in sp:
                out.append(("graph_module", "signature", key, i))
    return out


def has_effects(doc) -> bool:
    try:
        gm = doc["graph_module"]
        return bool(gm.get("treespec_namedtuple_fields")) or any(
            "token" in sp for key in ("input_specs", "output_specs")
            for sp in gm["signature"].get(key) or [] if isinstance(sp, dict)) or any(
            n.get("target") == "torch.ops.higher_order.with_effects" for n in gm["graph"]["nodes"])
    except (KeyError, TypeError, AttributeError):
        return False


def effects_top(c: Ctx):
    """The top-level and effect-token structures: `treespec_namedtuple_fields`,
    the outputs of `with_effects` nodes, the token inputs and outputs of the
    signature."""
    gm = c.doc["graph_module"]
    variant = c.rng.choice(["namedtuple", "with_effects_output", "with_effects_output",
                            "token_spec", "token_spec"])
    if variant == "namedtuple":
        ntf = gm.get("treespec_namedtuple_fields")
        if not ntf:
            gm["treespec_namedtuple_fields"] = c.rng.choice([
                {"x.T": {"field_names": 1}}, {"x.T": []}, {"x.T": None}, [], "x",
                {"x.T": {"field_names": ["a", 1]}}, {"x.T": {}}])
            return f"$.graph_module.treespec_namedtuple_fields -> {short(gm['treespec_namedtuple_fields'])}"
        k = c.pick(sorted(ntf))
        old = ntf[k]
        ntf[k] = c.rng.choice([{"field_names": []}, {"field_names": "a"}, {"field_names": [1]},
                               {"field_names": None}, [], None, "x", {}, {"field_names": ["\u540d"]}])
        return f"$.graph_module.treespec_namedtuple_fields[{k!r}]: {short(old)} -> {short(ntf[k])}"
    if variant == "with_effects_output":
        nodes = _with_effects_nodes(c)
        if not nodes:
            return None
        p, n = c.pick(nodes)
        outs = n.get("outputs") or []
        if not outs:
            return None
        i = c.rng.randrange(len(outs))
        old = outs[i]
        outs[i] = c.rng.choice([{"as_int": 1}, {"as_none": True}, {"as_tensors": []},
                                {"as_sym_int": {"as_name": "s0"}}, {"as_string": "token"},
                                {"as_tensor": {"name": c.fresh("tok")}}, {"as_float": 0.0},
                                {"as_optional_tensors": [{"as_none": True}]}])
        return f"with_effects output at {fmt_path(p + ('outputs', i))}: {short(old)} -> {short(outs[i])}"
    specs = _token_specs(c)
    if not specs:
        return None
    sp = c.pick(specs)
    spec = get(c.doc, sp)
    old = copy.deepcopy(spec)
    v = c.rng.choice(["rename", "arm_user", "retype_arg", "name_type", "drop", "duplicate"])
    if v == "rename":
        spec["token"]["arg"]["name"] = c.fresh("token")
    elif v == "arm_user":
        tag = "user_input" if sp[2] == "input_specs" else "user_output"
        put(c.doc, sp, {tag: {"arg": {"as_tensor": spec["token"]["arg"]}}})
    elif v == "retype_arg":
        spec["token"]["arg"] = {"as_tensor": spec["token"]["arg"]}
    elif v == "name_type":
        spec["token"]["arg"]["name"] = c.rng.choice([1, None, ["token"]])
    elif v == "drop":
        del get(c.doc, sp[:-1])[sp[-1]]
        return f"drop token spec {short(old)} at {fmt_path(sp)}"
    else:
        get(c.doc, sp[:-1]).insert(sp[-1], copy.deepcopy(spec))
    return f"token spec at {fmt_path(sp)}: {short(old)} -> {short(get(c.doc, sp))}"


# Values at the edges of their JSON type (issue 35 item 6). Non-finite floats
# are written as the schema writes them (strings) and as the JSON tokens
# Python's json writes.
FLOAT_EDGES = [float("-inf"), float("inf"), float("nan"), -0.0, 5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, "-Infinity", "Infinity", "NaN"]
INT_EDGES = [2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, -(2**64), 2**31, -(2**31) - 1]
NON_ASCII = ["\u540d\u524d", "na\u00efve", "\U0001F600", "a\u200bb", "\u0394x"]


def _rename_everywhere(doc, old: str, new: str):
    """Every string equal to `old`, and every dict key equal to it, renamed."""
    if isinstance(doc, dict):
        for k in list(doc):
            v = doc.pop(k)
            doc[new if k == old else k] = new if v == old else _rename_everywhere(v, old, new)
        return doc
    if isinstance(doc, list):
        for i, v in enumerate(doc):
            doc[i] = new if v == old else _rename_everywhere(v, old, new)
    return doc


def edge_values(c: Ctx):
    """A float, int or string at the edge of its JSON type: -inf, inf, nan,
    -0.0, subnormals, the largest double; integers at and past +-2**63; a very
    long string; a value renamed to a non-ASCII name everywhere it is used."""
    variant = c.rng.choice(["float", "float", "int", "int", "long_string", "non_ascii",
                            "non_ascii"])
    if variant == "non_ascii":
        names = sorted({k for g in c.graphs() for k in (get(c.doc, g).get("tensor_values") or {})})
        if not names:
            return None
        old = c.pick(names)
        new = c.rng.choice(NON_ASCII) + "_" + old
        _rename_everywhere(c.doc, old, new)
        c.expect = "accept"
        return f"value {old!r} renamed {new!r} everywhere"
    kind = {"float": "float", "int": "int", "long_string": "str"}[variant]
    sites = [s for s in c.sites if s.path and s.kind == kind]
    if not sites:
        return None
    s = c.pick(sites)
    v = get(c.doc, s.path)
    if kind == "float":
        new = c.rng.choice(FLOAT_EDGES)
    elif kind == "int":
        new = c.rng.choice(INT_EDGES)
    else:
        new = (v if isinstance(v, str) else "s") * (100_000 // max(1, len(str(v)))) + "x"
    put(c.doc, s.path, new)
    return f"edge value at {fmt_path(s.path)} ({s.name}): {short(v, 30)} -> {short(new, 40)}"


def typed_value(tp, c: Ctx, depth=0, zero=False):
    """A value of schema type tp (zero: the type's default, 0, "", [], ...)."""
    tp, optional = strip_optional(tp)
    k = kind_of(tp)
    if k == "int":
        return 0 if zero else c.rng.choice([1, 2, 3])
    if k == "float":
        return 0.0 if zero else 1.5
    if k == "bool":
        return False if zero else True
    if k == "str":
        return "" if zero else c.fresh("v")
    if k == "enum":
        return min(int(m) for m in tp) if zero else c.rng.choice(sorted(int(m) for m in tp))
    if k == "list":
        (et,) = typing.get_args(tp)
        return [] if zero or depth > 2 else [typed_value(et, c, depth + 1)]
    if k == "dict":
        return {} if zero or depth > 2 else {"k": typed_value(typing.get_args(tp)[1], c, depth + 1)}
    if k == "union":
        arms = list(_field_hints(tp))
        if depth > 2:
            arms = [a for a in arms if kind_of(strip_optional(a[1])[0]) in ("int", "bool", "str")] or arms
        name, at = arms[0] if zero else c.pick(arms)
        return {name: typed_value(at, c, depth + 1, zero)}
    if k == "dataclass":
        if depth > 3:
            return {}
        return {n: typed_value(ft, c, depth + 1, zero) for n, ft in _field_hints(tp)}
    return None


def union_arms(c: Ctx):
    """A union value written as another of its arms, with a well-typed value
    (a name of this graph where the arm holds a tensor or symbol), so each arm
    goes through both writers."""
    s = _union_site(c)
    if s is None:
        return None
    (tag, _), = get(c.doc, s.path).items()
    arms = [(n, t) for n, t in _field_hints(s.tp) if n != tag]
    if not arms:
        return None
    name, at = c.pick(arms)
    val = typed_value(at, c)
    g = next((s.path[:i + 1] for i in range(len(s.path) - 1, -1, -1)
              if s.path[i] == "graph"), ("graph_module", "graph"))
    try:
        tensors = c.tensor_names(g)
    except (KeyError, TypeError, IndexError):
        tensors = []
    if tensors and isinstance(val, dict) and "name" in val and strip_optional(at)[0] is S.TensorArgument:
        val["name"] = c.pick(tensors)
    new = {name: val}
    put(c.doc, s.path, new)
    return f"{s.name} at {fmt_path(s.path)}: arm {tag!r} -> {short(new)}"


def field_defaults(c: Ctx):
    """A required field (no default in the schema) left at its type's default:
    0, 0.0, false, "", [], {}, the first enum value or union arm."""
    def required(s, f):
        return not field_default(s.tp, f)
    s, f = _dataclass_field_site(c, required)
    if s is None:
        return None
    obj = get(c.doc, s.path)
    old = obj[f]
    obj[f] = typed_value(hints(s.tp)[f], c, zero=True)
    return f"required field {f} of {s.name} at {fmt_path(s.path + (f,))} at its default: {short(old)} -> {short(obj[f])}"


CLASSES = {
    "field_delete": field_delete,
    "field_duplicate": field_duplicate,
    "field_retype": field_retype,
    "union_tag_unknown": union_tag_unknown,
    "enum_value_unknown": enum_value_unknown,
    "schema_version": schema_version,
    "target_missing_op": target_missing_op,
    "target_other_op": target_other_op,
    "node_args": node_args,
    "node_outputs": node_outputs,
    "value_dangling": value_dangling,
    "value_duplicate": value_duplicate,
    "expr_str_broken": expr_str_broken,
    "range_constraints": range_constraints,
    "treespec": treespec,
    "guards_code": guards_code,
    "node_metadata": node_metadata,
    "top_level": top_level,
    # issue 37 item 2
    "subgraph": subgraph,
    "metadata_keys": metadata_keys,
    "range_edges": range_edges,
    "scalar_retype": scalar_retype,
    "effects_top": effects_top,
    # issue 35 item 6
    "edge_values": edge_values,
    "union_arms": union_arms,
    "field_defaults": field_defaults,
}

# What `subgraph` may call on a subgraph's sites: the classes, and the size
# variants of range_edges.
ALL_SITE_CLASSES = {**CLASSES, "size_constant": size_constant, "size_hint": size_hint}

# Classes that only some programs have sites for: the draw of their program is
# restricted to those (a predicate of the program's document).
WANTS = {
    "subgraph": lambda doc, sites: any(in_subgraph(s.path) for s in sites),
    "effects_top": lambda doc, sites: has_effects(doc),
}
