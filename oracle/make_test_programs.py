"""Writes tests/data/programs/<name>.json: the models/model.json of a few
tiny programs exported and saved by real PyTorch (the inputs of the schema
round-trip test). Run from the repository root:

    .oracle/bin/python oracle/make_test_programs.py
"""

import io
import os
import zipfile

import torch
from torch.export import Dim

OUT = "tests/data/programs"


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("cnt", torch.zeros(3))

    def forward(self, x):
        self.cnt.add_(1)
        a, b = torch.split(x, 2, dim=1)
        return self.lin(x) + self.cnt, a.sum()


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))


class Scalars(torch.nn.Module):
    def forward(self, x, n: int):
        y = torch.clamp(x, min=-0.5, max=float("inf")) * 1e-05
        z = torch.full((2, 2), 1e16, dtype=torch.float64)
        return y + x.shape[0] * 2.5, z, torch.nn.functional.pad(x, [1, 1]), n + 1


class Dyn(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, y], dim=0).reshape(-1), x.shape[0] + y.shape[0]


class Unicode(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b\u00e9ta", torch.ones(2))

    def forward(self, x):
        return x + getattr(self, "b\u00e9ta")


def programs():
    x = torch.randn(5, 4)
    batch = Dim("batch", min=2, max=128)
    yield "linear", torch.export.export(Linear(), (x,), dynamic_shapes={"x": {0: batch}})
    yield "cond", torch.export.export(Cond(), (torch.randn(3),))
    yield "scalars", torch.export.export(Scalars(), (torch.randn(3, 2), 3))
    yield "dyn", torch.export.export(
        Dyn(),
        (torch.randn(4, 2), torch.randn(3, 2)),
        dynamic_shapes={"x": {0: Dim("a", max=64)}, "y": {0: Dim("b", max=64)}},
    )
    yield "unicode", torch.export.export(Unicode(), (torch.randn(2),))


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, ep in programs():
        buf = io.BytesIO()
        torch.export.save(ep, buf)
        with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
            (model,) = [n for n in z.namelist() if n.endswith("/models/model.json")]
            data = z.read(model)
        with open(os.path.join(OUT, name + ".json"), "wb") as f:
            f.write(data)
        print(name, len(data))


if __name__ == "__main__":
    main()
