"""Write crates/export/src/ops/table.rs: every operator overload the loading process
of PyTorch 2.15.0 resolves (`torch._C._dispatch_get_all_op_names()` plus the
TorchScript-only operators of `torch._C._jit_get_all_schemas()`, each kept
only if `torch.ops.NS.OP.OVERLOAD` resolves) with its schema `str(op._schema)`,
the higher-order operators (`torch._ops._higher_order_ops`), and the
attributes `GraphModuleDeserializer.deserialize_operator`'s `getattr` walk
meets on the way that are not operators (`dir()` of `torch.ops`, of an op
namespace, of an `OpOverloadPacket` and of the `torch.ops.higher_order`
namespace, of an `OpOverload`; `dir(operator)` and `dir(math)` with the type of each attribute
that is not callable).

The registry is read as `torch.export.load` sees it: after `import torch`
and the imports `torch.export.load` does (`torch.export.pt2_archive._package`,
`torch._export.serde.serialize`).

Usage: .oracle/bin/python oracle/gen_op_schemas.py > crates/export/src/ops/table.rs
"""
import ast
import inspect
import math
import operator
import re
import sys

import torch
import torch._export.serde.serialize  # noqa: F401  (what torch.export.load imports)
import torch.export.pt2_archive._package  # noqa: F401


def rust_str(s: str) -> str:
    """A Rust string literal of printable ASCII `s`."""
    if not all(" " <= c <= "~" for c in s):
        raise SystemExit(f"not printable ASCII: {s!r}")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def qualified_names() -> set[str]:
    """`NS::OP` or `NS::OP.OVERLOAD` of every dispatcher and JIT operator."""
    names = set(torch._C._dispatch_get_all_op_names())
    for s in torch._C._jit_get_all_schemas():
        names.add(f"{s.name}.{s.overload_name}" if s.overload_name else s.name)
    return names


def resolve(qualified: str):
    """(serialized target, overload) if torch.ops resolves it, else None."""
    ns, rest = qualified.split("::", 1)
    op_name, _, overload = rest.partition(".")
    key = overload or "default"
    try:
        op = getattr(getattr(getattr(torch.ops, ns), op_name), key)
    except (AttributeError, RuntimeError):
        return None
    if not isinstance(op, torch._ops.OpOverload):
        return None
    return f"torch.ops.{ns}.{op_name}.{key}", op


ops = {}
unresolved = []
for q in sorted(qualified_names()):
    found = resolve(q)
    if found is None:
        unresolved.append(q)
        continue
    target, op = found
    ops[target] = str(op._schema)

namespaces = {t.split(".")[2] for t in ops}
def names_of(x) -> set[str]:
    """Every attribute name `getattr(x, name)` finds without `__getattr__`
    (`dir()` of a module object lists only its `__dict__`)."""
    return set(dir(x)) | set(dir(type(x)))


ops_attrs = sorted(
    n for n in names_of(torch.ops)
    if not isinstance(getattr(torch.ops, n, None), torch._ops._OpNamespace)
    and n not in namespaces
)
namespace_attrs = sorted(names_of(torch._ops._OpNamespace("torchspec_probe_namespace")))
sample = torch.ops.aten.add
packet_attrs = sorted(
    (names_of(sample) | names_of(sample._op)) - set(sample.overloads()) - {"default"}
)
overload_attrs = sorted(names_of(torch.ops.aten.add.Tensor))
hops = sorted(torch._ops._higher_order_ops)
hop_attrs = sorted(names_of(torch.ops.higher_order) - set(hops))


def module_attrs(module):
    """(name, None if callable else str(type(value)))."""
    out = []
    for n in sorted(dir(module)):
        v = getattr(module, n)
        out.append((n, None if callable(v) else str(type(v))))
    return out


def write_list(out, doc: str, name: str, items) -> None:
    out.write(doc)
    out.write(f"pub(crate) static {name}: &[&str] = &[\n")
    for n in items:
        out.write(f"    {rust_str(n)},\n")
    out.write("];\n\n")


def write_module(out, doc: str, name: str, attrs) -> None:
    out.write(doc)
    out.write(f"pub(crate) static {name}: &[(&str, Option<&str>)] = &[\n")
    for n, ty in attrs:
        ty_text = "None" if ty is None else f"Some({rust_str(ty)})"
        out.write(f"    ({rust_str(n)}, {ty_text}),\n")
    out.write("];\n")


