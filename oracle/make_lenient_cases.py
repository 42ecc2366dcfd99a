"""Writes tests/data/lenient/cases.jsonl: zoo programs with one small edit
to models/model.json, and what torch.export.load (torch 2.15.0) does with
each (issue 20: what `_dict_to_dataclass` reads on with, and how the
deserializer parses `expr_str`). Replayed by tests/it/lenient.rs.

Each line: {"name", "program", "edits": [[old, new], ...] (each replaced
once, in order), "loose": true when the edit is a wrongly typed value that
PyTorch keeps (strict mode must refuse it), "pytorch": {"outcome": "ok"} or
{"outcome": "error", "type", "message"}}: the innermost exception, as
oracle/mutant_outcomes.py records it ("original": load() logs the real
error and raises a generic RuntimeError; the end of its __cause__ chain).

The torch and Python versions go to tests/data/lenient/METADATA.json.
Run from the repository root:

    .oracle/bin/python oracle/make_lenient_cases.py
"""

import io
import json
import logging
import os
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from mutant_outcomes import GENERIC, exc_json, original_of  # noqa: E402

S77 = "\"expr_str\": \"Symbol('s77', positive=True, integer=True)\", \"hint\": {\"as_int\": 5}"


def expr(text, hint=5):
    h = "null" if hint is None else '{"as_int": %d}' % hint
    return [[S77, '"expr_str": %s, "hint": %s' % (json.dumps(text), h)]]


