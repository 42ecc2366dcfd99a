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
