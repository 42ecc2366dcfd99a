"""The guard forms real modules emit: export torch.nn and module_db with dynamic dims.

Usage (from the repo root; module_db needs numpy and expecttest, which the
oracle venv does not carry, so they go into target/pydeps once):

    .oracle/bin/python -m pip install --target target/pydeps numpy expecttest
    PYTHONPATH=target/pydeps .oracle/bin/python oracle/guard_forms.py export [CLASS ...]
    .oracle/bin/python oracle/guard_forms.py answer LABEL TORCHSPEC
    python3 oracle/guard_forms.py report > docs/guard-forms.md

``export`` builds every ModuleInfo of
``torch.testing._internal.common_modules.module_db`` with each of its
``module_inputs_func`` inputs (at most ``MAX_INPUTS``, evenly spaced; CPU, float32, ``training=False``, the module
in eval mode), plus the ``torch.nn`` modules module_db has no inputs for
(``EXTRA`` below), and exports each twice with ``torch.export.export``
(non-strict): ``Dim.AUTO`` on every dim of every tensor input (``all``),
and on dim 0 only (``batch``). Each export has 20 s (SIGALRM); a module
that fails to export, or takes longer, is recorded as skipped with the
reason. It records every program's ``ep._guards_code`` (what
``torch.export.save`` writes as the program's ``guards_code``; it is
computed in ``ExportedProgram.__init__`` by ``_convert_guards_to_code``
from the shape env's guards, printed by ``ShapeGuardPythonPrinter``) into
``target/guard-forms/results.json``, and saves each program with a
non-empty ``guards_code`` as ``target/guard-forms/pt2/NAME.pt2``.

``answer LABEL TORCHSPEC`` runs, for a selection of the saved programs (per
module class and variant the one with the most forms, and every program
with a form those lack), ``TORCHSPEC probes``
(the program's example inputs and inputs around each dynamic dim's range)
and ``TORCHSPEC check-inputs`` on them, and PyTorch on the same probes
(``capture.py``'s ``run_probe``: a fresh ``ep.module()`` per probe), and
writes ``target/guard-forms/answers-LABEL.json``: per program, how many
probes torchspec answers ``unsupported``, and how many agree with PyTorch.

``report`` prints the markdown summary: the distinct forms (operators,
functions, attributes, comparison shapes) with how many guards, programs
and modules use them and an example, the distinct guard shapes (sources
and numbers abstracted), the skipped modules and their reasons, and the
answers of every ``answers-*.json`` present.
"""

from __future__ import annotations

import ast
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "guard-forms")
TIMEOUT_S = 20
# At most this many of a ModuleInfo's inputs (MultiheadAttention has 64,
# module_db 1,829 in all: about an hour of exports on two shared cores).
MAX_INPUTS = 12


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout(f"export took more than {TIMEOUT_S} s")