# (name, program, edits, loose)
CASES = [
    # _dict_to_dataclass keeps these as they are; the loader reads on.
    ("schema_minor_float", "mlp-dynamic", [['"minor": 20}', '"minor": 20.0}']], True),
    ("schema_major_float", "mlp-dynamic", [['"major": 8,', '"major": 8.0,']], True),
    ("schema_major_true_minor_false", "mlp-dynamic",
     [['"major": 8, "minor": 20', '"major": false, "minor": false']], True),
    ("guards_code_null", "mlp-dynamic", [['"guards_code": []', '"guards_code": null']], True),
    ("guards_code_ints", "mlp-dynamic", [['"guards_code": []', '"guards_code": [1, 2, 3]']], True),
    ("guards_code_string", "mlp-dynamic", [['"guards_code": []', '"guards_code": "x > 2"']], True),
    ("torch_version_int", "mlp-dynamic", [['"torch_version": "2.15.0+cu132"', '"torch_version": 215']], True),
    ("opset_version_string", "mlp-dynamic", [['"opset_version": {"aten": 10}', '"opset_version": {"aten": "10"}']], True),
    ("range_max_infinity", "mlp-dynamic", [['"max_val": 64}', '"max_val": Infinity}']], True),
    ("range_max_float", "mlp-dynamic", [['"max_val": 64}', '"max_val": 64.5}']], True),
    ("range_min_string", "mlp-dynamic", [['"min_val": 2,', '"min_val": " 2",']], True),
    ("range_min_bool", "mlp-dynamic", [['"min_val": 2,', '"min_val": true,']], True),
    ("layout_null", "mlp-dynamic", [['"layout": 7', '"layout": null']], True),
    # torch.empty_strided(requires_grad=None) is False; any other non-bool a TypeError.
    ("requires_grad_null", "mlp-dynamic", [['"requires_grad": false', '"requires_grad": null']], True),
    ("requires_grad_null_true", "mlp-dynamic", [['"requires_grad": true', '"requires_grad": null']], True),
    ("requires_grad_int", "mlp-dynamic", [['"requires_grad": false', '"requires_grad": 0']], True),
    ("requires_grad_string", "mlp-dynamic", [['"requires_grad": true', '"requires_grad": "yes"']], True),
    ("layout_string", "mlp-dynamic", [['"layout": 7', '"layout": "strided"']], True),
    ("dtype_float", "mlp-dynamic", [['"dtype": 7', '"dtype": 7.0']], True),
    ("kind_string", "mlp-dynamic", [['"kind": 1', '"kind": "POSITIONAL"']], True),
    ("kind_float", "mlp-dynamic", [['"kind": 1', '"kind": 1.0']], True),
    ("kind_huge", "mlp-dynamic", [['"kind": 1', '"kind": 18446744073709551616']], True),
    ("stack_trace_int", "mlp-dynamic", [['"stack_trace": "File', '"stack_trace": 5, "x": "File']], True),
    ("hop_single_string", "mlp-dynamic",
     [['"is_hop_single_tensor_return": null', '"is_hop_single_tensor_return": "yes"']], True),
    ("single_tensor_return_int", "mlp-dynamic",
     [['"is_single_tensor_return": false', '"is_single_tensor_return": 0']], True),
    # Argument payloads: `deserialize_input` returns them as they came.
    ("arg_int_float", "mlp-dynamic", [['"arg": {"as_int": 0}', '"arg": {"as_int": 0.0}']], True),
    ("arg_int_half", "multi-output", [['"arg": {"as_int": 3}', '"arg": {"as_int": 3.5}']], True),
    ("arg_int_string", "mlp-dynamic", [['"arg": {"as_int": 3}', '"arg": {"as_int": "3"}']], True),
    ("arg_int_null", "attention", [['"arg": {"as_int": 4}', '"arg": {"as_int": null}']], True),
    ("arg_bool_string", "no-inputs", [['"arg": {"as_bool": false}', '"arg": {"as_bool": "false"}']], True),
    ("arg_bool_int", "no-inputs", [['"arg": {"as_bool": false}', '"arg": {"as_bool": 0}']], True),
    ("arg_none_string", "attention", [['"arg": {"as_none": true}', '"arg": {"as_none": "true"}']], True),
    ("arg_ints_floats", "multi-output", [['"arg": {"as_ints": [2, 4]}', '"arg": {"as_ints": [2.0, 4.0]}']], True),
    ("arg_memory_format_float", "core-aten",
     [['"arg": {"as_memory_format": 4}', '"arg": {"as_memory_format": 4.0}']], True),
    ("arg_scalar_type_float", "dtypes", [['"arg": {"as_scalar_type": 7}', '"arg": {"as_scalar_type": 7.0}']], True),
    ("arg_scalar_type_true", "dtypes", [['"arg": {"as_scalar_type": 7}', '"arg": {"as_scalar_type": true}']], True),
    ("arg_layout_float", "dtypes", [['"arg": {"as_layout": 7}', '"arg": {"as_layout": 7.0}']], True),
    # ... and refuses where Python then trips on the value.
    ("arg_ints_string", "multi-output", [['"arg": {"as_ints": [2, 4]}', '"arg": {"as_ints": "2, 4"}']], False),
    ("arg_ints_nested", "multi-output", [['"arg": {"as_ints": [2, 4]}', '"arg": {"as_ints": [[2], 4]}']], False),
    ("arg_int_object", "mlp-dynamic", [['"arg": {"as_int": 0}', '"arg": {"as_int": {"x": 0}}']], False),
    ("arg_memory_format_half", "core-aten",
     [['"arg": {"as_memory_format": 4}', '"arg": {"as_memory_format": 4.5}']], False),
    ("arg_scalar_type_string", "dtypes", [['"arg": {"as_scalar_type": 7}', '"arg": {"as_scalar_type": "7"}']], False),
    ("arg_scalar_type_list", "dtypes", [['"arg": {"as_scalar_type": 7}', '"arg": {"as_scalar_type": [7]}']], False),
    ("arg_layout_null", "dtypes", [['"arg": {"as_layout": 7}', '"arg": {"as_layout": null}']], False),
    ("schema_major_string", "mlp-dynamic", [['"major": 8,', '"major": "8",']], False),
    ("dtype_unknown_float", "mlp-dynamic", [['"dtype": 7', '"dtype": 7.5']], False),
    ("dtype_string", "mlp-dynamic", [['"dtype": 7', '"dtype": "float32"']], False),
    ("range_min_bad_string", "mlp-dynamic", [['"min_val": 2,', '"min_val": "2 $",']], False),
    ("range_min_nan", "mlp-dynamic", [['"min_val": 2,', '"min_val": NaN,']], False),
    ("range_min_empty_list", "mlp-dynamic", [['"min_val": 2,', '"min_val": [],']], False),
    ("range_min_infinity", "mlp-dynamic", [['"min_val": 2,', '"min_val": Infinity,']], False),
    ("metadata_null", "mlp-dynamic", [['"metadata": {', '"metadata": null, "x": {']], False),
    ("nn_module_stack_int", "mlp-dynamic", [['"metadata": {', '"metadata": {"nn_module_stack": 3, ']], False),
    ("custom_int", "mlp-dynamic", [['"metadata": {', '"metadata": {"custom": 3, ']], False),
    # expr_str through sympy.sympify.
    ("expr_trailing_plus", "mlp-dynamic", expr("s77 +"), False),
    ("expr_double_op", "mlp-dynamic", expr("s77 +* 1"), False),
    ("expr_semicolon", "mlp-dynamic", expr("s77;1"), False),
    ("expr_dollar", "mlp-dynamic", expr("s77 $ 1"), False),
    ("expr_empty", "mlp-dynamic", expr(""), False),
    ("expr_blank", "mlp-dynamic", expr(" "), False),
    ("expr_open_paren", "mlp-dynamic", expr("Max("), False),
    ("expr_unclosed_symbol", "mlp-dynamic", expr("Symbol('s77', positive=True, integer=True"), False),
    ("expr_true", "mlp-dynamic", expr("True"), False),
    ("expr_oo", "mlp-dynamic", expr("oo"), False),
    ("expr_nan", "mlp-dynamic", expr("nan"), False),
    ("expr_one_over_zero", "mlp-dynamic", expr("1/0"), False),
    ("expr_int_against_hint", "mlp-dynamic", expr("2"), False),
    ("expr_int_equal_hint", "mlp-dynamic", expr("5"), False),
    ("expr_newline_plus", "mlp-dynamic", expr("s0\n+1"), False),
    ("expr_unknown_name", "mlp-dynamic", expr("unknown_sym + 1"), False),
    ("expr_bare_unknown_name", "mlp-dynamic", expr("zz9"), False),
    ("expr_positive_plus_one", "mlp-dynamic", expr("Symbol('s99', positive=True, integer=True) + 1"), False),
    ("expr_positive_bare_hinted", "mlp-dynamic", expr("Symbol('s99', positive=True, integer=True)\n"), False),
    ("expr_positive_bare_unhinted", "mlp-dynamic", expr("Symbol('s99', positive=True, integer=True)", None), False),
    ("expr_known_name_newline", "mlp-dynamic", expr("s77\n"), False),
    ("expr_symbol_of_name", "mlp-dynamic", expr("Symbol(s99)"), False),
    ("expr_integer_of_string", "mlp-dynamic", expr("Integer('x')"), False),
    # Fields of a tensor's metadata (deserialize_tensor_meta) and of the
    # graph module (deserialize_graph_module), kept as they came.
    ("storage_offset_float", "mlp-dynamic",
     [['"storage_offset": {"as_int": 0}', '"storage_offset": {"as_int": 0.5}']], True),
    ("storage_offset_null", "mlp-dynamic",
     [['"storage_offset": {"as_int": 0}', '"storage_offset": {"as_int": null}']], True),
    ("stride_float", "mlp-dynamic",
     [['"strides": [{"as_int": 4}, {"as_int": 1}]', '"strides": [{"as_int": 4}, {"as_int": 1.0}]']], True),
    ("strides_empty_string", "mlp-dynamic",
     [['"strides": [{"as_int": 4}, {"as_int": 1}]', '"strides": ""']], True),
    ("strides_null", "mlp-dynamic",
     [['"strides": [{"as_int": 4}, {"as_int": 1}]', '"strides": null']], True),
    ("sizes_string", "mlp-dynamic", [['"sizes": [{"as_int": 3}]', '"sizes": "ab"']], True),
    ("hint_float", "mlp-dynamic", [['"hint": {"as_int": 5}', '"hint": {"as_int": 5.0}']], True),
    ("hint_true", "mlp-dynamic", [['"hint": {"as_int": 5}', '"hint": {"as_int": true}']], True),
    ("hint_as_bool_int", "mlp-dynamic", [['"hint": {"as_int": 5}', '"hint": {"as_bool": 5}']], True),
    ("device_type_null", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": null, "index": null}']], True),
    ("device_type_int_with_index", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": 3, "index": 0}']], True),
    ("device_index_bool", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": "cpu", "index": true}']], True),
    ("device_index_negative", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": "cpu", "index": -1}']], False),
    ("device_type_unknown", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": "tpu", "index": null}']], False),
    ("device_type_with_index", "mlp-dynamic",
     [['"device": {"type": "cpu", "index": null}', '"device": {"type": "cpu:0", "index": null}']], False),
    ("gm_metadata_null", "mlp-dynamic", [['"metadata": {}, "treespec', '"metadata": null, "treespec']], True),
    ("gm_metadata_custom_int", "mlp-dynamic",
     [['"metadata": {}, "treespec', '"metadata": {"custom": 3}, "treespec']], True),
    ("gm_treespec_fields_list", "mlp-dynamic",
     [['"treespec_namedtuple_fields": {}', '"treespec_namedtuple_fields": []']], True),
    # The ShapeEnv's runtime asserts and size checks on unbacked symbols
    # whose range constraint is gone, and a `lambda` sympify turns into a
    # `Lambda`.
    ("rc_unbacked_item_deleted", "unbacked-item",
     [['"range_constraints": {"u0": {"min_val"', '"range_constraints": {"u_gone": {"min_val"']], False),
    ("rc_unbacked_nonzero_empty", "unbacked-nonzero",
     [['"range_constraints": {', '"range_constraints": {"zz": {"min_val": 0, "max_val": 1}}, "zz_rc": {']], False),
    ("rc_runtime_asserts_backed_deleted", "runtime-asserts",
     [['"s77": {"min_val": 2, "max_val": null}, "s86"', '"s77_gone": {"min_val": 2, "max_val": null}, "s86"']], False),
    ("expr_lambda", "mlp-dynamic", expr("lambda: 1"), False),
    ("expr_lambda_unhinted", "mlp-dynamic", expr("lambda: 1", None), False),
    ("expr_lambda_params", "mlp-dynamic", expr("lambda x: x"), False),
    # List and dict fields of a graph and a node, kept as they came
    # (a later duplicate key wins in json.loads).
    ("graph_nodes_null", "mlp-dynamic", [['"tensor_values": {', '"nodes": null, "tensor_values": {']], True),
    ("graph_nodes_string", "mlp-dynamic", [['"tensor_values": {', '"nodes": "ab", "tensor_values": {']], True),
    ("graph_outputs_int", "mlp-dynamic", [['"tensor_values": {', '"outputs": 3, "tensor_values": {']], True),
    ("graph_sym_bool_values_list", "mlp-dynamic", [['"sym_bool_values": {}', '"sym_bool_values": []']], True),
    ("node_inputs_null", "mlp-dynamic",
     [['"target": "torch.ops.aten.linear.default", "inputs": [', '"target": "torch.ops.aten.linear.default", "inputs": null, "x": [']], True),
    ("node_inputs_empty_string", "mlp-dynamic",
     [['"target": "torch.ops.aten.linear.default", "inputs": [', '"target": "torch.ops.aten.linear.default", "inputs": "", "x": [']], True),
    ("node_outputs_int", "mlp-dynamic",
     [['"outputs": [{"as_sym_int": {"as_name": "sym_size_int_1"}}]', '"outputs": 7']], True),
    # An unbacked symbol no node binds (deserialize_graph's last check).
    ("stride_unbound_unbacked", "mlp-dynamic",
     [['"strides": [{"as_int": 4}, {"as_int": 1}]',
       '"strides": [{"as_expr": {"expr_str": "s77 + u99", "hint": {"as_int": 4}}}, {"as_int": 1}]']], False),
    ("stride_bound_unbacked", "mlp-dynamic",
     [['"strides": [{"as_int": 4}, {"as_int": 1}]',
       '"strides": [{"as_expr": {"expr_str": "2*u5", "hint": {"as_int": 4}}}, {"as_int": 1}]']], False),
    # List and dict fields of the signature, the module call graph and the
    # program, kept as they came.
    ("input_specs_int", "mlp-dynamic", [['"input_specs": [', '"input_specs": 3, "x": [']], True),
    ("input_specs_string", "mlp-dynamic", [['"input_specs": [', '"input_specs": "ab", "x": [']], True),
    ("output_specs_null", "mlp-dynamic", [['"output_specs": [', '"output_specs": null, "x": [']], True),
    ("output_specs_empty_string", "mlp-dynamic", [['"output_specs": [', '"output_specs": "", "x": [']], True),
    ("module_call_graph_null", "mlp-dynamic", [['"module_call_graph": [', '"module_call_graph": null, "x": [']], True),
    ("module_call_graph_string", "mlp-dynamic", [['"module_call_graph": [', '"module_call_graph": "ab", "x": [']], True),
    ("module_call_graph_empty_string", "mlp-dynamic", [['"module_call_graph": [', '"module_call_graph": "", "x": [']], True),
    ("mcs_inputs_int", "mlp-dynamic", [['"signature": {"inputs": [],', '"signature": {"inputs": 5,']], True),
    ("mcs_outputs_string", "mlp-dynamic", [['"inputs": [], "outputs": [],', '"inputs": [], "outputs": "xy",']], True),
    ("range_constraints_list", "mlp-dynamic",
     [['"range_constraints": {"s77": {"min_val": 2, "max_val": 64}}', '"range_constraints": ["s77"]']], True),
    ("range_constraints_null", "mlp-dynamic",
     [['"range_constraints": {"s77": {"min_val": 2, "max_val": 64}}', '"range_constraints": null']], True),
    ("range_constraints_empty_list", "mlp-dynamic",
     [['"range_constraints": {"s77": {"min_val": 2, "max_val": 64}}', '"range_constraints": []']], True),
    # A module call entry's fqn and forward_arg_names, kept as they are.
    ("fqn_root_int", "mlp-dynamic", [['"fqn": ""', '"fqn": 3']], True),
    ("fqn_child_null", "mlp-dynamic", [['"fqn": "fc"', '"fqn": null']], True),
    ("fqn_child_list", "mlp-dynamic", [['"fqn": "fc"', '"fqn": [1, "a"]']], False),
    ("forward_arg_names_string", "mlp-dynamic", [['"forward_arg_names": ["x"]', '"forward_arg_names": "ab"']], True),
    ("forward_arg_names_zero", "mlp-dynamic", [['"forward_arg_names": ["x"]', '"forward_arg_names": 0']], True),
    ("forward_arg_names_ints", "mlp-dynamic", [['"forward_arg_names": ["x"]', '"forward_arg_names": [1]']], True),
    ("forward_arg_names_dict", "mlp-dynamic", [['"forward_arg_names": ["x"]', '"forward_arg_names": {"x": 1}']], False),
    # An expr_str that is not a str: sympify reads an int, float or None
    # as its text (a bool becomes sympy's true, a list stays a list).
    ("sym_bool_expr_int", "runtime-asserts", [['"expr_str": "GreaterThan(Symbol(\'u0\', integer=True), Integer(2))"', '"expr_str": 51']], True),
    ("sym_bool_expr_null", "runtime-asserts", [['"expr_str": "GreaterThan(Symbol(\'u0\', integer=True), Integer(2))"', '"expr_str": null']], True),
    ("sym_bool_expr_float", "runtime-asserts", [['"expr_str": "GreaterThan(Symbol(\'u0\', integer=True), Integer(2))"', '"expr_str": 2.5']], True),
    ("sym_int_expr_int_hint", "mlp-dynamic", [['"expr_str": "Symbol(\'s77\', positive=True, integer=True)", "hint": {"as_int": 5}', '"expr_str": 5, "hint": {"as_int": 5}']], True),
    ("sym_int_expr_int_other_hint", "mlp-dynamic", [['"expr_str": "Symbol(\'s77\', positive=True, integer=True)", "hint": {"as_int": 5}', '"expr_str": 42, "hint": {"as_int": 5}']], True),
    ("sym_int_expr_float", "mlp-dynamic", [['"expr_str": "Symbol(\'s77\', positive=True, integer=True)", "hint": {"as_int": 5}', '"expr_str": 5.0, "hint": {"as_int": 5}']], True),
    ("sym_int_expr_null", "mlp-dynamic", [['"expr_str": "Symbol(\'s77\', positive=True, integer=True)", "hint": {"as_int": 5}', '"expr_str": null, "hint": {"as_int": 5}']], True),
    # The verifiers list kept as it came: [load_verifier(v) for v in ...].
    ("verifiers_null", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": null']], True),
    ("verifiers_int", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": 3']], True),
    ("verifiers_empty_string", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": ""']], True),
    ("verifiers_string", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": "TRAINING"']], True),
    ("verifiers_int_item", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": ["TRAINING", 1]']], True),
    ("verifiers_null_item", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": ["ATEN", null]']], True),
    ("verifiers_list_item", "mlp-dynamic", [['"verifiers": ["TRAINING"]', '"verifiers": [[]]']], True),
]


def edited_archive(program, edits, out_path):
    src = os.path.join(ROOT, "corpus", "programs", program + ".pt2")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out_path, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("models/model.json"):
                text = data.decode("utf-8")
                for old, new in edits:
                    if old not in text:
                        raise SystemExit(f"{program}: no {old!r}")
                    text = text.replace(old, new, 1)
                data = text.encode("utf-8")
            zout.writestr(info, data)


def main():
    import torch
    import zoo_types  # noqa: F401

    excs = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.exc_info and record.exc_info[1] is not None:
                excs.append(record.exc_info[1])

    lg = logging.getLogger("torch.export")
    lg.addHandler(Keep(logging.DEBUG))
    lg.propagate = False
    lg.setLevel(logging.WARNING)

    out = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        for name, program, edits, loose in CASES:
            path = os.path.join(tmp, name + ".pt2")
            edited_archive(program, edits, path)
            excs.clear()
            try:
                torch.export.load(path)
                res = {"outcome": "ok"}
            except Exception as e:  # noqa: BLE001 - every failure is an outcome
                inner = excs[-1] if str(e).startswith(GENERIC) and excs else e
                res = {"outcome": "error", **exc_json(original_of(inner))}
            line = {"name": name, "program": program, "edits": edits, "pytorch": res}
            if loose:
                line["loose"] = True
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    dest = os.path.join(ROOT, "tests", "data", "lenient", "cases.jsonl")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        f.write(out.getvalue())
    # The capture metadata beside the outcomes it recorded.
    import platform
    meta = {"torch": torch.__version__, "python": platform.python_version(),
            "command": ".oracle/bin/python oracle/make_lenient_cases.py", "cases": len(CASES)}
    with open(os.path.join(os.path.dirname(dest), "METADATA.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(meta, indent=2) + "\n")
    print(f"{len(CASES)} cases in {os.path.relpath(dest, ROOT)}")


if __name__ == "__main__":
    main()
