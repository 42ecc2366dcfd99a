"""The tensors of an exported program as PyTorch loads them: the oracle of
``torchspec weights`` (``docs/weights-format.md``).

Usage (from the repo root):
    .oracle/bin/python oracle/weights.py --sha256 P.pt2              # one line per tensor
    .oracle/bin/python oracle/weights.py --goldens OUTDIR P.pt2 ...   # OUTDIR/NAME.jsonl each
    .oracle/bin/python oracle/weights.py --check-safetensors TORCHSPEC P.pt2 ...

``--sha256`` prints, for ``ep = torch.export.load(P)``, one JSON line per
tensor of ``ep.state_dict`` then of ``ep.constants`` (in their dicts'
order): kind, name, dtype, shape, stride, storage offset and the sha256 of
the bytes of ``t.contiguous()`` (row-major, each element's bytes as torch
stores them). A program ``torch.export.load`` refuses is one line
``{"error": {"type", "message"}}``, with ``"logged": {"type", "message"}``
when ``torch.export.load`` logged the pt2 reader's RuntimeError before
trying the pre-2.8 layout. ``--goldens`` writes those lines for
each program to ``OUTDIR/NAME.jsonl`` (``oracle/regen-goldens.sh`` runs it
on ``corpus/programs/`` and ``corpus/weights/``).

``--check-safetensors`` runs ``TORCHSPEC weights P -o FILE --registrations
corpus/programs/registrations.json`` for each
program and loads FILE with ``safetensors.torch.load_file``: the same names
as ``ep.state_dict`` and ``ep.constants`` together, and for each the same
dtype, shape and values (``torch.equal``, NaN equal to NaN, bit for bit).
A program whose tensors torchspec refuses (its exit status is not 0) is
counted apart, with its first line of stderr. Prints a summary; exit 1 on
any mismatch.

Written against the PyTorch and safetensors APIs only, independently of the
Rust reader.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import sys
import tempfile
from typing import Any

from golden_encoding import dumps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What this process registers (zoo_types), as the reference reads it.
REGISTRATIONS = os.path.join(ROOT, "corpus", "programs", "registrations.json")


def import_torch() -> Any:
    import torch
    # The registrations every loading process of the zoo has (custom ops,
    # pytree types), as in oracle/capture.py.
    import zoo_types  # noqa: F401
    return torch


def contiguous_bytes(t: Any) -> bytes:
    torch = sys.modules["torch"]
    c = t.detach().cpu().clone(memory_format=torch.contiguous_format)
    n = c.numel() * c.element_size()
    assert c.untyped_storage().nbytes() == n, "a fresh contiguous storage"
    # As torch's own _get_raw_tensor_bytes reads a storage (bytes() of an
    # UntypedStorage goes element by element).
    return ctypes.string_at(c.data_ptr(), n) if n else b""


def subclass_of(t: Any) -> str | None:
    """The qualified type of a tensor subclass (a TwoTensor, a DTensor: what
    torch.export.save pickles), None for a Tensor or Parameter. A wrapper
    subclass holds its data in inner tensors, not in a storage of its own,
    so its bytes are not hashed."""
    torch = sys.modules["torch"]
    if type(t) in (torch.Tensor, torch.nn.Parameter):
        return None
    return f"{type(t).__module__}.{type(t).__qualname__}"


def tensor_line(kind: str, name: str, t: Any) -> dict[str, Any]:
    line = {
        "kind": kind,
        "name": name,
        "dtype": str(t.dtype),
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "storage_offset": t.storage_offset(),
    }
    subclass = subclass_of(t)
    if subclass is not None:
        line["subclass"] = subclass
    else:
        line["sha256"] = hashlib.sha256(contiguous_bytes(t)).hexdigest()
    return line


class _Logged(logging.Handler):
    """The exceptions logged on "torch.export": `torch.export.load` logs
    load_pt2's RuntimeError (`exc_info=True`) before it tries the pre-2.8
    layout, whose refusal is what it raises."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.excs: list[BaseException] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.excs.append(record.exc_info[1])


