"""Write a large .pt2 for the archive benchmarks: N nn.Linear(W, W) layers,
exported and saved with torch.export.save (weights stored, not compressed).

Usage: .oracle/bin/python oracle/big_archive.py OUT.pt2 [--layers 8] [--width 4096]
(8 x 4096 x 4096 float32 is 537 MB; --layers 60 is about 4 GB). The file goes
under target/ and is never committed.
"""
import argparse

import torch
from torch import nn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--width", type=int, default=4096)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(a.width, a.width) for _ in range(a.layers)])
    ep = torch.export.export(model, (torch.zeros(2, a.width),))
    torch.export.save(ep, a.out)


if __name__ == "__main__":
    main()
