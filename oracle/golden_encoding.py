"""The JSON the oracle writes into goldens: values as the case format's
``enc`` encodes them, exceptions as ``{"type", "message"}``, the program
report of shared/program-report.md, and the one encoder of golden lines
(``dumps``; ``dumps_program_json`` is its variant for program JSON as
torch.export.save writes it, the text of mutants). A leaf module with only the
standard library at import: capture.py, serve_mutants.py, serve_plans.py,
weights.py, pytree_cases.py, mutate.py, zoo.py, check_drift_examples.py and the
timing scripts all write through it, and it imports none of them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# A c10::Error's what() as CPython shows it inside another message (the
# argument parser's `failed to unpack the object at pos N with error "..."`):
# the message, then "Exception raised from FUNC at FILE:LINE (most recent
# call first):" and one line per C++ frame, with load addresses that change
# from run to run (ASLR). No golden could reproduce those bytes, so goldens
# keep what_without_backtrace(): the message with this block cut out.
_C10_BACKTRACE = re.compile(
    r"\nException raised from [^\n]* \(most recent call first\):\n"
    r"(?:(?:frame #\d+: [^\n]*|<omitting python frames>)\n)*")


def enc(x: Any) -> Any:
    """Encode a Python value as JSON per the format's ``enc``."""
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, bool):  # before int: bool is an int subclass
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return {"$float": "nan"}
        if math.isinf(x):
            return {"$float": "inf" if x > 0 else "-inf"}
        return x
    if isinstance(x, list):
        return [enc(item) for item in x]
    if isinstance(x, tuple):
        return {"tuple": [enc(item) for item in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x):
        return {k: enc(v) for k, v in x.items()}
    # Anything else, including a dict with a non-str key and the derived
    # SymInt / SymBool expressions that to_jsonable() passes through.
    return {"$object": {"type": type(x).__name__, "repr": repr(x)}}


def dumps(obj: Any, *, compact: bool = True) -> str:
    """One golden line: non-ASCII text as itself (UTF-8), compact separators.

    ``compact=False`` keeps json's default ``", "`` and ``": "``: the pytree
    goldens (``pytree/treespecs.jsonl``, oracle/pytree_cases.py) were written
    that way from the start, and a golden's bytes never move.
    """
    if compact:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(obj, ensure_ascii=False)


class Dup:
    """A JSON object written with these (key, value) pairs, keys possibly repeated
    (a mutant's duplicated field: oracle/mutate.py)."""

    def __init__(self, pairs):
        self.pairs = pairs


def dumps_program_json(obj: Any) -> str:
    """A program JSON as ``torch.export.save`` writes ``models/model.json``, not a
    golden line: json's defaults (ASCII escapes, ``", "`` and ``": "``), as
    torch/_export/serde/serialize.py calls ``json.dumps``, so a zoo program read
    and written back is its archive's text byte for byte; a ``Dup`` inside is
    written with its repeated keys. The text of oracle/mutate.py's mutants.
    """
    try:  # json's C encoder writes the same text when there is no Dup inside
        return json.dumps(obj)
    except TypeError:
        return _dumps_dup(obj)


def _dumps_dup(o: Any) -> str:
    if isinstance(o, Dup):
        return "{" + ", ".join(json.dumps(k) + ": " + _dumps_dup(v) for k, v in o.pairs) + "}"
    if isinstance(o, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + _dumps_dup(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ", ".join(_dumps_dup(v) for v in o) + "]"
    return json.dumps(o)


def exception_message(e: BaseException) -> str:
    """str(e) as goldens record it: a C++ backtrace cut out (_C10_BACKTRACE)."""
    try:
        message = str(e)
    except Exception:  # an exception whose __str__ raises
        return f"<str() of {type(e).__name__} raised>"
    return _C10_BACKTRACE.sub("", message)


def error_result(case_id: str, e: BaseException) -> dict[str, Any]:
    message = exception_message(e)
    return {"id": case_id, "error": {"type": type(e).__name__, "message": message}}


# Report keys in the contract's order. Each is computed on its own: one that
# raises in PyTorch becomes {"error": {...}} in its place.
SIGNATURE_ARRAYS = ("parameters", "buffers", "non_persistent_buffers",
                    "lifted_tensor_constants", "lifted_custom_objs",
                    "input_tokens", "output_tokens", "user_inputs", "user_outputs")
SIGNATURE_OBJECTS = ("inputs_to_parameters", "inputs_to_buffers", "buffers_to_mutate",
                     "parameters_to_mutate", "user_inputs_to_mutate",
                     "inputs_to_lifted_tensor_constants", "inputs_to_lifted_custom_objs")

def _state_dict_entry(v: Any) -> dict[str, Any]:
    return {"shape": list(v.shape), "dtype": str(v.dtype),
            "parameter": isinstance(v, _torch().nn.Parameter)}


def _report_value(x: Any) -> Any:
    """JSON form of a signature entry: constants (user inputs/outputs) as values."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return enc(x)
    return x


def program_report(ep: Any, schema_version: list[int]) -> dict[str, Any]:
    from torch.utils import _pytree as pytree

    sig = ep.graph_signature
    getters: list[tuple[str, Any]] = [
        ("schema_version", lambda: list(schema_version)),
        ("graph_signature", lambda: str(ep.graph_signature)),
    ]
    for name in SIGNATURE_ARRAYS:
        getters.append((name, lambda name=name: [_report_value(x) for x in getattr(sig, name)]))
    for name in SIGNATURE_OBJECTS:
        getters.append((name, lambda name=name: dict(getattr(sig, name))))

    def backward() -> Any:
        b = sig.backward_signature
        if b is None:
            return None
        return {"gradients_to_parameters": dict(b.gradients_to_parameters),
                "gradients_to_user_inputs": dict(b.gradients_to_user_inputs),
                "loss_output": b.loss_output}

    getters += [
        ("backward_signature", backward),
        ("in_spec", lambda: pytree.treespec_dumps(ep.call_spec.in_spec)),
        ("out_spec", lambda: pytree.treespec_dumps(ep.call_spec.out_spec)),
        ("in_spec_str", lambda: str(ep.call_spec.in_spec)),
        ("out_spec_str", lambda: str(ep.call_spec.out_spec)),
        ("range_constraints", lambda: str(ep.range_constraints)),
        ("graph", lambda: str(ep.graph)),
        ("state_dict", lambda: {k: _state_dict_entry(v) for k, v in ep.state_dict.items()}),
    ]
    report: dict[str, Any] = {}
    for key, get in getters:
        try:
            report[key] = get()
        except Exception as e:
            report[key] = {"error": error_result("", e)["error"]}
    return report


def _torch() -> Any:
    import torch  # imported by then: a report is of a loaded program
    return torch
