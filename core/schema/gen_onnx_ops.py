#!/usr/bin/python3
"""Writes core/schema/onnx_ops.inc: the operator facts passcheck checks models against.

Run it with Debian's interpreter, which has python3-onnx (a pyenv `python3` on PATH usually does not):

    /usr/bin/python3 core/schema/gen_onnx_ops.py core/schema/onnx_ops.inc

Without an argument the table goes to stdout. The output depends only on the installed onnx package: no dates,
no paths, a fixed order. It is checked in; regenerate it rather than editing it.

What is extracted, per (domain, op_type, since_version):
  - deprecated flag;
  - input and output counts, derived from the formal parameters the way the ONNX checker reads them: a Single
    parameter is mandatory and so is every parameter before it (an Optional one that precedes a mandatory one
    must still be present, as an empty name); trailing Optional parameters raise only the maximum; a Variadic
    parameter (always the last one) makes the maximum unbounded and adds its minimum arity to the minimum;
  - attributes: name, AttributeProto type, required;
  - per formal parameter (inputs, then outputs): whether it is Single (required: an empty name is refused, as
    ONNX's checker does), and its type constraint: its group (parameters sharing a type parameter such as T
    share a group; a parameter with a concrete type string has a group of its own), whether its group binds
    one type (false when a parameter of the group is a heterogeneous variadic), the kinds of types it allows (tensor, sparse tensor, sequence, map,
    optional) and the tensor element types it allows, as a mask over TensorProto.DataType numbers.

The Python binding of onnx 1.12 does not expose a variadic parameter's minimum arity, so that one number is
taken from the schema's own min_input/min_output; every other count is computed here and cross-checked against
them.
"""

import re
import sys

import onnx
import onnx.defs

# AttributeProto.AttributeType value -> name of the pc_attr_type constant (passcheck.h).
ATTR_TYPE_NAMES = {
    1: "PC_ATTR_FLOAT",
    2: "PC_ATTR_INT",
    3: "PC_ATTR_STRING",
    4: "PC_ATTR_TENSOR",
    5: "PC_ATTR_GRAPH",
    6: "PC_ATTR_FLOATS",
    7: "PC_ATTR_INTS",
    8: "PC_ATTR_STRINGS",
    9: "PC_ATTR_TENSORS",
    10: "PC_ATTR_GRAPHS",
    11: "PC_ATTR_SPARSE_TENSOR",
    12: "PC_ATTR_SPARSE_TENSORS",
    13: "PC_ATTR_TYPE_PROTO",
    14: "PC_ATTR_TYPE_PROTOS",
}

# Short spellings of the domains in C identifiers.
DOMAIN_TAGS = {"": "onnx", "ai.onnx.ml": "ml", "ai.onnx.preview.training": "training"}

VARIADIC = 0xFFFF  # PC_SCHEMA_VARIADIC

# TensorProto.DataType numbers of the element type names in type strings (passcheck.h, PC_DTYPE_LIST).
ELEM_TYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8,
    "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15,
    "bfloat16": 16,
}
# Kind bits (schema.h, PC_KIND_*), by a type string's outermost constructor.
KIND_BITS = {"tensor": 1, "sparse_tensor": 2, "seq": 4, "map": 8, "optional": 16}
TYPE_RE = re.compile(r"([a-z_]+)\((.*)\)\Z")


def type_facts(types, where):
    """(kind mask, tensor element mask) of a parameter's allowed type strings."""
    kinds = elems = 0
    for t in sorted(types):
        m = TYPE_RE.match(t.replace(" ", ""))
        if not m or m.group(1) not in KIND_BITS:
            fail("%s: unknown type string %r" % (where, t))
        kinds |= KIND_BITS[m.group(1)]
        if m.group(1) == "tensor":
            if m.group(2) not in ELEM_TYPES:
                fail("%s: unknown element type in %r" % (where, t))
            elems |= 1 << ELEM_TYPES[m.group(2)]
    return kinds, elems


