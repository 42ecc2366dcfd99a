"""What a zoo entry is: a name, how to build its ``Export``, and ``T``.

The shared vocabulary of ``oracle/zoo.py`` (the hand-written entries, and the
export and save of every entry), ``oracle/zoo_nn.py`` (the torch.nn entries)
and ``oracle/plans.py`` (generated plans built into an ``Export``). A leaf:
it imports none of them, so none of them imports another to reach it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import torch
import torch.nn as nn


@dataclasses.dataclass
class Entry:
    name: str
    make: Callable[[], "Export"]


@dataclasses.dataclass
class Export:
    """What to export, and how."""
    module: nn.Module
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    dynamic_shapes: Any = None
    strict: bool = False
    decompose: bool = False          # ep.run_decompositions() after export
    preserve: tuple = ()             # preserve_module_call_signature
    probes: list = dataclasses.field(default_factory=list)  # extra (kind, args, kwargs)
    keep_debug_meta: bool = True        # stack_trace, from_node, torch_fn
    edit: Callable[[Any], None] | None = None   # graph surgery on the final program
    save: Callable[[Any, str], None] | None = None  # another writer than torch.export.save


def T(*shape: int, dtype: torch.dtype = torch.float32, fill: str = "arange") -> torch.Tensor:
    """A deterministic example tensor: arange/4 (exact in every float dtype), or zeros."""
    n = 1
    for d in shape:
        n *= d
    if fill == "zeros":
        return torch.zeros(shape, dtype=dtype)
    base = torch.arange(n, dtype=torch.float32).reshape(shape)
    if dtype.is_floating_point or dtype.is_complex:
        return (base / 4).to(dtype)
    if dtype == torch.bool:
        return (base.to(torch.int64) % 2 == 1)
    return base.to(dtype)