def _extra_inputs() -> list[tuple[str, Any, tuple, dict]]:
    """(name, constructor thunk, args, kwargs) for torch.nn modules module_db has no inputs for."""
    import torch
    import torch.nn as nn

    g = torch.Generator().manual_seed(0)

    def t(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g)

    def pool_idx(pool: Any, x: torch.Tensor) -> tuple:
        out, idx = pool(x)
        return (out, idx)

    return [
        ("AdaptiveLogSoftmaxWithLoss", lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]),
         (t(4, 8), torch.tensor([0, 3, 5, 9])), {}),
        ("AlphaDropout", lambda: nn.AlphaDropout(0.5), (t(2, 4, 5),), {}),
        ("ChannelShuffle", lambda: nn.ChannelShuffle(2), (t(2, 4, 3, 3),), {}),
        ("CosineSimilarity", lambda: nn.CosineSimilarity(), (t(4, 8), t(4, 8)), {}),
        ("CrossMapLRN2d", lambda: nn.CrossMapLRN2d(3), (t(2, 4, 5, 5),), {}),
        ("Dropout", lambda: nn.Dropout(0.5), (t(4, 8),), {}),
        ("Dropout1d", lambda: nn.Dropout1d(0.5), (t(2, 4, 8),), {}),
        ("Dropout2d", lambda: nn.Dropout2d(0.5), (t(2, 4, 5, 5),), {}),
        ("Dropout3d", lambda: nn.Dropout3d(0.5), (t(2, 3, 4, 4, 4),), {}),
        ("EmbeddingBag", lambda: nn.EmbeddingBag(10, 3, mode="mean"),
         (torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]]),), {}),
        ("FeatureAlphaDropout", lambda: nn.FeatureAlphaDropout(0.5), (t(2, 4, 5, 5),), {}),
        ("Flatten", lambda: nn.Flatten(), (t(2, 3, 4, 5),), {}),
        ("Fold", lambda: nn.Fold(output_size=(4, 5), kernel_size=(2, 2)), (t(1, 12, 12),), {}),
        ("Hardsigmoid", lambda: nn.Hardsigmoid(), (t(4, 8),), {}),
        ("Identity", lambda: nn.Identity(), (t(4, 8),), {}),
        ("LazyBatchNorm1d", lambda: nn.LazyBatchNorm1d(), (t(4, 3),), {}),
        ("LazyBatchNorm2d", lambda: nn.LazyBatchNorm2d(), (t(2, 3, 4, 4),), {}),
        ("LazyBatchNorm3d", lambda: nn.LazyBatchNorm3d(), (t(2, 3, 4, 4, 4),), {}),
        ("LazyInstanceNorm1d", lambda: nn.LazyInstanceNorm1d(), (t(2, 3, 5),), {}),
        ("LazyInstanceNorm2d", lambda: nn.LazyInstanceNorm2d(), (t(2, 3, 4, 4),), {}),
        ("LazyInstanceNorm3d", lambda: nn.LazyInstanceNorm3d(), (t(2, 3, 4, 4, 4),), {}),
        ("LazyLinear", lambda: nn.LazyLinear(4), (t(2, 3),), {}),
        ("MaxUnpool1d", lambda: nn.MaxUnpool1d(2),
         pool_idx(nn.MaxPool1d(2, return_indices=True), t(1, 2, 8)), {}),
        ("MaxUnpool2d", lambda: nn.MaxUnpool2d(2),
         pool_idx(nn.MaxPool2d(2, return_indices=True), t(1, 2, 4, 6)), {}),
        ("MaxUnpool3d", lambda: nn.MaxUnpool3d(2),
         pool_idx(nn.MaxPool3d(2, return_indices=True), t(1, 2, 4, 4, 6)), {}),
        # module_db's attention inputs share one length for query and
        # key/value; users' cross-attention does not.
        ("MultiheadAttention/cross_batch_first", lambda: nn.MultiheadAttention(
            8, 2, batch_first=True), (t(2, 5, 8), t(2, 6, 8), t(2, 6, 8)), {}),
        ("MultiheadAttention/cross", lambda: nn.MultiheadAttention(8, 2),
         (t(5, 2, 8), t(6, 2, 8), t(6, 2, 8)), {}),
        ("NLLLoss2d", lambda: nn.NLLLoss2d(),
         (t(2, 3, 4, 4).log_softmax(1), torch.zeros(2, 4, 4, dtype=torch.long)), {}),
        ("PairwiseDistance", lambda: nn.PairwiseDistance(), (t(4, 8), t(4, 8)), {}),
        ("PixelShuffle", lambda: nn.PixelShuffle(2), (t(1, 8, 3, 3),), {}),
        ("PixelUnshuffle", lambda: nn.PixelUnshuffle(2), (t(1, 2, 4, 6),), {}),
        ("RReLU", lambda: nn.RReLU(), (t(4, 8),), {}),
        ("SyncBatchNorm", lambda: nn.SyncBatchNorm(3), (t(2, 3, 4),), {}),
        ("TransformerDecoder", lambda: nn.TransformerDecoder(
            nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2),
         (t(2, 5, 8), t(2, 6, 8)), {}),
        ("TripletMarginLoss", lambda: nn.TripletMarginLoss(), (t(4, 8), t(4, 8), t(4, 8)), {}),
        ("TripletMarginWithDistanceLoss", lambda: nn.TripletMarginWithDistanceLoss(),
         (t(4, 8), t(4, 8), t(4, 8)), {}),
        ("Unflatten", lambda: nn.Unflatten(1, (2, 3)), (t(4, 6, 5),), {}),
        ("Unfold", lambda: nn.Unfold(kernel_size=(2, 3)), (t(2, 3, 5, 5),), {}),
        ("Upsample", lambda: nn.Upsample(scale_factor=2, mode="nearest"), (t(1, 2, 3, 3),), {}),
        ("Upsample/bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
         (t(1, 2, 3, 3),), {}),
        ("Upsample/size", lambda: nn.Upsample(size=(5, 7), mode="nearest"), (t(1, 2, 3, 3),), {}),
        ("UpsamplingBilinear2d", lambda: nn.UpsamplingBilinear2d(scale_factor=2), (t(1, 2, 3, 3),), {}),
        ("UpsamplingNearest2d", lambda: nn.UpsamplingNearest2d(scale_factor=2), (t(1, 2, 3, 3),), {}),
    ]


