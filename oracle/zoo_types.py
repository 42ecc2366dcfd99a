"""Pytree types that zoo programs take as inputs, registered for serialization.

A program whose inputs are a namedtuple or a dataclass can only be saved
and loaded when the type is registered with a ``serialized_type_name``
(``torch.utils._pytree._register_namedtuple``,
``torch.export.register_dataclass``), in the process that saves *and* in the
one that loads, as for any user of such a program. ``oracle/zoo.py`` and
``oracle/capture.py`` both import this module; the names below are what the
archives' ``in_spec`` records (``torchspec.zoo.Point``, ``torchspec.zoo.Pair``).
"""

from __future__ import annotations

import collections
import dataclasses

import torch
import torch.utils._pytree as pytree

Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Pair:
    first: torch.Tensor
    scale: int


pytree._register_namedtuple(Point, serialized_type_name="torchspec.zoo.Point")
torch.export.register_dataclass(Pair, serialized_type_name="torchspec.zoo.Pair")
# The archive's sample inputs are pickled; torch.load's weights_only
# unpickler accepts these classes only when allow-listed.
torch.serialization.add_safe_globals([Point, Pair])


# A user-defined op and a mutating one, as a library would define them
# (torch.library.custom_op): programs using them load only where this
# module has run, like the pytree types above.
@torch.library.custom_op("torchspec::scale", mutates_args=())
def scale(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s


@scale.register_fake
def _(x: torch.Tensor, s: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("torchspec::add_into", mutates_args=("out",))
def add_into(out: torch.Tensor, x: torch.Tensor) -> None:
    out.add_(x)
