"""Cross-API findings of the export_spec corpus: the same spec and inputs
through two PyTorch entry points that decide differently, or PyTorch
contradicting its own documentation. Each finding is a `python -c`
one-liner on stock torch; this script runs every one-liner with the given
Python and writes docs/upstream/export-spec-findings.md with what it
printed (never edited by hand).

Usage: python oracle/export_spec_findings.py [PYTHON ...]
       (default: .oracle/bin/python; more interpreters add a column each)
"""

from __future__ import annotations

import subprocess
import sys

PRELUDE = (
    "import torch;"
    "from torch.fx.experimental.dynamic_spec import IntVar,ShapeVar,TensorSpec,ParamsSpec,ShapesSpec;"
    "from torch.fx.experimental.proxy_tensor import make_fx;"
    "M=type('M',(torch.nn.Module,),{'forward':lambda self,x,n:x.sum()+n})"
)

# name, class, what the user expects, the one-liner body (after PRELUDE), corpus ids
FINDINGS = [
    (
        "strict-int-range",
        4,
        "An `IntVar(min=-5, max=-1)` on an int input `-3`: non-strict export "
        "accepts it with `range_constraints` `[-5, -1]`; strict export starts "
        "every int symbol at `[0, int_oo]` and refuses the same spec and inputs "
        "(`torch._check(u0 <= -1)` is statically false there). The two export "
        "modes decide the same program differently.",
        "s=lambda:ShapesSpec(ParamsSpec({'n':IntVar('n',min=-5,max=-1)}));"
        "ep=torch.export.export(M(),(torch.zeros(4),-3),dynamic_shapes=s());"
        "print('strict=False',{str(k):[int(v.lower),int(v.upper)] for k,v in ep.range_constraints.items()});"
        "exec(\"try:\\n torch.export.export(M(),(torch.zeros(4),-3),dynamic_shapes=s(),strict=True);print('strict=True ok')\\n"
        "except Exception as e:print('strict=True',type(e).__name__,e)\")",
        ["export-spec-checks-024-export", "export-spec-checks-024-strict"],
    ),
    (
        "false-assumption-dropped",
        4,
        "Assumptions `[a > 5, a < 3]` cannot both hold, and the export "
        "docstring says export fails when an assumption cannot hold; export "
        "succeeds and silently drops `a < 3` (only `5 < u0` is asserted).",
        "a=ShapeVar('a');"
        "ep=torch.export.export(type('N',(torch.nn.Module,),{'forward':lambda self,x:x.sum()})(),(torch.zeros(6),),"
        "dynamic_shapes=ShapesSpec(ParamsSpec({'x':TensorSpec([a])}),assumptions=[a>5,a<3]));"
        "print([n.args[1] for n in ep.graph.nodes if n.target is torch.ops.aten._assert_scalar.default])",
        ["export-spec-relations-027-export"],
    ),
    (
        "dict-spec-export-vs-make-fx",
        4,
        "A plain dict of TensorSpecs: `make_fx` and `torch.compile` coerce it "
        "to a ShapesSpec and trace; `torch.export.export` sends it to the Dim "
        "API and raises a UserError whose message shows the spec's internal "
        "uid (`ShapeVar(a#0, min=0)`).",
        "a=ShapeVar('a');f=lambda x:x.sum();"
        "print(make_fx(f,tracing_mode='fake',dynamic_shapes={'x':TensorSpec([a])})(torch.zeros(4)).graph.find_nodes(op='placeholder')[0].meta['val'].shape);"
        "exec(\"try:\\n torch.export.export(type('N',(torch.nn.Module,),{'forward':lambda self,x:x.sum()})(),(torch.zeros(4),),dynamic_shapes={'x':TensorSpec([a])})\\n"
        "except Exception as e:print(type(e).__name__,str(e).splitlines()[0])\")",
        ["export-spec-binding-048-make_fx", "export-spec-binding-048-export"],
    ),
    (
        "make-fx-static-int-unchecked",
        4,
        "A static int spec `n: 8` on an int input `7`: export refuses it "
        "(`shapes_spec declared L['n'] as static with value 8, but got 7`); "
        "`make_fx` traces it without any check, so the graph silently "
        "specializes on 7.",
        "f=lambda x,n:x.sum()+n;"
        "print(make_fx(f,tracing_mode='fake',dynamic_shapes=ShapesSpec(ParamsSpec({'n':8})))(torch.zeros(4),7).graph.find_nodes(op='placeholder')[1].meta['val']);"
        "exec(\"try:\\n torch.export.export(M(),(torch.zeros(4),7),dynamic_shapes=ShapesSpec(ParamsSpec({'n':8})))\\n"
        "except Exception as e:print(type(e).__name__,e)\")",
        ["export-spec-checks-012-make_fx", "export-spec-checks-012-export"],
    ),
]


def shell_quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def run(python: str, body: str) -> str:
    code = PRELUDE + ";" + body
    try:
        p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return "(timed out)"
    out = p.stdout.strip()
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        out += ("\n" if out else "") + (err[-1] if err else f"(exit {p.returncode})")
    return out


def version(python: str) -> str:
    return subprocess.run([python, "-c", "import torch;print(torch.__version__)"],
                          capture_output=True, text=True).stdout.strip()


def main(argv: list[str]) -> int:
    pythons = argv or [".oracle/bin/python"]
    lines = [
        "# export_spec: cross-API findings",
        "",
        "Generated by `python oracle/export_spec_findings.py "
        + " ".join(pythons)
        + "` (never edit by hand). The same spec and inputs through two PyTorch "
        "entry points that decide differently (class 4 of the triage), each with "
        "a `python -c` one-liner on stock torch and what it printed. The corpus "
        "cases that pin each side are listed; their goldens are in "
        "`corpus/goldens/torch-*/`.",
        "",
    ]
    for name, cls, what, body, ids in FINDINGS:
        lines += [f"## {name} (class {cls})", "", what, "", "Cases: " + ", ".join(f"`{i}`" for i in ids) + ".", ""]
        lines += ["```sh", "python -c " + shell_quote(PRELUDE + ";" + body), "```", ""]
        for py in pythons:
            lines += [f"torch {version(py)}:", "", "```", run(py, body), "```", ""]
    with open("docs/upstream/export-spec-findings.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