def formals(schema):
    """[(group, homogeneous, single, kinds, elems, type_str)] for the inputs, then the outputs. type_str is the
    name ONNX Runtime's kernel type string resolver keys the parameter by: its type parameter ("T"), or the
    parameter's own name when its type is concrete (Reshape's "shape")."""
    groups = {}
    out = []
    for what, params in (("input", schema.inputs), ("output", schema.outputs)):
        for p in params:
            where = "%s-%d %s %s" % (schema.name, schema.since_version, what, p.name)
            key = p.typeStr if p.typeStr in {c.type_param_str for c in schema.type_constraints} else None
            if key is None:
                group = len(groups)
                groups[("concrete", where)] = group
            else:
                group = groups.setdefault(key, len(groups))
            if group >= 16:
                fail("%s: more than 16 type groups (verify.c, MAX_TYPE_GROUPS)" % where)
            option = onnx.defs.OpSchema.FormalParameterOption
            homogeneous = bool(p.isHomogeneous) if p.option == option.Variadic else True
            kinds, elems = type_facts(p.types, where)
            if not NAME_RE.match(key or p.name):
                fail("%s: type string %r is not an identifier" % (where, key or p.name))
            out.append((group, homogeneous, p.option == option.Single, kinds, elems, key or p.name))
    # a group with one heterogeneous variadic parameter (Loop's V) binds no single type: none of its
    # parameters is compared with the others, so the flag is the group's
    mixed = {f[0] for f in out if not f[1]}
    return [(g, g not in mixed, single, kinds, elems, ts) for g, _h, single, kinds, elems, ts in out]
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def fail(msg):
    sys.stderr.write("gen_onnx_ops.py: %s\n" % msg)
    sys.exit(1)


def arity(schema, params, onnx_min, onnx_max, what):
    """(min, max) count of inputs or outputs; max is VARIADIC when unbounded."""
    opt = onnx.defs.OpSchema.FormalParameterOption
    lo = hi = 0
    variadic = False
    where = "%s-%d %s" % (schema.name, schema.since_version, what)
    for i, p in enumerate(params):
        if p.option == opt.Single:
            hi += 1
            lo = hi
        elif p.option == opt.Optional:
            hi += 1
        elif p.option == opt.Variadic:
            if i != len(params) - 1:
                fail("%s: variadic parameter is not the last one" % where)
            lo = hi  # earlier optional parameters become positional placeholders
            variadic = True
        else:
            fail("%s: unknown parameter option %r" % (schema.name, p.option))
    if variadic:
        min_arity = onnx_min - lo
        if min_arity < 0:
            fail("%s: minimum %d below the fixed parameters' %d" % (where, onnx_min, lo))
        lo += min_arity
        hi = VARIADIC
    elif (lo, hi) != (onnx_min, onnx_max):
        fail("%s: computed arity (%d, %d) but onnx says (%d, %d)" % (where, lo, hi, onnx_min, onnx_max))
    if lo >= VARIADIC or (hi != VARIADIC and hi >= VARIADIC):
        fail("%s: count does not fit uint16_t" % where)
    return lo, hi


def c_count(n):
    return "PC_SCHEMA_VARIADIC" if n == VARIADIC else str(n)


def c_bool(b):
    return "true" if b else "false"


