"""The weights corpus: small programs whose point is their tensors, exported
and saved with real PyTorch 2.15.0.

Usage (from the repo root):
    .oracle/bin/python oracle/weights_zoo.py          # write corpus/weights/NAME.pt2

The zoo (``oracle/zoo.py``) covers what a program *does*; these cover how
``torch.export.save`` lays its ``state_dict`` and ``constants`` out in
``data/weights/`` and ``data/constants/``: every dtype it writes, tensors
sharing one storage (offsets, transposes, zero strides, slices whose union
is the storage written, tied parameters), empty and 0-d tensors, values
that are not finite. Their goldens (``oracle/weights.py --goldens``, run by
``oracle/regen-goldens.sh``) are ``corpus/goldens/torch-2.15.0/weights/NAME.jsonl``,
like those of the zoo's programs. Deterministic: values come from
``arange``, so re-running writes the same bytes. Written against the
PyTorch API only, independently of the Rust reader. The archives of
MALFORMED are a saved program with one change each (a storage offset past
the end, a negative stride, a huge shape, a storage file cut short): the
golden is the exception torch.export.load raises. Names start with
``weights-``: a golden is named after its archive, and the zoo's names are
taken.
"""

from __future__ import annotations

import io
import json
import os
import sys
import warnings
import zipfile
from typing import Any

import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "corpus", "weights")

DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.uint16, torch.uint32, torch.uint64, torch.float16, torch.bfloat16,
    torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128,
    torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz,
    torch.float8_e5m2fnuz, torch.float8_e8m0fnu,
]


def values(dtype: torch.dtype, n: int) -> torch.Tensor:
    """n deterministic values of `dtype`: arange/4 - 1 where signed (every
    byte pattern is the dtype's own), complex with both parts set."""
    x = torch.arange(n, dtype=torch.float64) / 4
    if dtype.is_complex:
        c = torch.complex(x - 1, x * 2)
        return c.to(torch.complex64).to(dtype)
    if dtype == torch.bool:
        return (torch.arange(n) % 3) == 1
    if dtype.is_floating_point:
        signed = dtype not in (torch.float8_e8m0fnu,)
        return (x - 1 if signed else x + 0.5).to(torch.float32).to(dtype)
    info = torch.iinfo(dtype)
    big = torch.arange(n, dtype=torch.int64) * 37 - (3 if info.min < 0 else 0)
    return big.to(dtype)


# The two dtypes torch.export.save writes that safetensors has no name for.
WIDE_COMPLEX = [torch.complex32, torch.complex128]


