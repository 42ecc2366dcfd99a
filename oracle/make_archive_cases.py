"""Writes tests/data/archives/: bad and odd .pt2 files as recipes over a few
base archives, each with what ``torch.export.load`` does with it -- the
exception it raises (and the one it logged first, when it caught
``load_pt2``'s RuntimeError), or the loaded program's node count and state
dict keys. Replayed by tests/it/archives.rs, which builds each file from
its recipe. Run from the repository root:

    .oracle/bin/python oracle/make_archive_cases.py
"""

import io
import json
import logging
import os
import sys
import warnings
import zipfile

import torch

HERE = "tests/data/archives"
MLP = "corpus/programs/mlp-dynamic.pt2"


class _Logged(logging.Handler):
    """Keeps the exception torch.export.load logs before its fallback."""

    def __init__(self):
        super().__init__()
        self.exc = None

    def emit(self, record):
        if record.exc_info and self.exc is None:
            self.exc = record.exc_info[1]


def make_bases():
    """nested.pt2: a program whose buffer is the bytes of mlp-dynamic.pt2;
    missing-weight.pt2: mlp-dynamic.pt2 without its second weight file;
    dup-format.pt2: mlp-dynamic.pt2 with a first `archive_format` of "zip"."""
    data = open(MLP, "rb").read()

    class Nested(torch.nn.Module):
        def __init__(self):
            super().__init__()
            blob = torch.frombuffer(bytearray(data), dtype=torch.uint8).clone()
            self.register_buffer("blob", blob)

        def forward(self, x):
            return x + self.blob[:1].float()

    ep = torch.export.export(Nested(), (torch.ones(1),))
    torch.export.save(ep, os.path.join(HERE, "nested.pt2"))

    def rewrite(out, drop=(), first=()):
        with zipfile.ZipFile(MLP) as src, zipfile.ZipFile(os.path.join(HERE, out), "w") as dst:
            for name, payload in first:
                dst.writestr(name, payload)
            for info in src.infolist():
                if info.filename not in drop:
                    dst.writestr(info, src.read(info.filename))

    rewrite("missing-weight.pt2", drop={"mlp-dynamic/data/weights/weight_1"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
        rewrite("dup-format.pt2", first=[("mlp-dynamic/archive_format", b"zip")])


# (id, base file or None, edit): the edits tests/it/archives.rs applies.
CASES = [
    ("empty", None, {"hex": ""}),
    ("json", None, {"hex": b"{}".hex()}),
    ("pk", None, {"hex": b"PK".hex()}),
    ("not-utf8", None, {"hex": bytes(range(256)).hex() * 4}),
    ("mlp", MLP, {}),
    ("mlp-minus-1", MLP, {"truncate": 1}),
    ("mlp-minus-10", MLP, {"truncate": 10}),
    ("mlp-minus-22", MLP, {"truncate": 22}),
    ("mlp-half", MLP, {"keep": 5000}),
    ("mlp-prepend", MLP, {"prepend_hex": b"xxxx".hex()}),
    ("mlp-prepend-pk", MLP, {"prepend_hex": b"PK".hex()}),
    ("mlp-append", MLP, {"append_hex": b"junk".hex()}),
    ("nested", f"{HERE}/nested.pt2", {}),
    ("nested-minus-1", f"{HERE}/nested.pt2", {"truncate": 1}),
    ("nested-minus-10", f"{HERE}/nested.pt2", {"truncate": 10}),
    ("missing-weight", f"{HERE}/missing-weight.pt2", {}),
    ("dup-format", f"{HERE}/dup-format.pt2", {}),
]


def build(base, edit):
    data = b"" if base is None else open(base, "rb").read()
    if "hex" in edit:
        data = bytes.fromhex(edit["hex"])
    if "truncate" in edit:
        data = data[: len(data) - edit["truncate"]]
    if "keep" in edit:
        data = data[: edit["keep"]]
    data = bytes.fromhex(edit.get("prepend_hex", "")) + data + bytes.fromhex(edit.get("append_hex", ""))
    return data


def exc(e):
    return {"type": type(e).__name__, "message": str(e)}


def outcome(path):
    handler = _Logged()
    log = logging.getLogger("torch.export")
    log.addHandler(handler)
    log.propagate = False
    try:
        ep = torch.export.load(path)
        return {"ok": {"nodes": len(ep.graph.nodes), "state_dict": list(ep.state_dict)}}
    except Exception as e:  # noqa: BLE001 - the exception is the result
        out = {"error": exc(e)}
        if handler.exc is not None:
            out["logged"] = exc(handler.exc)
        return out
    finally:
        log.removeHandler(handler)


def main():
    os.makedirs(HERE, exist_ok=True)
    make_bases()
    scratch = os.path.join(os.environ.get("TMPDIR", "/tmp"), "torchspec-archive-cases")
    os.makedirs(scratch, exist_ok=True)
    with open(os.path.join(HERE, "cases.jsonl"), "w") as out:
        for case_id, base, edit in CASES:
            path = os.path.join(scratch, case_id + ".pt2")
            with open(path, "wb") as f:
                f.write(build(base, edit))
            line = {"id": case_id, "base": base, "edit": edit, "torch": outcome(path)}
            out.write(json.dumps(line) + "\n")
            print(case_id, json.dumps(line["torch"])[:160], file=sys.stderr)


if __name__ == "__main__":
    main()
