"""Writes tests/data/pyjson/cases.jsonl: for each input text, what CPython's
`json.loads` returns (then `json.dumps(v, allow_nan=False)` of it) or
raises. Replayed by `crates/pyval/src/pyjson/tests.rs`. Run from the repository root:

    .oracle/bin/python oracle/make_pyjson_cases.py
"""

import json
import sys

INPUTS = [
    # values and layout
    "null", "true", "false", " \t\r\n[1, 2 ,3 ] \n", "[]", "{}", "[[], {}, [[]]]",
    '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    '{"a":1,"b":2,"a":3}', '{"x": {"y": 1, "y": {"z": 2}}, "w": 0, "x": 5}',
    # ints
    "0", "-0", "7", "-12", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
    "1" * 4300, "-" + "2" * 4300, "3" * 4301, "-" + "4" * 4301, "1" * 5000,
    # floats: repr layout, rounding, overflow
    "0.0", "-0.0", "1.0", "1.5", "0.1", "100.0", "1e5", "1E5", "1e-5", "1e-05", "1e16", "1e15",
    "1.0e+16", "123456789.123", "1e22", "1e-7", "0.0001", "0.00001", "2.5e-320", "1e400",
    "-1e400", "1.7976931348623157e308", "5e-324", "3.141592653589793", "[0.30000000000000004]",
    "NaN", "Infinity", "-Infinity", "[NaN, 1]", '{"f": -Infinity}',
    # strings
    '""', '"abc"', '"\\u00e9"', '"\\u00E9"', '"\\ud83d\\ude00"', '"\\/\\b\\f\\n\\r\\t\\"\\\\"',
    '"\\u0000\\u001f\\u007f\\u0080\\u2028\\uffff"', '"caf\u00e9 \u4e2d\U0001f600"',
    '"tab\\tand\\u0041"', '{"k\u00e9y": "v"}', '"\x7f"',
    # errors
    "", " ", "[", "]", "[1,]", '{"a":1,}', '{"a" 1}', "{1:2}", "[1 2]", '"abc', '"\\x"',
    '"\\u12"', '"\\u12x4"', '"\\u1234', '"a\x01"', '"a\nb"', "01", "1 2", "nul", "-", "[-]",
    "1.", "1e", "1.e5", ".5", "+1", '{"a":1 "b"}', "\n\n  x", '"\u00e9" x', "[1]]", "tru",
    "{", '{"a"', '{"a":', '"\\', "[1,\n 2,\n x]", "\ufeff[]", "nan", "inf", "-inf", "[Infinity",
    '{"a": [1, {"b": }]}', "[1, 2", "'a'", "[1,,2]", '{"a":1,,"b":2}', "\u00e9",
]


def outcome(text):
    try:
        v = json.loads(text)
    except (ValueError, RecursionError) as e:
        return {"input": text, "loads_error": f"{type(e).__name__}: {e}"}
    try:
        return {"input": text, "dumps": json.dumps(v, allow_nan=False)}
    except ValueError as e:
        return {"input": text, "dumps_error": f"{type(e).__name__}: {e}"}


def main():
    with open("tests/data/pyjson/cases.jsonl", "w") as f:
        for text in INPUTS:
            f.write(json.dumps(outcome(text)) + "\n")
    print(f"{len(INPUTS)} cases, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
