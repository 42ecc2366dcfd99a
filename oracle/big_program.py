"""Write a program of many nodes for the memory and load-time benchmarks:
a chain of small blocks (a Linear, an elementwise op, a residual add) over
a dynamic batch, exported and saved with torch.export.save. Each block is
about 4 FX nodes; the default 13,000 blocks are more than 50,000 nodes.

Usage: .oracle/bin/python oracle/big_program.py OUT.pt2 [--blocks 10500]
The file goes under target/ and is never committed.
"""
import argparse
import sys

import torch
from torch import nn
from torch.export import Dim


class Chain(nn.Module):
    def __init__(self, blocks: int, width: int = 4, distinct: int = 16) -> None:
        super().__init__()
        self.blocks = blocks
        # A few distinct layers reused, so the weights stay small.
        self.lins = nn.ModuleList(nn.Linear(width, width) for _ in range(distinct))

    def forward(self, x):
        for i in range(self.blocks):
            h = self.lins[i % len(self.lins)](x)
            x = x + torch.tanh(h) * 0.5
        return x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=13000)
    a = ap.parse_args()
    sys.setrecursionlimit(100000)
    torch.manual_seed(0)
    ep = torch.export.export(
        Chain(a.blocks), (torch.zeros(3, 4),), dynamic_shapes=({0: Dim("batch", max=1024)},)
    )
    torch.export.save(ep, a.out)
    print(f"{a.out}: {len(ep.graph.nodes)} FX nodes")


if __name__ == "__main__":
    main()
