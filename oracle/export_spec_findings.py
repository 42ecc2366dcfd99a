"""Cross-API findings of the export_spec corpus: the same spec and inputs
through two PyTorch entry points that decide differently, or PyTorch
contradicting its own documentation. Each finding is a `python -c`
one-liner on stock torch; this script runs every one-liner with the given
Python and writes docs/upstream/export-spec-findings.md with what it
printed, one packet per finding (docs/upstream/export-spec-NAME.md) and
docs/upstream/export-spec.jsonl, which oracle/upstream_triage.py reads for
the triage table and oracle/check_upstream.py checks per torch version
(never edited by hand).

Usage: python oracle/export_spec_findings.py [PYTHON ...]
       (default: .oracle/bin/python; more interpreters add a column each)
"""

from __future__ import annotations

import json
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
        'strict export refuses an IntVar(min<0) int input that non-strict export accepts',
        "strict export wraps an int input with VariableBuilder.wrap_symint (torch/_dynamo/variables/builder.py), whose unbacked symbol starts at [0, int_oo] before _wire_spec_slot intersects the spec's bounds; non-strict export (_symbolic_context_from_shapes_spec, create_unbacked_symint) starts at [-int_oo, int_oo]",
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
        ["export-spec-checks-024-export", "export-spec-checks-024-strict",
         "export-spec-relations-004-export", "export-spec-relations-004-strict"],
    ),
    (
        "false-assumption-dropped",
        4,
        'export drops an assumption that contradicts an earlier one instead of failing',
        '_wire_spec_assumptions / _emit_pending_spec_assumption (torch/fx/experimental/symbolic_shapes.py): guard_or_defer_runtime_assert finds `a < 3` statically false after `a > 5` and returns without raising',
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
        'a plain dict of TensorSpecs: make_fx traces it, export sends it to the Dim API',
        "torch.export.export's _resolve_dynamic_shapes treats only ShapesSpec/ParamsSpec as a spec (a dict goes to _normalize_dynamic_shapes, UserError); make_fx and torch.compile coerce a dict with _coerce_to_shapes_spec",
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
        'make_fx does not check a static int spec that export refuses',
        "make_fx's input fakification (torch/fx/experimental/proxy_tensor.py) has no static-int check; export's _symbolic_context_from_shapes_spec raises `shapes_spec declared ... as static`",
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
    (
        "compile-skips-binding-check",
        4,
        "torch.compile runs a SeqSpec longer than the runtime list that export and make_fx refuse",
        "torch.compile looks a spec up per dynamo source as the body reads it (lookup_spec_from_dynamo_source in torch/fx/experimental/_spec_binding.py) and never binds the whole spec; export and make_fx bind it first (_spec_binding's walk raises `SeqSpec has 3 entries beyond runtime sequence length 2`)",
        "A `SeqSpec` of three entries on a list of two tensors: `make_fx` (and "
        "both export modes) raise `ValueError: shapes_spec['xs']: SeqSpec has 3 "
        "entries beyond runtime sequence length 2`; `torch.compile` with the same "
        "spec and inputs runs without a word.",
        "from torch.fx.experimental.dynamic_spec import SeqSpec;a=ShapeVar('a');"
        "s=lambda:ShapesSpec(ParamsSpec({'xs':SeqSpec([TensorSpec([a,3]),None,TensorSpec([a,3])])}));"
        "f=lambda xs:xs[0].sum()+xs[1].sum();xs=[torch.zeros(4,3),torch.zeros(5,3)];"
        "print('compile',torch.compile(f,backend='eager',dynamic_shapes=s())(xs));"
        "exec(\"try:\\n make_fx(f,tracing_mode='fake',dynamic_shapes=s())(xs)\\n"
        "except Exception as e:print('make_fx',type(e).__name__,e)\")",
        ["export-spec-binding-004-compile", "export-spec-binding-004-make_fx", "export-spec-binding-004-export"],
    ),
    (
        "compile-derived-int-leaf",
        4,
        "torch.compile accepts a derived expression on an int input that export and make_fx refuse",
        "_spec_binding's leaf check (torch/fx/experimental/_spec_binding.py) raises `unexpected leaf spec type SymInt` for an int leaf whose spec is `n + 4`; torch.compile's wrap_literal (torch/_dynamo/variables/builder.py) reads the same leaf through lookup_spec_from_dynamo_source and wires it",
        "`ParamsSpec({'n': n, 'm': n + 4})` on ints `3, 7`: `make_fx` and both "
        "export modes raise `AssertionError: shapes_spec['m']: unexpected leaf "
        "spec type SymInt`; `torch.compile` accepts the same spec and inputs.",
        "n=IntVar('n',min=1,max=10);s=lambda:ShapesSpec(ParamsSpec({'n':n,'m':n+4}));"
        "g=lambda x,n,m:x.sum()+n+m;"
        "print('compile',torch.compile(g,backend='eager',dynamic_shapes=s())(torch.zeros(4),3,7));"
        "exec(\"try:\\n make_fx(g,tracing_mode='fake',dynamic_shapes=s())(torch.zeros(4),3,7)\\n"
        "except Exception as e:print('make_fx',type(e).__name__,e)\")",
        ["export-spec-relations-022-compile", "export-spec-relations-022-make_fx", "export-spec-relations-022-export"],
    ),
    (
        "strict-positional-only",
        4,
        "strict export refuses a forward with a positional-only parameter that non-strict export accepts",
        "strict export's dynamo entry (torch/_dynamo/eval_frame.py, the `More arguments than expected` assertion when rebinding flat args to the signature) does not handle a positional-only parameter; non-strict export binds it with inspect.Signature; with or without a spec",
        "`forward(self, x, /, y)` with a spec on `x`: non-strict export "
        "accepts it, strict export raises `AssertionError: More arguments than "
        "expected` (the same without a spec).",
        "P=type('P',(torch.nn.Module,),{'forward':eval('lambda self,x,/,y:x.sum()+y.sum()')});"
        "s=lambda:ShapesSpec(ParamsSpec({'x':TensorSpec([ShapeVar('a'),3])}));"
        "a=(torch.zeros(4,3),torch.zeros(2));"
        "print('strict=False',torch.export.export(P(),a,dynamic_shapes=s()).range_constraints);"
        "exec(\"try:\\n torch.export.export(P(),a,dynamic_shapes=s(),strict=True);print('strict=True ok')\\n"
        "except Exception as e:print('strict=True',type(e).__name__,e)\")",
        ["export-spec-binding-044-export", "export-spec-binding-044-strict"],
    ),
    (
        "compile-zero-size-strides",
        4,
        "torch.compile recompiles a spec-dynamic dim when the first call had a size-0 inner dim",
        "_compute_symbolic_stride (torch/fx/experimental/symbolic_shapes.py) keeps a stride of 0 or 1 static unless it equals size[i+1]*stride[i+1]; after a size-0 inner dim the outer stride is max(0, 1) = 1, so dynamo's TENSOR_MATCH guards stride 1 and a later call with a non-zero inner size fails it (`tensor 'x' stride mismatch at index 0. expected 1, actual 2`) and recompiles",
        "`TensorSpec([ShapeVar('a'), ShapeVar('b')])` declares both dims "
        "dynamic, and `dynamic_spec.STATIC` is documented as the dim that is "
        "\"taken from the actual input at runtime, with recompiles on different "
        "values\". A first call of shape `[3, 0]` makes `torch.compile` compile "
        "again for `[4, 2]` (2 frames); a first call of `[3, 5]` serves "
        "`[4, 2]` and `[6, 7]` with one frame.",
        "from torch._dynamo.testing import CompileCounter;"
        "s=lambda:ShapesSpec(ParamsSpec({'x':TensorSpec([ShapeVar('a'),ShapeVar('b')])}));"
        "exec(\"for first in ([3,0],[3,5]):\\n torch._dynamo.reset();c=CompileCounter();f=torch.compile(lambda x:x.sum(),backend=c,dynamic_shapes=s())\\n "
        "f(torch.zeros(*first));f(torch.zeros(4,2));f(torch.zeros(6,7));print('first',first,'frames',c.frame_count)\")",
        ["live-export-spec-9cdafd2f", "live-export-spec-1c1cc604"],
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


def packet(name: str, title: str, fn: str, what: str, liner: str, ids: list[str],
           outputs: list[tuple[str, str]]) -> str:
    """docs/upstream/export-spec-NAME.md: one finding, as the triage table links it."""
    lines = [f"# export-spec-{name}: {title}", "",
             "Generated by `python oracle/export_spec_findings.py` (never edit by hand). "
             "Class 4: two PyTorch entry points decide the same spec and inputs differently.", "",
             what, "", f"Upstream: {fn}.", "",
             "Corpus cases: " + ", ".join(f"`{i}`" for i in ids) + ".", "",
             "```sh", liner, "```", ""]
    for v, out in outputs:
        lines += [f"torch {v}:", "", "```", out, "```", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    pythons = argv or [".oracle/bin/python"]
    versions = [version(py) for py in pythons]
    lines = [
        "# export_spec: cross-API findings",
        "",
        "Generated by `python oracle/export_spec_findings.py "
        + " ".join(pythons)
        + "` (never edit by hand). The same spec and inputs through two PyTorch "
        "entry points that decide differently (class 4 of the triage), each with "
        "a `python -c` one-liner on stock torch and what it printed. The corpus "
        "cases that pin each side are listed; their goldens are in "
        "`corpus/goldens/torch-*/`. Each finding also has its packet, "
        "`docs/upstream/export-spec-NAME.md`, and a row in the triage table "
        "(`docs/upstream/README.md`, from `docs/upstream/export-spec.jsonl`).",
        "",
    ]
    records = []
    for name, cls, title, fn, what, body, ids in FINDINGS:
        liner = "python -c " + shell_quote(PRELUDE + ";" + body)
        outputs = [(v, run(py, body)) for v, py in zip(versions, pythons)]
        lines += [f"## {name} (class {cls})", "", what, "", "Cases: " + ", ".join(f"`{i}`" for i in ids) + ".", ""]
        lines += ["```sh", liner, "```", ""]
        for v, out in outputs:
            lines += [f"torch {v}:", "", "```", out, "```", ""]
        with open(f"docs/upstream/export-spec-{name}.md", "w", encoding="utf-8") as f:
            f.write(packet(name, title, fn, what, liner, ids, outputs))
        records.append({"name": f"export-spec-{name}", "class": cls, "signature": title,
                        "function": fn, "cases": ids, "one_liner": liner,
                        "prints": outputs[0][1], "torch": outputs[0][0]})
    with open("docs/upstream/export-spec-findings.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    with open("docs/upstream/export-spec.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