# weights-dtypes: one 2x3 buffer per dtype torch.export.save writes and safetensors
# names (all but WIDE_COMPLEX), a parameter, a frozen one, a non-finite
# float32 buffer and two constants.
class Dtypes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        for d in DTYPES:
            if d in WIDE_COMPLEX:
                continue
            self.register_buffer("b_" + str(d).removeprefix("torch."), values(d, 6).reshape(2, 3))
        self.w = nn.Parameter(values(torch.float32, 4).reshape(2, 2))
        self.frozen = nn.Parameter(values(torch.float32, 2), requires_grad=False)
        self.register_buffer("special", torch.tensor(
            [float("nan"), float("inf"), float("-inf"), -0.0, 1e-45, 3.4e38]))
        self.c16 = values(torch.bfloat16, 3)
        self.c64 = values(torch.int64, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w + self.frozen + self.c16.float().sum() + self.c64.sum()


# weights-complex-wide: the dtypes of WIDE_COMPLEX (their views and hashes;
# `torchspec weights -o` refuses them), one of them non-contiguous.
class WideComplex(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        for d in WIDE_COMPLEX:
            self.register_buffer("b_" + str(d).removeprefix("torch."), values(d, 6).reshape(2, 3))
        self.register_buffer("t_complex128", values(torch.complex128, 6).reshape(2, 3).t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


# weights-shared-storage: tensors that share one storage and are written once:
# an offset, a transpose, a reshape, a zero stride (expand), slices with no
# complete tensor among them (the storage written is their union), a tied
# parameter, an empty and a 0-d tensor, a non-contiguous tensor larger than
# a page, a non-persistent buffer and a constant that views another.
class SharedStorage(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        base = values(torch.float32, 12)
        self.register_buffer("base", base)
        self.register_buffer("tail", base[4:])
        self.register_buffer("grid_t", base.reshape(3, 4).t())
        self.register_buffer("every_other", base[1::2])
        self.register_buffer("ones", torch.ones(1).expand(5))
        part = values(torch.int32, 10)
        self.register_buffer("part_a", part[0:5])
        self.register_buffer("part_b", part[3:8])
        self.register_buffer("empty", torch.zeros(0, 3))
        self.register_buffer("scalar", torch.tensor(2.5))
        self.register_buffer("big_t", values(torch.float32, 64 * 48).reshape(64, 48).t())
        self.register_buffer("cube_p", values(torch.float16, 24).reshape(2, 3, 4).permute(2, 0, 1))
        self.register_buffer("scratch", values(torch.float64, 4), persistent=False)
        self.l1 = nn.Linear(2, 2)
        self.l2 = nn.Linear(2, 2)
        self.l2.weight = self.l1.weight
        table = values(torch.float32, 6)
        self.table = table
        self.window = table[2:5]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.l2(self.l1(x)) + self.scratch[:2].float() + self.window[:2] + self.table[:2]
        return y + self.base[:2] + self.tail[:2]


class Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def _edit(config: dict, name: str, key: str, value: Any) -> None:
    config[name]["tensor_meta"][key] = value


def _huge(meta: dict) -> None:
    meta["sizes"] = [{"as_int": 2 ** 62}, {"as_int": 2 ** 62}]
    meta["strides"] = [{"as_int": 1}, {"as_int": 1}]


# Malformed archives: a saved `Small` with one change to its weights config
# or to a storage file, so that torch.export.load refuses it (the golden is
# its exception): a storage offset past the storage's end, a negative
# stride, a shape whose storage size overflows, sizes and strides of
# different lengths, a storage file cut short and one cut to a partial
# element.
MALFORMED = {
    "weights-bad-offset": (lambda c: _edit(c, "fc.bias", "storage_offset", {"as_int": 5}), None),
    "weights-bad-stride": (lambda c: _edit(c, "fc.bias", "strides", [{"as_int": -1}]), None),
    "weights-bad-huge-shape": (lambda c: _huge(c["fc.bias"]["tensor_meta"]), None),
    "weights-bad-rank": (lambda c: _edit(c, "fc.bias", "sizes", [{"as_int": 2}, {"as_int": 4}]),
                         None),
    "weights-truncated": (None, lambda data: data[:8]),
    "weights-partial-element": (None, lambda data: data[:6]),
}


def write_malformed(name: str, path: str) -> None:
    """`Small` saved, then rewritten entry by entry (same names, dates and
    order, stored) with the change of MALFORMED[name] applied."""
    edit_config, edit_storage = MALFORMED[name]
    torch.manual_seed(0)
    ep = torch.export.export(Small(), (torch.ones(1, 2),))
    buffer = io.BytesIO()
    torch.export.save(ep, buffer)
    zin = zipfile.ZipFile(buffer)
    config_name = next(n for n in zin.namelist() if n.endswith("/data/weights/model_weights_config.json"))
    config = json.loads(zin.read(config_name))["config"]
    storage_name = config_name.rsplit("/", 1)[0] + "/" + config["fc.bias"]["path_name"]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == config_name and edit_config is not None:
                doc = json.loads(data)
                edit_config(doc["config"])
                data = json.dumps(doc).encode()
            if info.filename == storage_name and edit_storage is not None:
                data = edit_storage(data)
            out = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zout.writestr(out, data)


ENTRIES = {
    "weights-dtypes": lambda: (Dtypes(), (torch.ones(2, 2),)),
    "weights-complex-wide": lambda: (WideComplex(), (torch.ones(2, 2),)),
    "weights-shared-storage": lambda: (SharedStorage(), (torch.ones(2, 2),)),
}


def main(argv: list[str]) -> int:
    wanted = set(argv) or set(ENTRIES) | set(MALFORMED)
    unknown = wanted - set(ENTRIES) - set(MALFORMED)
    if unknown:
        print(f"weights_zoo.py: unknown program(s) {sorted(unknown)}", file=sys.stderr)
        return 2
    os.makedirs(OUT_DIR, exist_ok=True)
    for name in MALFORMED:
        if name in wanted:
            print(f"write {name}", file=sys.stderr)
            write_malformed(name, os.path.join(OUT_DIR, name + ".pt2"))
    for name, make in ENTRIES.items():
        if name not in wanted:
            continue
        torch.manual_seed(0)
        print(f"export {name}", file=sys.stderr)
        module, args = make()
        ep = torch.export.export(module, args)
        with warnings.catch_warnings():
            # "No complete tensor found in the group!": the slices' union.
            warnings.simplefilter("ignore")
            torch.export.save(ep, os.path.join(OUT_DIR, name + ".pt2"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