def allowed_torch_functions():
    """The `_allowed_torch_functions` tuple of `Verifier._check_valid_op`
    (torch/_export/verifier.py), read from its source and evaluated: each
    function's serialized target (`serialize_operator`, which
    `deserialize_operator` walks back to the same object), its repr with
    the address written `0x<address>`, and whether `Node.is_impure`
    (`torch._library.utils.is_impure`) calls it impure, in the tuple's order."""
    import torch._export.verifier as verifier
    from torch._export.serde.serialize import GraphModuleSerializer
    from torch._library.utils import is_impure

    tree = ast.parse(inspect.getsource(verifier))
    found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
             and any(getattr(t, "id", None) == "_allowed_torch_functions" for t in n.targets)]
    if len(found) != 1 or not isinstance(found[0], ast.Tuple):
        raise SystemExit("verifier.py: no single `_allowed_torch_functions` tuple")
    serializer = GraphModuleSerializer.__new__(GraphModuleSerializer)
    rows = []
    for element in found[0].elts:
        fn = eval(compile(ast.Expression(element), "verifier.py", "eval"), {"torch": torch})
        rows.append((serializer.serialize_operator(fn),
                     re.sub(r" at 0x[0-9a-f]+>", " at 0x<address>>", repr(fn)),
                     is_impure(fn)))
    return rows


for q in unresolved:
    print(f"left out (torch.ops does not resolve it): {q}", file=sys.stderr)

out = sys.stdout
out.write("//! Generated by oracle/gen_op_schemas.py from the operator registry of\n")
out.write(f"//! torch {torch.__version__} as `torch.export.load` sees it; do not edit.\n")
out.write(f"//! {len(ops)} overloads in {len(namespaces)} namespaces, {len(hops)} higher-order operators\n")
out.write(f"//! (left out, as `torch.ops` does not resolve them: {', '.join(unresolved) or 'none'}).\n\n")
out.write("/// Sorted `(serialized target, str(op._schema))` of every overload\n")
out.write("/// (`torch.ops.aten.add.Tensor`; the overload `\"\"` is `default`).\n")
out.write("pub(crate) static OPS: &[(&str, &str)] = &[\n")
for t in sorted(ops):
    out.write(f"    ({rust_str(t)}, {rust_str(ops[t])}),\n")
out.write("];\n\n")
write_list(out, "/// Sorted `torch._ops._higher_order_ops` names (`torch.ops.higher_order.NAME`).\n",
           "HIGHER_ORDER_OPS", hops)
write_list(out, "/// Sorted attributes of `torch.ops` that are not op namespaces.\n",
           "OPS_ATTRS", ops_attrs)
write_list(out, "/// Sorted attributes of a fresh op namespace (`torch.ops.NS`) that are not operators.\n",
           "NAMESPACE_ATTRS", namespace_attrs)
write_list(out, "/// Sorted attributes of an `OpOverloadPacket` (and of the builtin it wraps) that are not overloads.\n",
           "PACKET_ATTRS", packet_attrs)
write_list(out, "/// Sorted attributes of an `OpOverload` (`torch.ops.aten.add.Tensor`; it has no `__getattr__`).\n",
           "OVERLOAD_ATTRS", overload_attrs)
write_list(out, "/// Sorted attributes of `torch.ops.higher_order` that are not higher-order operators.\n",
           "HIGHER_ORDER_ATTRS", hop_attrs)
write_module(out, "/// Sorted `dir(operator)`: `None` for a callable, else `str(type(value))`.\n",
             "OPERATOR_ATTRS", module_attrs(operator))
out.write("\n")
write_module(out, "/// Sorted `dir(math)`: `None` for a callable, else `str(type(value))`.\n",
             "MATH_ATTRS", module_attrs(math))

out.write("\n")
out.write("/// `Verifier._check_valid_op`'s `_allowed_torch_functions`, in its order:\n")
out.write("/// `(serialized target, repr, Node.is_impure)`, the address written `0x<address>`.\n")
out.write("pub(crate) static ALLOWED_TORCH_FUNCTIONS: &[(&str, &str, bool)] = &[\n")
for t, r, impure in allowed_torch_functions():
    out.write(f"    ({rust_str(t)}, {rust_str(r)}, {str(impure).lower()}),\n")
out.write("];\n")


def allowed_modules(rows):
    """The module of each allowed function (`torch._functorch.predispatch`),
    when it has no module `__getattr__` (so `hasattr` is `name in dir()`):
    sorted `(module path, sorted dir(module))`."""
    import importlib
    found = {}
    for target, _, _ in rows:
        path = target.rsplit(".", 1)[0]
        module = importlib.import_module(path)
        if not hasattr(module, "__getattr__"):
            found[path] = sorted(dir(module))
    return sorted(found.items())


out.write("\n")
out.write("/// The modules of `ALLOWED_TORCH_FUNCTIONS` that have no module `__getattr__`,\n")
out.write("/// with their sorted `dir()`: `deserialize_operator`'s `hasattr` walk through one\n")
out.write("/// of them stops (and returns the target str) at a name not listed.\n")
out.write("pub(crate) static ALLOWED_MODULE_ATTRS: &[(&str, &[&str])] = &[\n")
for path, names in allowed_modules(allowed_torch_functions()):
    out.write(f"    ({rust_str(path)}, &[\n")
    for n in names:
        out.write(f"        {rust_str(n)},\n")
    out.write("    ]),\n")
out.write("];\n")