def main(argv):
    if len(argv) > 2:
        fail("usage: gen_onnx_ops.py [output.inc]")

    schemas = onnx.defs.get_all_schemas_with_history()
    rows = []
    for s in schemas:
        if s.domain not in DOMAIN_TAGS:
            fail("unexpected domain %r (op %s); add it to DOMAIN_TAGS and to schema.c's domain table"
                 % (s.domain, s.name))
        if not NAME_RE.match(s.name):
            fail("op name %r is not a plain identifier" % s.name)
        attrs = []
        for name in sorted(s.attributes):
            a = s.attributes[name]
            t = int(a.type)
            if t not in ATTR_TYPE_NAMES:
                fail("%s: attribute %s has unknown type %d" % (s.name, name, t))
            if not name.isascii() or '"' in name or "\\" in name:
                fail("%s: attribute name %r needs escaping" % (s.name, name))
            attrs.append((name, ATTR_TYPE_NAMES[t], bool(a.required)))
        ins = arity(s, s.inputs, s.min_input, s.max_input, "input")
        outs = arity(s, s.outputs, s.min_output, s.max_output, "output")
        rows.append((s.domain, s.name, int(s.since_version), bool(s.deprecated), ins, outs, attrs,
                     (len(s.inputs), len(s.outputs), formals(s))))

    # Byte order of ASCII strings == strcmp order, which pc_schema_check_table checks.
    rows.sort(key=lambda r: (r[0].encode(), r[1].encode(), r[2]))
    for a, b in zip(rows, rows[1:]):
        if a[:3] == b[:3]:
            fail("duplicate schema %r %s %d" % a[:3])

    max_opset = {}
    for r in rows:
        max_opset[r[0]] = max(max_opset.get(r[0], 0), r[2])

    out = []
    w = out.append
    w("/* onnx_ops.inc: ONNX operator schemas as data. GENERATED FILE, DO NOT EDIT.")
    w(" *")
    w(" * Generated by core/schema/gen_onnx_ops.py from onnx %s (python3-onnx), with:" % onnx.__version__)
    w(" *     /usr/bin/python3 core/schema/gen_onnx_ops.py core/schema/onnx_ops.inc")
    w(" * Newest since_version per domain in this data: %s." %
      ", ".join("%s %d" % (d or '"" (ai.onnx)', max_opset[d]) for d in sorted(max_opset)))
    w(" *")
    w(" * Included by schema.c only. pc_onnx_ops is sorted by (domain, op_type, since_version), strings in")
    w(" * strcmp order, so an op's versions are adjacent; each op's attributes are sorted by name. */")
    w("")
    w('#define PC_ONNX_OPS_SOURCE "onnx %s"' % onnx.__version__)
    w("")

    idents = set()
    refs = []
    for domain, op, ver, _dep, _ins, _outs, attrs, _formals in rows:
        if not attrs:
            refs.append("NULL")
            continue
        ident = "pc_sattrs_%s_%s_%d" % (DOMAIN_TAGS[domain], op, ver)
        if ident in idents:
            fail("identifier clash: %s" % ident)
        idents.add(ident)
        refs.append(ident)
        w("static const pc_attr_schema %s[] = {" % ident)
        for name, tname, req in attrs:
            w('    {"%s", %s, %s},' % (name, tname, c_bool(req)))
        w("};")
    frefs = []
    for domain, op, ver, _dep, _ins, _outs, _attrs, (_n_in, _n_out, fs) in rows:
        if not fs:
            frefs.append("NULL")
            continue
        ident = "pc_sformals_%s_%s_%d" % (DOMAIN_TAGS[domain], op, ver)
        frefs.append(ident)
        w("static const pc_formal_schema %s[] = {" % ident)
        for group, homogeneous, single, kinds, elems, type_str in fs:
            w('    {%d, %s, %s, 0x%02x, 0x%05x, "%s"},' % (group, c_bool(homogeneous), c_bool(single), kinds, elems,
                                                       type_str))
        w("};")
    w("")
    w("/* domain, op_type, since_version, deprecated, min/max inputs, min/max outputs, n_attrs, attrs,")
    w(" * formal inputs, formal outputs, formals (inputs then outputs: group, homogeneous, single, kinds,")
    w(" * elements, ORT's kernel type string) */")
    w("static const pc_op_schema pc_onnx_ops[] = {")
    for (domain, op, ver, dep, ins, outs, attrs, (n_in, n_out, _fs)), ref, fref in zip(rows, refs, frefs):
        fields = ['"%s"' % domain, '"%s"' % op, str(ver), c_bool(dep), c_count(ins[0]), c_count(ins[1]),
                  c_count(outs[0]), c_count(outs[1]), str(len(attrs)), ref, str(n_in), str(n_out), fref]
        w("    {%s}," % ", ".join(fields))
    w("};")
    text = "\n".join(out) + "\n"

    if len(argv) == 2:
        with open(argv[1], "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
