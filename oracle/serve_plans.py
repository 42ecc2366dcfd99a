"""Generated programs in serve mode (`capture.py --serve`, issue 15 item 1):
the requests behind `torchspec fuzz --live --programs`.

    {"request": "plan", "id", "plan": PLAN, "root": DIR, "name": NAME}
        builds PLAN (oracle/plans.py), exports it as oracle/zoo.py exports a
        zoo entry (torch.export.export, run_decompositions when asked, metadata
        normalized) and lays it out under DIR as the zoo is laid out:
          DIR/corpus/programs/NAME.pt2            torch.export.save
          DIR/corpus/programs/NAME.probes.jsonl   zoo.probes_for (example inputs)
          DIR/corpus/goldens/torch-V/programs/NAME.jsonl, NAME.serialized.jsonl,
              NAME.probes.jsonl                   capture.py's program goldens
          DIR/corpus/goldens/torch-V/weights/NAME.jsonl   weights.py's lines
        Reply: {"exported": true} or {"exported": false, "stage", "type",
        "message"}: the stage that raised (`eager`: the plan run on its example
        inputs, `export`, `save`, `load`) and what it raised.

        With "goldens": false only NAME.pt2 is written (the mutants of
        `torchspec fuzz --live --mutate --programs` need no more until one is
        kept).

    {"request": "plan_goldens", "id", "plan": PLAN, "root": DIR, "name": NAME}
        PLAN exported again as "plan" does, with the probes and goldens; the
        reply is {"invalid": ...} when the program JSON exported now is not
        the one already in DIR (export is expected to be deterministic).
        Reply: {"exported": true}

    {"request": "plan_probes", "id", "root": DIR, "name": NAME}
        the goldens of DIR/corpus/programs/NAME.derived-probes.jsonl (written
        by the Rust side with `torchspec probes`) on NAME.pt2.
        Reply: {"written": true}

Every golden is written by the same functions that write the zoo's, so a
generated program is checked exactly as `torchspec check` checks the zoo, and a
kept one moves into the corpus as it is. Those are capture_programs.py's, which
capture.py's serve mode (capture_serve.py) hands to `serve` as ``oracle``, so this
module does not import the capture modules, which import it.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import torch

from mutant_outcomes import cache_schema_type_hints
import plans
import weights
import zoo

warnings.simplefilter("ignore")
cache_schema_type_hints()


def _paths(req: dict) -> tuple[str, str, str]:
    root, name = req["root"], req["name"]
    programs = os.path.join(root, "corpus", "programs")
    goldens = os.path.join(root, "corpus", "goldens", f"torch-{torch.__version__.split('+')[0]}")
    for d in (programs, os.path.join(goldens, "programs"), os.path.join(goldens, "weights")):
        os.makedirs(d, exist_ok=True)
    return os.path.join(programs, name), goldens, name


def _failed(stage: str, e: BaseException) -> dict:
    return {"exported": False, "stage": stage, "type": type(e).__name__,
            "message": str(e).split("\n")[0][:500]}


def export_plan(plan: dict) -> tuple[zoo.Export, torch.export.ExportedProgram]:
    """PLAN exported as zoo.export_entry exports a zoo entry."""
    return zoo.export_entry(zoo.Entry("plan", lambda: plans.build(plan)))


def serve_plan(req: dict, oracle: Any) -> dict:
    stem, goldens, name = _paths(req)
    plan = req["plan"]
    try:
        torch.manual_seed(0)
        spec = plans.build(plan)
        args, kwargs = torch.utils._pytree.tree_map(zoo._clone, (spec.args, spec.kwargs))
        spec.module(*args, **kwargs)
    except Exception as e:
        return _failed("eager", e)
    try:
        spec, ep = export_plan(plan)
    except Exception as e:
        return _failed("export", e)
    pt2 = stem + ".pt2"
    try:
        torch.export.save(ep, pt2)
    except Exception as e:
        return _failed("save", e)
    try:
        loaded = torch.export.load(pt2)
    except Exception as e:
        return _failed("load", e)
    if req.get("goldens", True):
        zoo.write_probes(name, zoo.probes_for(spec, loaded), stem + ".probes.jsonl")
        write_goldens(pt2, goldens, oracle)
    return {"exported": True}


def _program_json(pt2: str) -> bytes:
    import zipfile
    import mutate
    with zipfile.ZipFile(pt2) as z:
        return z.read(mutate.model_entry(z))


def serve_goldens(req: dict, oracle: Any) -> dict:
    stem, _goldens, _name = _paths(req)
    pt2 = stem + ".pt2"
    before = _program_json(pt2)
    os.replace(pt2, stem + ".before.pt2")
    reply = serve_plan({**req, "goldens": True}, oracle)
    if reply.get("exported") is not True:
        return {"invalid": f"the plan no longer exports: {reply}"}
    if _program_json(pt2) != before:
        return {"invalid": "exported again, the program JSON differs"}
    os.replace(stem + ".before.pt2", pt2)
    return reply


def write_goldens(pt2: str, goldens: str, oracle: Any) -> None:
    """The program, serialized, probe and weights goldens of PT2, as
    `oracle/regen-goldens.sh` writes the zoo's (ORACLE: capture_programs.py)."""
    name = os.path.basename(pt2)[:-len(".pt2")]
    out = os.path.join(goldens, "programs", name)
    for suffix, lines in ((".jsonl", oracle.program_golden_lines(pt2)),
                          (".serialized.jsonl", oracle.serialized_golden_lines(pt2))):
        with open(out + suffix, "wb") as f:
            for line in lines:
                oracle._write_line(f, line)
    oracle.write_probe_goldens(pt2, pt2[:-len(".pt2")] + ".probes.jsonl", out + ".probes.jsonl")
    with open(os.path.join(goldens, "weights", name + ".jsonl"), "w", encoding="utf-8") as f:
        for line in weights.program_lines(pt2):
            f.write(weights.dumps(line) + "\n")


def serve_probes(req: dict, oracle: Any) -> dict:
    stem, goldens, name = _paths(req)
    oracle.write_probe_goldens(stem + ".pt2", stem + ".derived-probes.jsonl",
                                os.path.join(goldens, "programs", name + ".derived-probes.jsonl"))
    return {"written": True}


def serve(req: dict, oracle: Any) -> dict:
    """The reply to REQ; ORACLE is capture.py, whose golden writers are used."""
    if req.get("request") == "plan_probes":
        return serve_probes(req, oracle)
    if req.get("request") == "plan_goldens":
        return serve_goldens(req, oracle)
    return serve_plan(req, oracle)
