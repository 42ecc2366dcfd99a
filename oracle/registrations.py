"""Write what importing oracle/zoo_types.py registers in a PyTorch process:
the custom operators and the pytree types that the zoo programs use and that
every process loading them (oracle/capture.py) has registered. The reference
reads it as the loading process's registrations (`--registrations FILE`,
`Registrations::from_json`): what a fresh `import torch` does not know.

Usage (from the repo root):
    .oracle/bin/python oracle/registrations.py > corpus/programs/registrations.json

Read from the live registries, before and after the import:
  - "ops": each new operator overload, by its serialized target
    (`torch.ops.NS.NAME.OVERLOAD`): its schema as `str(op._schema)` prints
    it and `torch._library.utils.is_impure(op)` (what `Node.is_impure`
    asks for an OpOverload, the purity dead-code elimination needs);
  - "pytree_types": each new `SUPPORTED_SERIALIZED_TYPES` entry, by its
    serialized type name: "namedtuple" (`_register_namedtuple`) or
    "dataclass" (`torch.export.register_dataclass`), the class's
    `__module__` and `__qualname__`, and its field names in order.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import torch
import torch.utils._pytree as pytree
from torch._library.utils import is_impure


def op_names() -> set[str]:
    return set(torch._C._dispatch_get_all_op_names())


def main() -> int:
    ops_before = op_names()
    types_before = set(pytree.SUPPORTED_SERIALIZED_TYPES)
    import zoo_types  # noqa: F401

    ops = {}
    for qualified in sorted(op_names() - ops_before):
        ns, rest = qualified.split("::", 1)
        name, _, overload = rest.partition(".")
        op = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
        target = f"torch.ops.{ns}.{name}.{overload or 'default'}"
        ops[target] = {"schema": str(op._schema), "impure": bool(is_impure(op))}

    types = {}
    for cls in pytree.SUPPORTED_SERIALIZED_TYPES:
        if cls in types_before:
            continue
        name = pytree.SUPPORTED_SERIALIZED_TYPES[cls].serialized_type_name
        if pytree.is_namedtuple_class(cls):
            kind, fields = "namedtuple", list(cls._fields)
        elif dataclasses.is_dataclass(cls):
            kind, fields = "dataclass", [f.name for f in dataclasses.fields(cls) if f.init]
        else:
            print(f"registrations.py: {cls!r} is neither a namedtuple nor a dataclass",
                  file=sys.stderr)
            return 1
        types[name] = {"kind": kind, "module": cls.__module__, "qualname": cls.__qualname__,
                       "fields": fields}

    out = {"torch_version": torch.__version__, "ops": ops,
           "pytree_types": dict(sorted(types.items()))}
    sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
