"""Writes tests/data/schema/cases.jsonl: small model.json documents, each a
twist on one valid program, with what PyTorch's reader does with it:
`_bytes_to_dataclass(ExportedProgram, ..)` then the schema version check of
`ExportedProgramDeserializer.deserialize` -- the exception it raises, or
`_to_json_bytes` of what it read. `path` is where the reference must point
(our own expectation; Python gives no path). Replayed by tests/it/schema.rs.
Run from the repository root:

    .oracle/bin/python oracle/make_schema_cases.py
"""

import copy
import json

from torch._export.serde import schema, serialize

NODE = "$.graph_module.graph.nodes[0]"
ARG0 = NODE + ".inputs[0].arg"
ARG1 = NODE + ".inputs[1].arg"


def base():
    meta = {
        "dtype": 7,
        "sizes": [{"as_expr": {"expr_str": "s0", "hint": {"as_int": 4}}}, {"as_int": 3}],
        "requires_grad": False,
        "device": {"type": "cpu", "index": None},
        "strides": [{"as_int": 3}, {"as_int": 1}],
        "storage_offset": {"as_int": 0},
        "layout": 7,
    }
    return {
        "graph_module": {
            "graph": {
                "inputs": [{"as_tensor": {"name": "x"}}],
                "outputs": [{"as_tensor": {"name": "y"}}],
                "nodes": [
                    {
                        "target": "torch.ops.aten.add.Tensor",
                        "inputs": [
                            {"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                            {"name": "alpha", "arg": {"as_float": 1.5}, "kind": 2},
                        ],
                        "outputs": [{"as_tensor": {"name": "y"}}],
                        "metadata": {"stack_trace": "x + x"},
                        "is_hop_single_tensor_return": None,
                        "name": "add",
                    }
                ],
                "tensor_values": {"x": meta, "y": copy.deepcopy(meta)},
                "sym_int_values": {"s0": {"as_expr": {"expr_str": "s0", "hint": None}}},
                "sym_bool_values": {},
                "is_single_tensor_return": False,
                "custom_obj_values": {},
                "sym_float_values": {},
            },
            "signature": {
                "input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}],
            },
            "module_call_graph": [{"fqn": "", "signature": None}],
            "metadata": {},
            "treespec_namedtuple_fields": {},
        },
        "opset_version": {"aten": 10},
        "range_constraints": {"s0": {"min_val": 2, "max_val": 128}},
        "schema_version": {"major": 8, "minor": 20},
        "verifiers": [],
        "torch_version": "2.15.0",
        "guards_code": [],
    }


def node(d):
    return d["graph_module"]["graph"]["nodes"][0]


def arg(d, i):
    return node(d)["inputs"][i]["arg"]


def setter(get, key, value):
    def f(d):
        get(d)[key] = value

    return f


def deleter(get, *keys):
    def f(d):
        for k in keys:
            del get(d)[k]

    return f


def inp(i):
    return lambda d: node(d)["inputs"][i]


def graph(d):
    return d["graph_module"]["graph"]


def top(d):
    return d


def meta_x(d):
    return graph(d)["tensor_values"]["x"]


# (name, path the reference reports, twist); path None: PyTorch reads it.
CASES = [
    ("valid", None, lambda d: None),
    ("missing_target", NODE, deleter(node, "target")),
    ("missing_two", NODE, deleter(node, "metadata", "target")),
    ("missing_three", "$.graph_module.graph", deleter(graph, "nodes", "inputs", "outputs")),
    ("missing_schema_version", "$", deleter(top, "schema_version")),
    ("missing_device_type", "$.graph_module.graph.tensor_values[\"x\"].device",
     lambda d: meta_x(d)["device"].pop("type")),
    ("union_two_keys", ARG0, setter(inp(0), "arg", {"as_tensor": {"name": "x"}, "as_int": 1})),
    ("union_zero_keys", ARG0, setter(inp(0), "arg", {})),
    ("union_list", ARG0, setter(inp(0), "arg", [1])),
    ("union_str", ARG0, setter(inp(0), "arg", "x")),
    ("union_null", ARG0, setter(inp(0), "arg", None)),
    ("union_unknown_tag", ARG0 + ".as_foo", setter(inp(0), "arg", {"as_foo": 1})),
    ("sym_int_two_keys", "$.graph_module.graph.tensor_values[\"x\"].sizes[1]",
     lambda d: meta_x(d)["sizes"].__setitem__(1, {"as_int": 3, "as_expr": {"expr_str": "s0"}})),
    ("float_bad_string", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": "abc"})),
    ("float_bad_string_quote", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": "it's"})),
    ("float_null", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": None})),
    ("float_huge_int", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": 10**400})),
    ("float_list", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": [1.5]})),
    ("float_dict", ARG1 + ".as_float", setter(inp(1), "arg", {"as_float": {}})),
    ("float_infinity_string", None, setter(inp(1), "arg", {"as_float": "Infinity"})),
    ("float_minus_infinity_string", None, setter(inp(1), "arg", {"as_float": "-Infinity"})),
    ("float_nan_string", None, setter(inp(1), "arg", {"as_float": "NaN"})),
    ("float_spelled_loosely", None, setter(inp(1), "arg", {"as_floats": [" 1_0.5 ", "-inf", "1e3"]})),
    ("float_from_int", None, setter(inp(1), "arg", {"as_floats": [2, -7, 12345678901234567890]})),
    ("float_from_bool", None, setter(inp(1), "arg", {"as_float": True})),
    ("complex", None, setter(inp(1), "arg", {"as_complex": {"real": 1, "imag": "-0.5"}})),
    ("version_major_7", "$.schema_version", setter(top, "schema_version", {"major": 7, "minor": 3})),
    ("version_major_9", "$.schema_version", setter(top, "schema_version", {"major": 9, "minor": 0})),
    ("version_major_0", "$.schema_version", setter(top, "schema_version", {"major": 0, "minor": 1})),
    ("version_zero", None, setter(top, "schema_version", {"major": 0, "minor": 0})),
    ("version_newer_minor", None, setter(top, "schema_version", {"major": 8, "minor": 21})),
    ("unknown_fields", None, lambda d: (node(d).update(future=1), d.update(extra={"a": [1]}))),
    ("defaults_taken", None, lambda d: [d.pop(k) for k in ("verifiers", "torch_version", "guards_code")]
     and [node(d).pop(k) for k in ("name", "is_hop_single_tensor_return")]
     and [graph(d).pop(k) for k in ("is_single_tensor_return", "custom_obj_values", "sym_float_values")]),
    ("unknown_enum_values", None,
     lambda d: (meta_x(d).update(dtype=99, layout=42), inp(0)(d).update(kind=5),
                inp(1)(d).update(arg={"as_scalar_type": 77}))),
    ("duplicate_keys_text", None, None),
    ("big_ints", None, lambda d: d["range_constraints"].update(
        s1={"min_val": -(10**30), "max_val": 10**30})),
    ("unicode", None, lambda d: node(d)["metadata"].update({"st\u00e9": "\u2603 \U0001f600"})),
    # Our refusals where PyTorch reads on with a wrongly typed value.
    ("wrong_type_target", NODE + ".target", setter(node, "target", 5)),
    ("wrong_type_bool_for_int", "$.range_constraints[\"s0\"].min_val",
     lambda d: d["range_constraints"]["s0"].update(min_val=True)),
    ("wrong_type_dict_for_list", NODE + ".outputs", setter(node, "outputs", {})),
    ("wrong_type_enum", "$.graph_module.graph.tensor_values[\"x\"].dtype",
     lambda d: meta_x(d).update(dtype="float32")),
    ("wrong_type_struct", "$.graph_module.signature", setter(lambda d: d["graph_module"], "signature", [])),
]


# Documents that fail before the walk: UTF-8 and JSON (no path).
RAW = [
    ("utf8_invalid_start", b"\xff{}"),
    ("utf8_invalid_continuation", b'{"a": "\xe9t\xe9"}'),
    ("utf8_truncated_two", b'{"a": "\xe2\x82'),
    ("utf8_truncated_one", b'{"a": \xe2'),
    ("utf8_surrogate", b'"\xed\xa0\x80"'),
    ("utf8_overlong", b"\xc0\xaf"),
    ("utf8_above_max", b"\xf4\x90\x80\x80"),
    ("json_truncated", b'{"graph_module": '),
    ("json_not_an_object", b"[1, 2]", "$"),
    ("json_int_too_long", b'{"x": ' + b"9" * 4301 + b"}"),
]


def run(data):
    try:
        ep = serialize._bytes_to_dataclass(schema.ExportedProgram, data)
        try:
            serialize.ExportedProgramDeserializer().deserialize(ep, {}, {})
        except serialize.SerializeError as e:
            if str(e).startswith("Serialized schema version"):
                raise
        except Exception:
            pass  # past the version check: not the JSON layer's business
        return {"dump": serialize._to_json_bytes(ep).decode("utf-8")}
    except Exception as e:
        msg = str(e) if not isinstance(e, KeyError) else repr(e.args[0])
        return {"error": f"{type(e).__name__}: {msg}"}


def main():
    with open("tests/data/schema/cases.jsonl", "w") as f:
        for name, path, twist in CASES:
            if twist is None:
                text = json.dumps(base())
                text = text.replace('"name": "add"}', '"name": "first", "name": "add"}')
            else:
                d = base()
                twist(d)
                text = json.dumps(d)
            line = {"name": name, "input": text, **run(text.encode("utf-8"))}
            if path is not None:
                line["path"] = path
            f.write(json.dumps(line) + "\n")
            print(name, line.get("error", "ok"))
        for name, data, *path in RAW:
            line = {"name": name, "input_hex": data.hex(), **run(data)}
            if path:
                line["path"] = path[0]
            f.write(json.dumps(line) + "\n")
            print(name, line.get("error", "ok"))


if __name__ == "__main__":
    main()
