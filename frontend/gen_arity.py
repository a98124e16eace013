#!/usr/bin/python3
"""gen_arity.py: writes frontend/arity.def, the input and output counts ONNX
allows for every (op, since_version) row of the converter table.

The rows are read from frontend/convert.def (R(...) rows and the row
macros UNARY3, ARITH, VARIADIC); the counts come from the operator schemas
of the onnx package.  Versions newer than the package knows are written from
the ONNX operator documentation in NEWER below; a row that matches neither
(a since_version that is not a version of the op) is an error.

Run with a Python that has onnx (1.12 or later) after changing the table:
    /usr/bin/python3 frontend/gen_arity.py
The output is deterministic; the generated file is committed (it is not
made at build time).
"""
import os
import re
import sys

import onnx
import onnx.defs

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "convert.def")
OUT = os.path.join(HERE, "arity.def")
VAR = -1

# Versions after the onnx package's last opset: (op, since) ->
# (input options, output options, min variadic inputs, min variadic outputs).
# Options: s single (required), o optional, v variadic (last only).
NEWER = {
    ("AveragePool", 19): ("s", "s"),
    ("DFT", 20): ("soo", "s"),
    ("GridSample", 20): ("ss", "s"),
    ("Pad", 18): ("ssoo", "s"),
    ("ReduceL1", 18): ("so", "s"),
    ("ReduceL2", 18): ("so", "s"),
    ("ReduceLogSum", 18): ("so", "s"),
    ("ReduceLogSumExp", 18): ("so", "s"),
    ("ReduceMax", 18): ("so", "s"),
    ("ReduceMean", 18): ("so", "s"),
    ("ReduceMin", 18): ("so", "s"),
    ("ReduceProd", 18): ("so", "s"),
    ("ReduceSumSquare", 18): ("so", "s"),
    ("ScatterElements", 18): ("sss", "s"),
    ("ScatterND", 18): ("sss", "s"),
    ("Split", 18): ("so", "v"),
}


def table_rows(text):
    """The (op, since) pairs of the table in convert.def."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    macros = {}
    for m in re.finditer(r"#define (\w+)\(op, fn\)((?:[^\n]*\\\n)*[^\n]*)", text):
        macros[m.group(1)] = [int(v) for v in re.findall(r"R\(op, (\d+),", m.group(2))]
    body = re.sub(r"#define (?:[^\n]*\\\n)*[^\n]*", "", text)
    rows = []
    for m in re.finditer(r"\b(\w+)\(\"(\w+)\", ?(\w+)", body):
        kind, op, arg = m.groups()
        if kind == "R":
            rows.append((op, int(arg)))
        elif kind in macros:
            rows.extend((op, v) for v in macros[kind])
        else:
            sys.exit("gen_arity.py: unknown row macro %s" % kind)
    return rows


def options(params):
    letters = {"Single": "s", "Optional": "o", "Variadic": "v"}
    return "".join(letters[str(p.option).split(".")[-1]] for p in params)


def counts(opts, min_total):
    """(min, max) from option letters; |min_total| from the schema when known."""
    mx = VAR if opts.endswith("v") else len(opts)
    if min_total is None:
        last_single = max([i + 1 for i, c in enumerate(opts) if c == "s"] + [0])
        min_total = last_single + (1 if opts.endswith("v") else 0)
    return min_total, mx


def arity(op, since):
    if (op, since) in NEWER:
        ins, outs = NEWER[(op, since)]
        return counts(ins, None) + counts(outs, None) + (ins, outs)
    try:
        s = onnx.defs.get_schema(op, since)
    except onnx.defs.SchemaError:
        sys.exit("gen_arity.py: %s has no schema at opset %d" % (op, since))
    if s.since_version != since:
        sys.exit("gen_arity.py: %s-%d is not a version of the op (the schema at that opset is %s-%d); "
                 "add it to NEWER if it is newer than onnx %s" % (op, since, op, s.since_version,
                                                                 onnx.__version__))
    ins, outs = options(s.inputs), options(s.outputs)
    mi, xi = counts(ins, s.min_input)
    mo, xo = counts(outs, s.min_output)
    big = 2147483647
    assert xi == (VAR if s.max_input == big else s.max_input), (op, since)
    assert xo == (VAR if s.max_output == big else s.max_output), (op, since)
    for o in (ins, outs):
        assert re.fullmatch(r"[so]*v?", o), (op, since, o)
    return (mi, xi, mo, xo, ins, outs)


def main():
    with open(TABLE) as f:
        rows = table_rows(f.read())
    if rows != sorted(rows, key=lambda r: (r[0].encode(), r[1])):
        sys.exit("gen_arity.py: the table is not sorted")
    lines = [
        "/*",
        "** arity.def: input and output counts ONNX allows per (op, since_version)",
        "** row of the converter table.  Written by frontend/gen_arity.py from the",
        "** onnx %s operator schemas (newer versions from the ONNX operator" % onnx.__version__,
        "** documentation); do not edit.",
        "**",
        "**   MLC_ARITY(op, since, min_in, max_in, min_out, max_out, inputs, outputs)",
        "**",
        "** max -1: variadic.  inputs/outputs: one letter per formal parameter, s",
        "** single (required), o optional (an empty name omits it), v variadic (the",
        "** last parameter, repeated).",
        "*/",
    ]
    for op, since in rows:
        mi, xi, mo, xo, ins, outs = arity(op, since)
        lines.append('MLC_ARITY("%s", %d, %d, %d, %d, %d, "%s", "%s")' % (op, since, mi, xi, mo, xo,
                                                                      ins, outs))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("gen_arity.py: %d rows -> %s" % (len(rows), os.path.relpath(OUT)))


if __name__ == "__main__":
    main()