# torch.nn classes that are not modules one exports on their own.
NOT_EXPORTED = {
    "Container": "a container: no forward of its own",
    "Module": "the base class: no forward of its own",
    "ModuleDict": "a container: no forward of its own",
    "ModuleList": "a container: no forward of its own",
    "ParameterDict": "a container: no forward of its own",
    "ParameterList": "a container: no forward of its own",
    "Sequential": "a container (its members are exported on their own)",
    "RNNBase": "a base class (GRU, LSTM and RNN are exported)",
    "RNNCellBase": "a base class (GRUCell, LSTMCell and RNNCell are exported)",
    "DataParallel": "replicates a module over devices: a wrapper, not a module to export",
}


def _jobs() -> list[tuple[str, str, Any, tuple, dict]]:
    """(module class name, input name, constructor thunk, args, kwargs) for every export."""
    import torch
    import torch.nn as nn
    from torch.testing._internal.common_modules import module_db

    jobs = []
    covered = set()
    for info in module_db:
        cls = info.module_cls
        covered.add(cls)
        try:
            inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                             requires_grad=False, training=False)
        except Exception as e:  # noqa: BLE001
            jobs.append((cls.__name__, "inputs", None, (), {"error": f"{type(e).__name__}: {e}"}))
            continue
        counts: dict[str, int] = collections.Counter()
        if len(inputs) > MAX_INPUTS:
            # evenly spaced, the first and the last included
            step = (len(inputs) - 1) / (MAX_INPUTS - 1)
            inputs = [inputs[round(k * step)] for k in range(MAX_INPUTS)]
        for mi in inputs:
            desc = mi.desc or "default"
            counts[desc] += 1
            if counts[desc] > 1:
                desc = f"{desc}-{counts[desc]}"
            c = mi.constructor_input
            make = (lambda cls=cls, c=c: cls(*c.args, **c.kwargs))
            fi = mi.forward_input
            jobs.append((cls.__name__, desc, make, tuple(fi.args), dict(fi.kwargs)))
    for name, make, args, kwargs in _extra_inputs():
        cls_name, _, desc = name.partition("/")
        jobs.append((cls_name, desc or "default", make, args, kwargs))
    done = {j[0] for j in jobs}
    for n in sorted(dir(nn)):
        v = getattr(nn, n)
        if isinstance(v, type) and issubclass(v, nn.Module) and v not in covered and n not in done:
            jobs.append((n, "-", None, (), {"skip": NOT_EXPORTED.get(n, "no inputs here")}))
    return jobs


