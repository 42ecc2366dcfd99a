"""Turns compact hand-written lines into case-format build cases.
Line: `VARS | EXPR` where VARS is `;`-separated `Kind name [min=..] [max=..]`
and EXPR is Python syntax over the var names (T(...)=TensorSpec, S(a=[...], p={...})=ShapesSpec,
O/D/Q/P = ObjectSpec/DictSpec/SeqSpec/ParamsSpec, not_(x)=sym_not)."""
import ast, json, sys

OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod",
       ast.Pow: "pow", ast.Div: "truediv", ast.BitAnd: "and", ast.BitOr: "or"}
CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
CTORS = {"T": "TensorSpec", "O": "ObjectSpec", "D": "DictSpec", "Q": "SeqSpec", "P": "ParamsSpec"}

def conv(n, names):
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.Name):
        if n.id in names: return {"var": names.index(n.id)}
        if n.id in ("True", "False", "None"): return {"True": True, "False": False, "None": None}[n.id]
        raise ValueError(n.id)
    if isinstance(n, ast.BinOp):
        return {"op": OPS[type(n.op)], "args": [conv(n.left, names), conv(n.right, names)]}
    if isinstance(n, ast.UnaryOp):
        if isinstance(n.op, ast.USub):
            if isinstance(n.operand, ast.Constant) and isinstance(n.operand.value, (int, float)):
                return -n.operand.value
            return {"op": "neg", "args": [conv(n.operand, names)]}
        raise ValueError("unary")
    if isinstance(n, ast.Compare):
        assert len(n.ops) == 1
        return {"op": CMP[type(n.ops[0])], "args": [conv(n.left, names), conv(n.comparators[0], names)]}
    if isinstance(n, ast.List):
        return [conv(e, names) for e in n.elts]
    if isinstance(n, ast.Tuple):
        return {"tuple": [conv(e, names) for e in n.elts]}
    if isinstance(n, ast.Dict):
        return {"dict": [[conv(k, names), conv(v, names)] for k, v in zip(n.keys, n.values)]}
    if isinstance(n, ast.Call):
        f = n.func.id
        if f == "not_":
            return {"op": "not", "args": [conv(n.args[0], names)]}
        if f in CTORS:
            return {CTORS[f]: conv(n.args[0], names)}
        if f == "S":
            kw = {k.arg: conv(k.value, names) for k in n.keywords}
            out = {}
            if "p" in kw: out["params"] = kw["p"]
            if "a" in kw: out["assumptions"] = kw["a"]
            return {"ShapesSpec": out}
    raise ValueError(ast.dump(n))

def main(src, stem):
    out = []
    for line in open(src):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        vars_s, expr = line.split("|", 1)
        vars_, names = [], []
        for v in filter(None, (x.strip() for x in vars_s.split(";"))):
            parts = v.split()
            d = {"kind": parts[0], "name": parts[1]}
            for kv in parts[2:]:
                k, val = kv.split("=")
                d[k] = None if val == "None" else int(val)
            vars_.append(d); names.append(parts[1])
        case = {"id": f"{stem}-{len(out) + 1:04d}", "kind": "build"}
        if vars_: case["vars"] = vars_
        case["value"] = conv(ast.parse(expr.strip(), mode="eval").body, names)
        out.append(json.dumps(case, ensure_ascii=False, separators=(",", ":")))
    print("\n".join(out))

main(sys.argv[1], sys.argv[2])
