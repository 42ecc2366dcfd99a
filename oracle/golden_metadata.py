"""Write a golden directory's METADATA.json (oracle/regen-goldens.sh runs it
with the Python that captured the goldens): the torch and Python versions, the
commands that captured each kind of golden, and the files captured.

Usage: golden_metadata.py TORCH OUT PY COMMAND N CASE... M REGRESSION... PROGRAM...
"""
import json, platform, sys
from names import GOLDEN_PIPELINES  # oracle/names.json
want, out, py, command, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
names = sys.argv[6:6 + n]
m = int(sys.argv[6 + n])
regressions, programs = sys.argv[7 + n:7 + n + m], sys.argv[7 + n + m:]
import torch
if torch.__version__.split("+")[0] != want:
    sys.exit(f"regen-goldens: torch {torch.__version__} is installed, goldens are for torch {want}")
meta = {
    "torch": torch.__version__,
    "python": sys.version.split()[0],
    "platform": {"system": platform.system(), "machine": platform.machine()},
    "case_format": "v1",
    "command": command,
    "capture": f"{py} oracle/capture.py "
               f"corpus/cases/NAME.jsonl > corpus/goldens/torch-{want}/NAME.jsonl",
    "cases": names,
    "regression_capture": f"{py} oracle/capture.py "
                          f"corpus/regressions/NAME.jsonl > "
                          f"corpus/goldens/torch-{want}/regressions/NAME.jsonl",
    "regressions": regressions,
    "program_capture": f"{py} oracle/capture.py "
                       f"--program-goldens corpus/goldens/torch-{want}/programs "
                       "corpus/programs/NAME.pt2 ... (one line per pipeline of "
                       "`capture.py --program corpus/programs/NAME.pt2 [--pass P ...]`, "
                       "probes as `capture.py --probes NAME.pt2 NAME.probes.jsonl`)",
    "program_pipelines": [list(p) for p in GOLDEN_PIPELINES],
    "programs": programs,
    "weights_capture": f"{py} oracle/weights.py --goldens "
                       f"corpus/goldens/torch-{want}/weights corpus/programs/NAME.pt2 "
                       "corpus/weights/NAME.pt2 ... (`weights.py --sha256 NAME.pt2` "
                       "for one)",
    "mutant_capture": f"{py} oracle/capture.py --mutant-goldens "
                      f"corpus/goldens/torch-{want}/mutants corpus/mutants/NAME.json ...",
}
with open(out, "w", encoding="utf-8") as f:
    f.write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
