"""Checks that every Python exception text hard-coded in src/ and crates/*/src/ is one that
PyTorch 2.15.0 or CPython 3.11 really prints (issue 16 item 5, "no invented
texts").

Run: .oracle/bin/python oracle/check_exception_texts.py [-v] [--list] [--dynamic]
     [--cpython-src DIR]

What counts as an exception text: the message argument wherever src/ pairs a
Python exception type with a message —
  * any call with a string-literal exception name followed by the message
    (`Raise::new("TypeError", m)`, `Error::python(..)`, `LoadError::python(path,
    "KeyError", m)`, `LoadFailure::py`, the passes' `py`, `EvalStop::Raise`,
    `error_json`, ...);
  * `PyException { type_name: "X".into(), message: m }`;
  * calls of a *wrapper*: a function whose body does one of the above with one
    of its own parameters as the message or inside the message's `format!`
    (`Raise::type_error(m)`, `assertion(m)`, `decode_error(text, msg, pos)`,
    `not_allowed(what)`, ...), found by the script itself, to a fixed point.
A message is a string literal, a `format!` template, a `match`/`if` whose arms
are those, or a local `let` bound to one of those; anything else (a repr, a
value carried from the input, another exception's message) is dynamic and not
a hard-coded text (`--dynamic` lists those sites). `#[cfg(test)]` items and
`tests.rs` files are skipped.

Each template is split at its `{...}` placeholders (`{{`/`}}` are literal
braces), at newlines, quotes and backslashes (where Python's source may
escape, or a `!r` / `'%s'` may stand), and where the Rust spells out a value
Python renders (a type's `<class '...'>`, a dataclass repr's `Name(field=`);
each piece is trimmed of the spaces and `:;,.()[]{}` a placeholder's rendering
may bring, and every piece of at least 8 characters must occur in one of (in
this order, the later ones read only when needed):
  1. the torch-2.15.0 goldens under corpus/goldens/torch-2.15.0/ (PyTorch's
     actual outputs; every string value of every line);
  2. the .py sources of torch and of the libraries its messages come from
     (sympy, mpmath) in this interpreter's site-packages, and CPython's stdlib;
  3. the same sources with implicit string concatenation joined (a message
     split over two literals on two lines);
  4. the C-level strings of CPython (libpython3.11 / the interpreter binary
     and lib-dynload's extension modules) and of PyTorch (torch/_C*.so,
     torch/lib/libtorch_python.so, libc10.so, libtorch_cpu.so) — the
     printable runs of the binaries, where C `PyErr_Format` / TORCH_CHECK
     texts live;
  5. CPython's C sources, if --cpython-src DIR is given (a checkout of
     python/cpython at v3.11.x).
A literal message with no piece that long (`"TODO"`) must occur as a whole
golden string, Python string literal or C string; a shorter `format!`
template, or a wrapper's argument that is only part of a message, is counted
as too short to check (`--list` shows them).

Every text not found is printed with its file:line; the exit status is 1 if
any. ALLOWED below lists the texts that are provably real but that no corpus
above holds verbatim — keep it tiny, each entry with its reason.
"""