def _dynamic_shapes(m: Any, args: tuple, kwargs: dict, variant: str) -> Any:
    import torch
    import torch.utils._pytree as pytree
    from torch.export import Dim
    from torch.export.dynamic_shapes import _combine_args

    def spec(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dim() > 0:
            dims = range(x.dim()) if variant == "all" else [0]
            return {i: Dim.AUTO for i in dims}
        return None

    return pytree.tree_map(spec, _combine_args(m, args, kwargs))


def cmd_export(argv: list[str]) -> int:
    import torch

    os.makedirs(os.path.join(OUT, "pt2"), exist_ok=True)
    only = set(argv)
    results = []
    if only and os.path.exists(os.path.join(OUT, "results.json")):
        # Re-export only these classes: keep every other row.
        with open(os.path.join(OUT, "results.json")) as f:
            results = [r for r in json.load(f)["results"] if r["module"] not in only]
    signal.signal(signal.SIGALRM, _alarm)
    for cls_name, desc, make, args, kwargs in _jobs():
        if only and cls_name not in only:
            continue
        if make is None:
            reason = kwargs.get("skip") or f"module_inputs_func raised {kwargs.get('error')}"
            results.append({"module": cls_name, "input": desc, "variant": "-", "skipped": reason})
            continue
        for variant in ("all", "batch"):
            name = f"{cls_name}.{desc}.{variant}"
            row: dict[str, Any] = {"module": cls_name, "input": desc, "variant": variant}
            start = time.monotonic()
            signal.alarm(TIMEOUT_S)
            try:
                torch.manual_seed(0)
                m = make().eval()
                if cls_name.startswith("Lazy"):
                    m(*args, **kwargs)  # materialize the lazy parameters first
                ep = torch.export.export(m, args, kwargs,
                                         dynamic_shapes=_dynamic_shapes(m, args, kwargs, variant))
                row["guards_code"] = list(ep._guards_code)
                if ep._guards_code:
                    path = os.path.join(OUT, "pt2", re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".pt2")
                    torch.export.save(ep, path)
                    row["pt2"] = os.path.relpath(path, ROOT)
            except _Timeout as e:
                row["skipped"] = str(e)
            except Exception as e:  # noqa: BLE001
                first = (str(e).strip().splitlines() or [""])[0][:160]
                row["skipped"] = f"export raised {type(e).__name__}: {first}"
            finally:
                signal.alarm(0)
            row["seconds"] = round(time.monotonic() - start, 2)
            results.append(row)
            print(f"{name}: {len(row.get('guards_code', []))} guards"
                  + (f" (skipped: {row['skipped']})" if "skipped" in row else ""),
                  file=sys.stderr, flush=True)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump({"torch": torch.__version__, "results": results}, f, indent=1)
    return 0


def _selected(results: list[dict]) -> list[dict]:
    """The programs `answer` probes: per module class and variant the one
    with the most distinct forms (then the most guards), plus, in order,
    any program with a form none of those has."""
    with_pt2 = [r for r in results if "pt2" in r]
    best: dict[tuple[str, str], dict] = {}
    for r in with_pt2:
        key = (r["module"], r["variant"])
        feats = {f for g in r["guards_code"] for f in features(g)}
        score = (len(feats), len(r["guards_code"]))
        if key not in best or score > best[key][0]:
            best[key] = (score, r)
    chosen = [r for _, r in best.values()]
    seen = {f for r in chosen for g in r["guards_code"] for f in features(g)}
    for r in with_pt2:
        feats = {f for g in r["guards_code"] for f in features(g)}
        if feats - seen and r not in chosen:
            chosen.append(r)
            seen |= feats
    return sorted(chosen, key=lambda r: r["pt2"])


def cmd_answer(argv: list[str]) -> int:
    """Probes of the selected programs: torchspec's answers beside PyTorch's.

    The probe files (``torchspec probes`` of the first binary run) and
    PyTorch's answers (``torch-answers.json``) are kept, so that two
    binaries (e.g. before and after a change) answer the same probes.
    """
    label, torchspec = argv
    import capture_programs
    import torch

    capture_programs.import_torch()
    with open(os.path.join(OUT, "results.json")) as f:
        results = json.load(f)["results"]
    cache_path = os.path.join(OUT, "torch-answers.json")
    cache = {}
    if os.path.exists(cache_path):
        with open(cache_path) as f:
            cache = json.load(f)
    out = []
    for row in _selected(results):
        pt2 = os.path.join(ROOT, row["pt2"])
        probes_path = pt2[:-4] + ".probes.jsonl"
        if not os.path.exists(probes_path):
            made = subprocess.run([torchspec, "probes", pt2], capture_output=True, text=True)
            if made.returncode != 0:
                first = (made.stderr.strip().splitlines() or [""])[0][:300]
                try:
                    torch.export.load(pt2)
                    theirs_load = "loads"
                except Exception as e:  # noqa: BLE001
                    theirs_load = f"raises {type(e).__name__} too"
                out.append({"pt2": row["pt2"], "module": row["module"], "probes": 0,
                            "agree": 0, "unsupported": 0, "no_probes": first,
                            "torch_load": theirs_load})
                print(f"{row['pt2']}: no probes: {first}", file=sys.stderr, flush=True)
                continue
            with open(probes_path, "w") as f:
                f.write(made.stdout)
        got = subprocess.run([torchspec, "check-inputs", pt2, probes_path],
                             capture_output=True, text=True)
        mine = [json.loads(line) for line in got.stdout.splitlines() if line.strip()]
        if row["pt2"] not in cache:
            try:
                ep = torch.export.load(pt2)
            except Exception as e:  # noqa: BLE001
                print(f"{row['pt2']}: torch.export.load raised {type(e).__name__}",
                      file=sys.stderr, flush=True)
                continue
            cache[row["pt2"]] = [capture_programs.probe_result(ep, p)
                                 for p in capture_programs.read_probes(probes_path)]
            with open(cache_path, "w") as f:
                json.dump(cache, f)
        theirs = cache[row["pt2"]]
        agree = unsupported = 0
        misses = []
        for a, b in zip(mine, theirs):
            if "unsupported" in a:
                unsupported += 1
                misses.append({"id": a["id"], "torchspec": a, "torch": b})
                continue
            want_ok = "ok" in b or not b.get("pre_kernel", True)
            if ("ok" in a and want_ok) or ("error" in a and "error" in b and not want_ok
                                           and a["error"] == b["error"]):
                agree += 1
            else:
                misses.append({"id": a["id"], "torchspec": a, "torch": b})
        out.append({"pt2": row["pt2"], "module": row["module"], "probes": len(theirs),
                    "agree": agree, "unsupported": unsupported, "misses": misses[:5]})
        print(f"{row['pt2']}: {agree}/{len(theirs)} agree, {unsupported} unsupported",
              file=sys.stderr, flush=True)
    with open(os.path.join(OUT, f"answers-{label}.json"), "w") as f:
        json.dump(out, f, indent=1)
    return 0


def features(guard: str) -> list[str]:
    """The forms one guard uses: operators, called functions, attributes, comparison shapes."""
    try:
        tree = ast.parse(guard, mode="eval")
    except SyntaxError as e:
        return [f"SyntaxError: {e.msg}"]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            found.add(f"`{_OPS[type(node.op)]}`")
        elif isinstance(node, ast.UnaryOp):
            found.add({ast.USub: "unary `-`", ast.Not: "`not`", ast.UAdd: "unary `+`",
                       ast.Invert: "`~`"}[type(node.op)])
        elif isinstance(node, ast.BoolOp):
            found.add("`and`" if isinstance(node.op, ast.And) else "`or`")
        elif isinstance(node, ast.Compare):
            ops = " ".join(_OPS[type(o)] for o in node.ops)
            found.add(f"chained comparison `{ops}`" if len(node.ops) > 1 else f"`{ops}`")
        elif isinstance(node, ast.Call):
            fn = ast.unparse(node.func)
            if fn.endswith(".size"):
                continue
            found.add(f"`{fn}()`")
        elif isinstance(node, ast.IfExp):
            found.add("`x if c else y`")
        elif isinstance(node, ast.Constant) and isinstance(node.value, float):
            found.add("a float literal")
        elif isinstance(node, ast.Attribute) and node.attr not in ("size",) and not (
                isinstance(node.value, ast.Name) and node.value.id in ("torch", "math")):
            found.add(f"`.{node.attr}`")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "math" and node.attr in ("inf", "nan", "pi", "e"):
            found.add(f"`math.{node.attr}`")
    return sorted(found)


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Div: "/",
        ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
        ast.LShift: "<<", ast.RShift: ">>", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<",
        ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not",
        ast.In: "in", ast.NotIn: "not in", ast.MatMult: "@"}