def program_lines(path: str) -> list[dict[str, Any]]:
    torch = sys.modules["torch"]
    logged = _Logged()
    logger = logging.getLogger("torch.export")
    logger.addHandler(logged)
    try:
        ep = torch.export.load(path)
    except Exception as e:  # the golden of a refused program
        line: dict[str, Any] = {"error": {"type": type(e).__name__, "message": str(e)}}
        if logged.excs:
            inner = logged.excs[-1]
            line["logged"] = {"type": type(inner).__name__, "message": str(inner)}
        return [line]
    finally:
        logger.removeHandler(logged)
    lines = []
    for kind, d in (("state_dict", ep.state_dict), ("constants", ep.constants)):
        for name, v in d.items():
            if not isinstance(v, torch.Tensor):
                lines.append({"kind": kind, "name": name, "object": type(v).__qualname__})
                continue
            lines.append(tensor_line(kind, name, v))
    return lines


def main_goldens(outdir: str, paths: list[str]) -> int:
    os.makedirs(outdir, exist_ok=True)
    names = [os.path.basename(p) for p in paths]
    if len(set(names)) != len(names):
        print("weights.py: two archives of one name would share a golden", file=sys.stderr)
        return 2
    for path in paths:
        name = os.path.basename(path)[: -len(".pt2")]
        lines = program_lines(path)
        with open(os.path.join(outdir, name + ".jsonl"), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(dumps(line) + "\n")
    return 0


def same_values(torch: Any, a: Any, b: Any) -> bool:
    """Bit for bit: NaN payloads and -0.0 included."""
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    return contiguous_bytes(a) == contiguous_bytes(b)


def main_check_safetensors(torchspec: str, paths: list[str]) -> int:
    torch = sys.modules["torch"]
    from safetensors.torch import load_file
    ok, refused, failed = 0, [], []
    tensors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            out = os.path.join(tmp, os.path.basename(path) + ".safetensors")
            run = subprocess.run([torchspec, "weights", path, "-o", out,
                                  "--registrations", REGISTRATIONS],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                first = (run.stderr.strip().splitlines() or ["?"])[0]
                refused.append((path, first))
                continue
            ep = torch.export.load(path)
            want = {**ep.state_dict, **ep.constants}
            got = load_file(out)
            problems = []
            if list(got) != list(want) and sorted(got) != sorted(want):
                problems.append(f"names {sorted(got)} != {sorted(want)}")
            for k, v in want.items():
                if k in got and not same_values(torch, got[k], v):
                    problems.append(f"{k}: {got[k].dtype} {tuple(got[k].shape)} vs "
                                    f"{v.dtype} {tuple(v.shape)} or values")
            if problems:
                failed.append((path, problems))
            else:
                ok += 1
                tensors += len(want)
    print(f"safetensors: {ok} program(s) with {tensors} tensor(s) load equal, "
          f"{len(refused)} refused by torchspec, {len(failed)} differ")
    for path, why in refused:
        print(f"  refused {path}: {why}")
    for path, problems in failed:
        print(f"  DIFFERS {path}: {'; '.join(problems)}")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    usage = ("usage: weights.py --sha256 P.pt2 | --goldens OUTDIR P.pt2 ... | "
             "--check-safetensors TORCHSPEC P.pt2 ...")
    if len(argv) == 2 and argv[0] == "--sha256":
        import_torch()
        for line in program_lines(argv[1]):
            print(dumps(line))
        return 0
    if len(argv) >= 3 and argv[0] == "--goldens":
        import_torch()
        return main_goldens(argv[1], argv[2:])
    if len(argv) >= 3 and argv[0] == "--check-safetensors":
        import_torch()
        return main_check_safetensors(argv[1], argv[2:])
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