import argparse
import json
import mmap
import os
import re
import sys
import sysconfig
from importlib.util import find_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The Rust sources: the harness (src/) and the library crates (crates/*/src/).
SRCS = [os.path.join(ROOT, "src")] + sorted(
    os.path.join(ROOT, "crates", c, "src") for c in os.listdir(os.path.join(ROOT, "crates")))
TORCH_VERSION = "2.15.0"
GOLDENS = os.path.join(ROOT, "corpus", "goldens", f"torch-{TORCH_VERSION}")
MIN_PIECE = 8

# Texts that are real but generated dynamically, so no corpus holds them
# verbatim: template (exactly as extracted, see --list) -> reason and where
# PyTorch / CPython produces it.
ALLOWED = {
    # CAFFE_ENFORCE / CAFFE_THROW in caffe2/serialize/inline_container.cc:
    # c10's enforce_finite... prefix "[enforce fail at FILE:LINE] . " is
    # composed at run time from __FILE__ (a build path) and __LINE__;
    # observed by oracle/make_archive_cases.py's exploration under torch
    # 2.15.0: "[enforce fail at inline_container.cc:170] . archive does not
    # contain any files".
    "[enforce fail at inline_container.cc:{line}] . {message}":
        "c10 Error's enforce prefix, composed at run time from __FILE__ and __LINE__",
    # PyTorchStreamReader::init's version checks: c10::str of several C
    # string pieces (the binary holds ". Your PyTorch script module file is
    # too old. Please regenerate it" apart from the rest); observed under
    # torch 2.15.0 with .data/version "0" and "99".
    "Attempted to read a PyTorch file with version {v}, but the minimum supported version for reading is {MIN_FILE_FORMAT_VERSION}. Your PyTorch script module file is too old. Please regenerate it with latest version of PyTorch to mitigate this issue.":
        "inline_container.cc's version check, pieces joined by c10::str",
    "Attempted to read a PyTorch file with version {v}, but the maximum supported version for reading is {MAX_FILE_FORMAT_VERSION}. The version of your PyTorch installation may be too old, please upgrade PyTorch to latest version to mitigate this issue.":
        "inline_container.cc's version check, pieces joined by c10::str",
    # A dataclass __init__ called without its required fields
    # (`_dict_to_dataclass(SymExpr, {})` in torch/_export/serde/serialize.py):
    # CPython's ceval.c format_missing, "%U() missing %i required %s
    # argument%s: %U", whose first %U is the qualname `SymExpr.__init__`; so
    # "__init__() missing" is in no source. Observed: "SymExpr.__init__()
    # missing 1 required positional argument: 'expr_str'".
    "{class}.__init__() missing {} required positional argument{plural}: {list}":
        "CPython ceval.c format_missing with the qualname `Class.__init__`",
    # torch.empty_strided(requires_grad=1) in deserialize_tensor_meta: the
    # arguments parser (torch/csrc/utils/python_arg_parser.cpp) composes
    # "%s(): argument '%s' must be %s, not %s" at run time; observed by
    # oracle/make_lenient_cases.py (tests/data/lenient/cases.jsonl,
    # requires_grad_int): "empty_strided(): argument 'requires_grad' must be
    # bool, not int".
    "empty_strided(): argument 'requires_grad' must be bool, not {}":
        "python_arg_parser.cpp's type error, composed at run time",
    # torch.device(type=..., index=...) in deserialize_device: the same
    # parser's texts (the signature list is python_arg_parser.cpp's
    # invalid-arguments message over torch.device's two signatures);
    # observed by oracle/make_lenient_cases.py (tests/data/lenient/cases.jsonl,
    # device_type_null, device_type_int_with_index, device_index_bool).
    "device() received an invalid combination of arguments - got (type={}, ), but expected one of:\n * (torch.device device)\n      didn't match because some of the keywords were incorrect: type\n * (str type, int index = -1)\n":
        "python_arg_parser.cpp's invalid-arguments message, composed at run time",
    "device(): argument 'type' must be str, not {}":
        "python_arg_parser.cpp's type error, composed at run time",
    "device(): argument 'index' must be int, not {}":
        "python_arg_parser.cpp's type error, composed at run time",
}

EXC_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*(Error|Exception|Failed|Warning|Exit|Interrupt)$")


# ---------------------------------------------------------------------------
# A small Rust lexer: identifiers, string literals (decoded), punctuation.
# ---------------------------------------------------------------------------

class Tok:
    __slots__ = ("kind", "val", "line")

    def __init__(self, kind, val, line):
        self.kind, self.val, self.line = kind, val, line

    def __repr__(self):
        return f"{self.kind}:{self.val!r}@{self.line}"


SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def lex(text):
    toks = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif (m := re.compile(r'(b|c)?r(#*)"').match(text, i)) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            close = '"' + m.group(2)
            j = text.find(close, m.end())
            val = text[m.end():j]
            toks.append(Tok("str", val, line))
            line += val.count("\n")
            i = j + len(close)
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)
                          and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            start_line = line
            i += 1 if c == '"' else 2
            out = []
            while text[i] != '"':
                ch = text[i]
                if ch == "\\":
                    e = text[i + 1]
                    if e == "\n":  # line continuation: skip the newline and leading whitespace
                        i += 1
                        while text[i].isspace():
                            line += text[i] == "\n"
                            i += 1
                        continue
                    if e in SIMPLE_ESC:
                        out.append(SIMPLE_ESC[e])
                        i += 2
                    elif e == "x":
                        out.append(chr(int(text[i + 2:i + 4], 16)))
                        i += 4
                    elif e == "u":
                        j = text.index("}", i)
                        out.append(chr(int(text[i + 3:j], 16)))
                        i = j + 1
                    else:
                        raise SyntaxError(f"unknown escape \\{e} at line {line}")
                else:
                    line += ch == "\n"
                    out.append(ch)
                    i += 1
            i += 1
            toks.append(Tok("str", "".join(out), start_line))
        elif c == "'":
            # char literal or lifetime / label
            if text[i + 1] == "\\":
                j = text.index("'", i + 3 if text[i + 2] == "'" else i + 2)
                toks.append(Tok("char", text[i:j + 1], line))
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                toks.append(Tok("char", text[i:i + 3], line))
                i += 3
            else:
                m = re.compile(r"'[A-Za-z_][A-Za-z0-9_]*").match(text, i)
                toks.append(Tok("lifetime", m.group(), line))
                i = m.end()
        elif c.isalpha() or c == "_":
            m = re.compile(r"(r#)?[A-Za-z_][A-Za-z0-9_]*").match(text, i)
            toks.append(Tok("ident", m.group().removeprefix("r#"), line))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9][0-9A-Za-z_]*(\.[0-9][0-9A-Za-z_]*)?").match(text, i)
            toks.append(Tok("num", m.group(), line))
            i = m.end()
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    return toks


def match_brackets(toks):
    pair = {")": "(", "]": "[", "}": "{"}
    stack, match = [], {}
    for k, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.val in "([{":
            stack.append(k)
        elif t.val in ")]}":
            o = stack.pop()
            assert toks[o].val == pair[t.val], (toks[o], t)
            match[o], match[k] = k, o
    return match


def split_commas(toks, match, lo, hi):
    """Top-level comma-separated ranges of toks[lo:hi]."""
    out, start, k = [], lo, lo
    while k < hi:
        t = toks[k]
        if t.kind == "punct" and t.val in "([{":
            k = match[k] + 1
            continue
        if t.kind == "punct" and t.val == ",":
            out.append((start, k))
            start = k + 1
        k += 1
    if start < hi:
        out.append((start, hi))
    return out


def split_params(toks, lo, hi, match):
    """Parameter names of a fn's parameter list toks[lo:hi] (self excluded)."""
    names, start, k, angle = [], lo, lo, 0
    ranges = []
    while k < hi:
        t = toks[k]
        if t.kind == "punct" and t.val in "([{":
            k = match[k] + 1
            continue
        if t.kind == "punct" and t.val == "<":
            angle += 1
        elif t.kind == "punct" and t.val == ">" and not (k > lo and toks[k - 1].val == "-"):
            angle -= 1
        elif t.kind == "punct" and t.val == "," and angle == 0:
            ranges.append((start, k))
            start = k + 1
        k += 1
    if start < hi:
        ranges.append((start, hi))
    for a, b in ranges:
        idents = [t.val for t in toks[a:b] if t.kind == "ident" and t.val != "mut"]
        if idents and idents[0] == "self":
            continue
        names.append(idents[0] if idents else None)
    return names


# ---------------------------------------------------------------------------
# Finding the exception sites of one file.
# ---------------------------------------------------------------------------

class Site:
    """One place where src/ pairs an exception type with a message."""

    def __init__(self, path, line, exc, templates, dynamic):
        self.path, self.line, self.exc = path, line, exc
        self.templates = templates  # [(template, line, is_format)]
        self.dynamic = dynamic      # [line] of message parts that are not literals


class RustFile:
    def __init__(self, path):
        self.path = path
        self.rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            self.toks = lex(f.read())
        self.match = match_brackets(self.toks)
        self.skip = self._test_ranges()
        self.fns = self._fns()

    def _test_ranges(self):
        toks, out = self.toks, []
        for k in range(len(toks) - 6):
            if [t.val for t in toks[k:k + 7]] == ["#", "[", "cfg", "(", "test", ")", "]"]:
                j = k + 7
                while j < len(toks) and toks[j].val not in ("{", ";"):
                    j += 1
                if j < len(toks):
                    out.append((k, self.match.get(j, j)))
        return out

    def skipped(self, k):
        return any(a <= k <= b for a, b in self.skip)

    def _fns(self):
        """(name, params, body_lo, body_hi, is_pub) of every fn with a body."""
        toks, out = self.toks, []
        for k, t in enumerate(toks):
            if not (t.kind == "ident" and t.val == "fn" and k + 1 < len(toks)
                    and toks[k + 1].kind == "ident"):
                continue
            j = k + 2
            if toks[j].val == "<":  # generics
                depth = 0
                while True:
                    if toks[j].val == "<":
                        depth += 1
                    elif toks[j].val == ">" and toks[j - 1].val != "-":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                j += 1
            if toks[j].val != "(":
                continue
            params = split_params(toks, j + 1, self.match[j], self.match)
            b = self.match[j] + 1
            while b < len(toks) and toks[b].val not in ("{", ";"):
                if toks[b].val in "([":
                    b = self.match[b]
                b += 1
            if b >= len(toks) or toks[b].val == ";":
                continue
            back = [x.val for x in toks[max(0, k - 6):k]]
            is_pub = "pub" in back
            out.append((toks[k + 1].val, params, b, self.match[b], is_pub))
        return out

    def enclosing_fn(self, k):
        best = None
        for fn in self.fns:
            if fn[2] < k < fn[3] and (best is None or fn[2] > best[2]):
                best = fn
        return best


STRIP_METHODS = {"into", "to_string", "to_owned", "into_owned", "as_str", "as_ref"}


def strip_expr(toks, match, lo, hi):
    while lo < hi:
        if toks[lo].val == "&":
            lo += 1
        elif (hi - lo >= 4 and toks[hi - 1].val == ")" and toks[hi - 2].val == "("
              and toks[hi - 3].kind == "ident" and toks[hi - 3].val in STRIP_METHODS
              and toks[hi - 4].val == "."):
            hi -= 4
        elif toks[lo].val == "(" and match[lo] == hi - 1:
            lo, hi = lo + 1, hi - 1
        elif (hi - lo >= 5 and [t.val for t in toks[lo:lo + 4]] == ["String", ":", ":", "from"]
              and toks[lo + 4].val == "(" and match[lo + 4] == hi - 1):
            lo, hi = lo + 5, hi - 1
        else:
            break
    return lo, hi


class Message:
    """What one message expression resolves to."""

    def __init__(self):
        self.templates = []   # [(template, line, is a format! template)]
        self.dynamic = []     # [line]
        self.params = []      # [(param index, role)]: the message uses the enclosing fn's params


def is_format_at(toks, k):
    return (toks[k].kind == "ident" and toks[k].val == "format" and k + 2 < len(toks)
            and toks[k + 1].val == "!" and toks[k + 2].val == "(")


def eval_message(rf, lo, hi, out, depth=0):
    toks, match = rf.toks, rf.match
    lo, hi = strip_expr(toks, match, lo, hi)
    if lo >= hi:
        return
    fn = rf.enclosing_fn(lo)
    params = fn[1] if fn else []
    first = toks[lo]
    if hi - lo == 1 and first.kind == "str":
        out.templates.append((first.val, first.line, False))
        return
    if is_format_at(toks, lo) and match[lo + 2] == hi - 1:
        args = split_commas(toks, match, lo + 3, hi - 1)
        tmpl = toks[args[0][0]]
        assert tmpl.kind == "str", (rf.rel, tmpl)
        out.templates.append((tmpl.val, tmpl.line, True))
        # Parameters inside the template ({what}) or as bare arguments make
        # the enclosing fn a wrapper whose argument is part of the message.
        for name in re.findall(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)", tmpl.val.replace("{{", "")):
            if name in params:
                out.params.append((params.index(name), "part"))
        for a, b in args[1:]:
            a, b = strip_expr(toks, match, a, b)
            if b - a == 1 and toks[a].kind == "ident" and toks[a].val in params:
                out.params.append((params.index(toks[a].val), "part"))
        return
    if first.kind == "ident" and first.val in ("match", "if"):
        k = lo
        while k < hi:
            t = toks[k]
            if is_format_at(toks, k):
                eval_message(rf, k, match[k + 2] + 1, out, depth + 1)
                k = match[k + 2] + 1
            elif t.kind == "str":
                out.templates.append((t.val, t.line, False))
                k += 1
            elif t.val in "([":
                k = match[k] + 1
            else:
                k += 1
        return
    if hi - lo == 1 and first.kind == "ident":
        name = first.val
        if name in params:
            out.params.append((params.index(name), "whole"))
            return
        # A local `let NAME = EXPR;` before this use, in the same fn.
        if fn and depth < 5:
            for k in range(lo - 1, fn[2], -1):
                t = toks[k]
                if t.kind == "ident" and t.val == "let":
                    j = k + 1
                    if toks[j].val == "mut":
                        j += 1
                    if toks[j].kind == "ident" and toks[j].val == name:
                        e = j + 1
                        while e < hi and toks[e].val != "=" and toks[e].val != ";":
                            e += 1
                        if toks[e].val != "=":
                            break
                        s = e + 1
                        end = s
                        while end < len(toks) and toks[end].val != ";":
                            if toks[end].val in "([{":
                                end = match[end]
                            end += 1
                        eval_message(rf, s, end, out, depth + 1)
                        return
    out.dynamic.append(first.line)


def call_sites(rf):
    """(call index, name, arg ranges) of every `NAME(...)` call (fn definitions excluded)."""
    toks = rf.toks
    for k in range(len(toks) - 1):
        t = toks[k]
        if t.kind == "ident" and toks[k + 1].val == "(" and not rf.skipped(k):
            if k > 0 and toks[k - 1].val == "fn":
                continue
            args = split_commas(toks, rf.match, k + 2, rf.match[k + 1])
            yield k, t.val, args


def struct_sites(rf):
    """`PyException { type_name: "X"..., message: EXPR }` literals."""
    toks = rf.toks
    for k in range(len(toks) - 1):
        if toks[k].val == "PyException" and toks[k + 1].val == "{" and not rf.skipped(k):
            fields = {}
            for a, b in split_commas(toks, rf.match, k + 2, rf.match[k + 1]):
                if b - a >= 2 and toks[a].kind == "ident" and toks[a + 1].val == ":":
                    fields[toks[a].val] = (a + 2, b)
                elif b - a == 1 and toks[a].kind == "ident":
                    fields[toks[a].val] = (a, b)
            if "type_name" in fields and "message" in fields:
                a, b = strip_expr(toks, rf.match, *fields["type_name"])
                if b - a == 1 and toks[a].kind == "str" and EXC_NAME.match(toks[a].val):
                    yield k, toks[a].val, fields["message"]


def collect(files):
    sites = []
    # wrappers: name -> list of (file, param index, role, exc, is_pub)
    wrappers = {}

    def add_site(rf, k, exc, rng, part=False):
        msg = Message()
        eval_message(rf, *rng, msg)
        if part:  # a wrapper's argument that is only part of the message
            msg.templates = [(t, line, "part") for t, line, _ in msg.templates]
        fn = rf.enclosing_fn(k)
        for idx, role in msg.params:
            role = "part" if part else role
            key = (rf.rel, fn[0], idx)
            if key not in seen_wrappers:
                seen_wrappers.add(key)
                wrappers.setdefault(fn[0], []).append((rf.rel, idx, role, exc, fn[4]))
                changed[0] = True
        if msg.templates or msg.dynamic:
            sites.append(Site(rf.rel, rf.toks[k].line, exc, msg.templates, msg.dynamic))

    seen_wrappers = set()
    changed = [False]
    # Direct sites.
    for rf in files:
        for k, name, args in call_sites(rf):
            for i, (a, b) in enumerate(args[:-1]):
                if b - a == 1 and rf.toks[a].kind == "str" and EXC_NAME.match(rf.toks[a].val):
                    add_site(rf, k, rf.toks[a].val, args[i + 1])
                    break
        for k, exc, rng in struct_sites(rf):
            add_site(rf, k, exc, rng)
    # Wrapper call sites, to a fixed point.
    done = set()
    changed[0] = True
    while changed[0]:
        changed[0] = False
        for rf in files:
            for k, name, args in call_sites(rf):
                cands = wrappers.get(name, [])
                local = [w for w in cands if w[0] == rf.rel]
                for w in local or [w for w in cands if w[4]]:
                    key = (rf.rel, k, w[0], w[1])
                    if key in done or w[1] >= len(args):
                        continue
                    # The wrapper's own definition calls nothing of itself.
                    done.add(key)
                    add_site(rf, k, w[3], args[w[1]], part=w[2] == "part")
    return sites, wrappers


# ---------------------------------------------------------------------------
# Templates -> pieces.
# ---------------------------------------------------------------------------

def template_literals(t):
    """The literal text between a Rust format template's placeholders."""
    parts, cur, i = [], [], 0
    while i < len(t):
        if t.startswith("{{", i):
            cur.append("{")
            i += 2
        elif t.startswith("}}", i):
            cur.append("}")
            i += 2
        elif t[i] == "{":
            j = t.index("}", i)
            parts.append("".join(cur))
            cur = []
            i = j + 1
        else:
            cur.append(t[i])
            i += 1
    parts.append("".join(cur))
    return parts


# Where Python renders a value, the Rust template spells the rendering out:
# a type's repr (`<class 'NoneType'>`) or the opening of a dataclass / union
# repr (`SchemaVersion(major=`, `TokenArgument(name=`). Those spots are
# placeholders too.
REPR_SPOT = re.compile(r"<class '[^']*'>|<class |\b[A-Za-z_][A-Za-z0-9_]*\([a-z_][a-z0-9_]*=")
# Trimmed off each piece's ends: what Python's own placeholder rendering may
# bring (`: {reason}`, `[{}]`, `({}, {})`).
TRIM = " \t:;,.()[]{}"


def pieces(template, is_format):
    lits = template_literals(template) if is_format else [template]
    out = []
    for lit in lits:
        for p in re.split(r"[\n'\"\\]", REPR_SPOT.sub("\n", lit)):
            p = p.strip(TRIM)
            if len(p) >= MIN_PIECE:
                out.append(p)
    return lits, out


# ---------------------------------------------------------------------------
# The corpus.
# ---------------------------------------------------------------------------

def site_packages_dir():
    spec = find_spec("torch")
    return os.path.dirname(os.path.dirname(spec.origin))


def torch_version(sp):
    ns = {}
    with open(os.path.join(sp, "torch", "version.py")) as f:
        exec(f.read(), ns)
    return ns["__version__"].split("+")[0]


def py_files(sp):
    roots = [os.path.join(sp, d) for d in ("torch", "sympy", "mpmath")]
    roots.append(sysconfig.get_paths()["stdlib"])
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in ("site-packages", "__pycache__")]
            for fn in filenames:
                if fn.endswith(".py"):
                    yield os.path.join(dirpath, fn)


def golden_strings():
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                out.append(k)
                walk(x)

    for dirpath, _, filenames in os.walk(GOLDENS):
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            with open(p, encoding="utf-8") as f:
                if fn.endswith(".jsonl"):
                    for line in f:
                        if line.strip():
                            walk(json.loads(line))
                elif fn.endswith(".json"):
                    walk(json.load(f))
    return out


# A string literal's end, a line break, and the next literal's start: Python's
# implicit concatenation (`"... because we "` / `"couldn't find ..."`) joined.
IMPLICIT_CONCAT = re.compile(r"""["']\s*\n\s*(?:[rRbBfFuU]{1,2})?["']""")


def binary_files(sp):
    libdir = sysconfig.get_config_var("LIBDIR")
    ldlib = sysconfig.get_config_var("LDLIBRARY")
    out = []
    if libdir and ldlib and os.path.exists(os.path.join(libdir, ldlib)):
        out.append(os.path.join(libdir, ldlib))
    out.append(os.path.realpath(sys.executable))
    dyn = os.path.join(sysconfig.get_paths()["stdlib"], "lib-dynload")
    if os.path.isdir(dyn):
        out += [os.path.join(dyn, f) for f in sorted(os.listdir(dyn)) if f.endswith(".so")]
    torch_dir = os.path.join(sp, "torch")
    out += [os.path.join(torch_dir, f) for f in sorted(os.listdir(torch_dir)) if f.endswith(".so")]
    for lib in ("libtorch_python.so", "libc10.so", "libtorch_cpu.so"):
        p = os.path.join(torch_dir, "lib", lib)
        if os.path.exists(p):
            out.append(p)
    return out


PRINTABLE = re.compile(rb"[\t\n\x20-\x7e]{6,}")


def binary_strings(path):
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return "\0".join(s.decode("ascii") for s in PRINTABLE.findall(m))


class Corpus:
    def __init__(self, sp, cpython_src):
        self.sp, self.cpython_src = sp, cpython_src
        self.golden = "\0".join(golden_strings())
        self.golden_set = set(self.golden.split("\0"))
        self.files = list(py_files(sp))
        self.raw = {}
        for p in self.files:
            with open(p, encoding="utf-8", errors="replace") as f:
                self.raw[p] = f.read()
        self.raw_all = "\0".join(self.raw.values())
        self._joined = None
        self._bin = None
        self._csrc = None

    def where(self, piece):
        if piece in self.golden:
            return "golden"
        if piece in self.raw_all:
            return "py"
        if self._joined is None:
            self._joined = IMPLICIT_CONCAT.sub("", self.raw_all)
        if piece in self._joined:
            return "py-joined"
        for p, s in self.binaries():
            if piece in s:
                return "c:" + os.path.basename(p)
        if self.cpython_src:
            if self._csrc is None:
                texts = []
                for dirpath, _, filenames in os.walk(self.cpython_src):
                    for fn in filenames:
                        if fn.endswith((".c", ".h")):
                            with open(os.path.join(dirpath, fn), errors="replace") as f:
                                texts.append(f.read())
                self._csrc = "\0".join(texts)
            if piece in self._csrc:
                return "cpython-src"
        return None

    def whole_literal(self, text):
        """`text` as a whole string: a golden string, a Python string
        literal, or a C string."""
        if text in self.golden_set:
            return "golden"
        for q in ('"', "'"):
            if q + text + q in self.raw_all:
                return "py"
        for p, s in self.binaries():
            if "\0" + text + "\0" in s:
                return "c:" + os.path.basename(p)
        return None

    def binaries(self):
        if self._bin is None:
            self._bin = [(p, "\0" + binary_strings(p) + "\0") for p in binary_files(self.sp)]
        return self._bin


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="say where each piece was found")
    ap.add_argument("--list", action="store_true", help="list every template checked")
    ap.add_argument("--dynamic", action="store_true", help="list the sites whose message is dynamic")
    ap.add_argument("--cpython-src", help="a CPython 3.11 source checkout (C files searched too)")
    args = ap.parse_args()

    sp = site_packages_dir()
    have = torch_version(sp)
    if have != TORCH_VERSION:
        sys.exit(f"check_exception_texts: torch {have} is installed; the texts are torch {TORCH_VERSION}'s")

    files = []
    for src in SRCS:
        for dirpath, _, filenames in os.walk(src):
            for fn in sorted(filenames):
                if fn.endswith(".rs") and fn != "tests.rs":
                    files.append(RustFile(os.path.join(dirpath, fn)))
    files.sort(key=lambda rf: rf.rel)
    sites, wrappers = collect(files)

    # One entry per (file, line of the template, template).
    templates = {}
    for s in sites:
        for t, line, is_format in s.templates:
            templates.setdefault((s.path, line, t, is_format), set()).add(s.exc)
    corpus = Corpus(sp, args.cpython_src)

    bad, checked, short = [], 0, []
    for (path, line, t, kind), excs in sorted(templates.items()):
        is_format = kind is True or kind == "part"
        lits, ps = pieces(t, is_format)
        shown = f"{path}:{line}: {'/'.join(sorted(excs))}: {t!r}"
        if t in ALLOWED:
            if args.list:
                print(f"allowed  {shown}  ({ALLOWED[t]})")
            continue
        if not ps:
            if kind is False and lits[0]:
                w = corpus.whole_literal(lits[0])
                checked += 1
                if w is None:
                    bad.append((shown, [lits[0]]))
                elif args.list:
                    print(f"ok       {shown}  [{w}]")
            else:
                short.append(shown)
            continue
        checked += 1
        missing, found = [], []
        for p in ps:
            w = corpus.where(p)
            if w is None:
                missing.append(p)
            else:
                found.append((p, w))
        if missing:
            bad.append((shown, missing))
        elif args.list:
            print(f"ok       {shown}" + (f"  {found}" if args.verbose else ""))

    if args.dynamic:
        for s in sites:
            for line in s.dynamic:
                print(f"dynamic  {s.path}:{line}: {s.exc}")
    if args.list or args.verbose:
        for shown in short:
            print(f"short    {shown}")
        for name, ws in sorted(wrappers.items()):
            for rel, idx, role, exc, is_pub in ws:
                print(f"wrapper  {rel}: {name}(arg {idx}, {role}) -> {exc}")
    for shown, missing in bad:
        print(f"NOT FOUND {shown}")
        for p in missing:
            print(f"    piece not in torch/CPython sources or goldens: {p!r}")
    n_dyn = sum(len(s.dynamic) for s in sites)
    print(f"check_exception_texts: {checked} exception text(s) from src/ checked "
          f"({len(sites)} sites, {n_dyn} dynamic message part(s), {len(short)} too short to check): "
          f"{len(bad)} not found", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