def shape_of(guard: str) -> str:
    """A guard with its sources as `s` and its ints as `n`."""
    s = re.sub(r"L\[[^\]]*\](\[[^\]]*\])*(\.size\(\)\[\d+\])?", "s", guard)
    s = re.sub(r"args\[\d+\](\.size\(\)\[\d+\])?", "s", s)
    return re.sub(r"(?<![\w.])\d+(?![\w.])", "n", s)


def cmd_report(argv: list[str]) -> int:
    with open(os.path.join(OUT, "results.json")) as f:
        data = json.load(f)
    results = data["results"]
    exported = [r for r in results if "guards_code" in r]
    skipped = [r for r in results if "skipped" in r]
    modules = sorted({r["module"] for r in results})
    mod_exported = sorted({r["module"] for r in exported})
    with_guards = [r for r in exported if r["guards_code"]]
    form_guards: dict[str, int] = collections.Counter()
    form_programs: dict[str, set] = collections.defaultdict(set)
    form_modules: dict[str, set] = collections.defaultdict(set)
    form_example: dict[str, tuple[str, str]] = {}
    form_pt2: dict[str, set] = collections.defaultdict(set)
    shapes: dict[str, int] = collections.Counter()
    shape_modules: dict[str, set] = collections.defaultdict(set)
    distinct = set()
    for r in with_guards:
        prog = f"{r['module']}.{r['input']}.{r['variant']}"
        for g in r["guards_code"]:
            distinct.add(g)
            shapes[shape_of(g)] += 1
            shape_modules[shape_of(g)].add(r["module"])
            for feat in features(g):
                form_guards[feat] += 1
                form_programs[feat].add(prog)
                form_modules[feat].add(r["module"])
                if "pt2" in r:
                    form_pt2[feat].add(r["pt2"])
                if feat not in form_example or len(g) < len(form_example[feat][1]):
                    form_example[feat] = (prog, g)
    p = print
    p("# Guard forms of torch.nn modules exported with dynamic dims")
    p()
    p("Generated by `oracle/guard_forms.py` (see its docstring for the commands); "
      "do not edit by hand.")
    p()
    p(f"torch {data['torch']}: {len(modules)} `torch.nn` module classes "
      f"(`module_db` and the ones it has no inputs for), "
      f"{len(exported) + len([s for s in skipped if s['variant'] != '-'])} exports tried "
      f"(each module input with `Dim.AUTO` on every dim, and on dim 0 only); "
      f"{len(exported)} exported from {len(mod_exported)} classes, "
      f"{len(with_guards)} programs with a non-empty `guards_code` "
      f"({len(distinct)} distinct guards), {len(skipped)} skipped.")
    p()
    answers = sorted(f for f in os.listdir(OUT) if f.startswith("answers-") and f.endswith(".json"))
    answered: dict[str, tuple[set, set]] = {}   # label -> (probed pt2s, pt2s with every probe answered)
    for fname in answers:
        with open(os.path.join(OUT, fname)) as f:
            rows = json.load(f)
        probed = {r["pt2"] for r in rows if "no_probes" not in r}
        full = {r["pt2"] for r in rows if "no_probes" not in r and r["unsupported"] == 0}
        answered[fname[len("answers-"):-len(".json")]] = (probed, full)
    p("## Forms")
    p()
    p("`answered (LABEL)`: of the probed programs whose guards use the form (see the "
      "probes section below), those where `torchspec check-inputs` (LABEL) answers every "
      "probe, none `unsupported`.")
    p()
    labels = sorted(answered)
    p("| form | guards | programs | modules | "
      + "".join(f"answered ({label}) | " for label in labels) + "example (program: guard) |")
    p("|---|---:|---:|---:|" + "---:|" * len(labels) + "---|")
    for feat in sorted(form_guards, key=lambda k: (-len(form_modules[k]), k)):
        prog, g = form_example[feat]
        cols = ""
        for label in labels:
            probed, full = answered[label]
            n = form_pt2[feat] & probed
            cols += f"{len(n & full)}/{len(n)} | "
        p(f"| {feat} | {form_guards[feat]} | {len(form_programs[feat])} | "
          f"{len(form_modules[feat])} | {cols}{prog}: `{g}` |")
    p()
    p("## Guard shapes (sources as `s`, ints as `n`)")
    p()
    p("| shape | guards | modules (first 6) |")
    p("|---|---:|---|")
    for sh, n in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])):
        mods = sorted(shape_modules[sh])
        more = f", ... ({len(mods)})" if len(mods) > 6 else ""
        p(f"| `{sh}` | {n} | {', '.join(mods[:6])}{more} |")
    if answers:
        p()
        p("## Probes of these programs: torchspec check-inputs beside PyTorch")
        p()
        p("A selection of the programs with guards (per module class and variant the one "
          "with the most forms, and every program with a form those lack): "
          "`torchspec probes` then `torchspec check-inputs`, and PyTorch on the same "
          "probes (`capture.py`'s `run_probe`), by two torchspec binaries (LABEL).")
        p()
        p("| torchspec | programs | probes | agree | unsupported | other differences | "
          "programs with every probe agreeing |")
        p("|---|---:|---:|---:|---:|---:|---:|")
        for fname in answers:
            with open(os.path.join(OUT, fname)) as f:
                rows = json.load(f)
            label = fname[len("answers-"):-len(".json")]
            probes = sum(r["probes"] for r in rows)
            agree = sum(r["agree"] for r in rows)
            unsup = sum(r["unsupported"] for r in rows)
            full = sum(1 for r in rows if r["agree"] == r["probes"] and "no_probes" not in r)
            p(f"| {label} | {len(rows)} | {probes} | {agree} | {unsup} | "
              f"{probes - agree - unsup} | {full} |")
        for fname in answers:
            with open(os.path.join(OUT, fname)) as f:
                rows = json.load(f)
            label = fname[len("answers-"):-len(".json")]
            bad = [r for r in rows if "no_probes" in r or r["agree"] != r["probes"]]
            if not bad:
                continue
            p()
            p(f"{label}: the programs where a probe is unsupported or differs, "
              f"or `torchspec probes` refused the program:")
            p()
            for r in bad:
                if "no_probes" in r:
                    why = r["no_probes"].replace(ROOT + os.sep, "")[:200]
                    p(f"- `{r['pt2']}`: no probes: {why} "
                      f"(torch.export.load in a fresh process {r.get('torch_load', '?')})")
                    continue
                m = r["misses"][0]
                p(f"- `{r['pt2']}`: {r['agree']}/{r['probes']} agree; first: `{m['id']}`: "
                  f"torchspec `{json.dumps(m['torchspec'])[:160]}`, "
                  f"torch `{json.dumps(m['torch'])[:160]}`")
    p()
    p("## Skipped")
    p()
    p("| module | input | variant | reason |")
    p("|---|---|---|---|")
    for r in skipped:
        reason = r["skipped"].replace("|", "\\|").replace("\n", " ")
        p(f"| {r['module']} | {r['input']} | {r['variant']} | {reason} |")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("export", "answer", "report"):
        print(__doc__, file=sys.stderr)
        return 2
    return {"export": cmd_export, "answer": cmd_answer, "report": cmd_report}[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
