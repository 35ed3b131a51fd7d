#!/usr/bin/env python3
"""In-house mutation testing for passcheck's core (ISSUE 14). Python 3 standard library only.

Generates single-point source mutants of C files with a small tokenizer, builds each in a private copy of the
tree (never in the repository), runs a reduced property suite and classifies the mutant. See bench/README.md,
section "Mutation testing", for how to run it and for measured results.

  python3 bench/mutate/mutate.py --self-test
  python3 bench/mutate/mutate.py list --files 'core/passes/eliminate_cast.c'
  python3 bench/mutate/mutate.py run  --files 'core/passes/eliminate_cast.c' --report out.md
"""
import argparse
import fcntl
import signal
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FILES = ["core/passes/*.c", "core/transpose/*.c", "core/ep/*.c", "core/eval/*.c"]
# the goal is the default suite's kill rate: the reduced suite's survivors are judged again by the whole
# default run (30,000 cases; case i depends only on (seed, i), so the reduced run is its prefix and a mutant it
# kills the default run kills too). The reduced command is the default one with --cases, so they cannot drift.
FULL_SUITE = "{passcheck} suite --jobs 2 --no-shrink --quiet --seed 1 --out {out}"
DEFAULT_SUITE = FULL_SUITE.replace(" suite ", " suite --cases 3000 ", 1)
SANITY_FAULT = "transpose-skip-cancel"
# --unit-tests: the ctest unit tests that judge each folder's code directly (malformed nodes, parser errors)
UNIT_TESTS = {
    "core/ep/": r"^(test_ep.*|test_partition.*|test_layer.*|test_oracles_capability|test_oracles_layer_rules)$",
    "core/eval/": r"^test_eval.*$",
    "core/passes/": r"^test_passes.*$",
    "core/transpose/": r"^test_transpose.*$",
}

# ----------------------------------------------------------------------------------------------------------
# Tokenizer


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line")

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line

    def __repr__(self):
        return "Tok(%s,%r,%d)" % (self.kind, self.text, self.line)


PUNCTS = sorted(
    """>>= <<= ... -> ++ -- << >> <= >= == != && || += -= *= /= %= &= ^= |= ## [ ] ( ) { } . & * + - ~ ! / % < >
    ^ | ? : ; = , #""".split(),
    key=len,
    reverse=True,
)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUM_RE = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.)[uUlLfF]*")


def tokenize(src):
    """Tokens of C source `src` (a str). Comments, string and char literals are skipped (kind 'str'/'chr' kept
    as tokens so neighbours are right); preprocessor lines, with their continuation lines (so every macro
    definition), are dropped entirely."""
    toks = []
    i, n, line = 0, len(src), 1
    at_line_start = True
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "\\" and i + 1 < n and src[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += src.count("\n", i, j)
            i = j
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "#" and at_line_start:  # preprocessor directive: skip to the end of the logical line
            j = i
            while j < n:
                if src.startswith("/*", j):  # a comment may span lines inside a directive
                    k = src.find("*/", j + 2)
                    k = n if k < 0 else k + 2
                    line += src.count("\n", j, k)
                    j = k
                    continue
                if src[j] == "\\" and j + 1 < n and src[j + 1] == "\n":
                    j += 2
                    line += 1
                    continue
                if src[j] == "\n":
                    break
                j += 1
            i = j
            continue
        at_line_start = False
        if c == '"' or c == "'":
            j = i + 1
            while j < n and src[j] != c:
                if src[j] == "\\":
                    j += 1
                j += 1
            j = min(j + 1, n)
            toks.append(Tok("str" if c == '"' else "chr", src[i:j], i, j, line))
            i = j
            continue
        m = IDENT_RE.match(src, i)
        if m:
            # string prefixes (u8"..", L'x') are handled as an ident followed by a literal: harmless here
            toks.append(Tok("id", m.group(0), i, m.end(), line))
            i = m.end()
            continue
        if c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = NUM_RE.match(src, i)
            j = m.end() if m and m.end() > i else i + 1
            toks.append(Tok("num", src[i:j], i, j, line))
            i = j
            continue
        for p in PUNCTS:
            if src.startswith(p, i):
                toks.append(Tok("op", p, i, i + len(p), line))
                i += len(p)
                break
        else:
            toks.append(Tok("op", c, i, i + 1, line))
            i += 1
    return toks


# ----------------------------------------------------------------------------------------------------------
# Mutant generation

ROR = {  # subsuming alternatives (Kaminski et al.): two per operator; 'true'/'false' need the AST
    "<": ["<=", "!="],
    "<=": ["<", "=="],
    ">": [">=", "!="],
    ">=": [">", "=="],
    "==": ["<=", ">="],
    "!=": ["<", ">"],
}
AOR = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "%": ["*"], "+=": ["-="], "-=": ["+="]}
LCR = {"&&": ["||"], "||": ["&&"]}
BOOL = {"true": "false", "false": "true"}
KEYWORDS_BEFORE_UNARY = {"return", "case", "sizeof", "else", "do"}
CONTROL = {"if", "while", "for", "switch"}


class Mutant:
    def __init__(self, file, offset, original, replacement, op, line):
        self.file, self.offset, self.original, self.replacement = file, offset, original, replacement
        self.op, self.line = op, line
        self.rule = None  # set when an equivalence rule (RULES) proves the mutant equivalent: it is not run
        h = hashlib.sha1("\0".join([file, str(offset), original, replacement]).encode())
        self.id = h.hexdigest()[:16]

    def apply(self, text):
        assert text[self.offset : self.offset + len(self.original)] == self.original, (self.id, self.file)
        return text[: self.offset] + self.replacement + text[self.offset + len(self.original) :]

    def describe(self, maxlen=60):
        o, r = self.original, self.replacement
        if len(o) > maxlen:
            o, r = o[: maxlen - 3] + "...", r[: maxlen - 3] + "..."
        return "%s -> %s" % (" ".join(o.split()), " ".join(r.split()))


def _match_parens(toks):
    """Index of the matching bracket for every ( [ { and ) ] }."""
    match, stack = {}, []
    pairs = {")": "(", "]": "[", "}": "{"}
    for k, t in enumerate(toks):
        if t.kind != "op":
            continue
        if t.text in "([{":
            stack.append(k)
        elif t.text in pairs and stack:
            o = stack.pop()
            match[o], match[k] = k, o
    return match


def _in_function_mask(toks, match):
    """True for tokens inside a function body: a top-level { whose previous token is ')' (a definition)."""
    mask = [False] * len(toks)
    k = 0
    depth = 0
    while k < len(toks):
        t = toks[k]
        if t.kind == "op" and t.text == "{" and depth == 0 and k > 0 and toks[k - 1].text == ")" and k in match:
            end = match[k]
            for q in range(k + 1, end):
                mask[q] = True
            k = end + 1
            continue
        if t.kind == "op" and t.text in "({[":
            depth += 1
        elif t.kind == "op" and t.text in ")}]":
            depth = max(0, depth - 1)
        k += 1
    return mask


# Equivalence rules: mutants that no test can kill, recognized from the tokens alone. Each rule is a proof
# sketch; the report names the rule for every mutant it classifies.
RULES = {
    "R1": "pc_status is an enum whose first constant PC_OK is 0 and whose others are positive (core/passcheck.h, "
    "PC_STATUS_LIST); a status only holds those constants, so `x != PC_OK` is `x > PC_OK` and `x == PC_OK` is "
    "`x <= PC_OK`",
    "R2": "a counted loop `for (U i = 0; i < n; i++)` with i of an unsigned type, neither i nor n written in the "
    "body (no assignment, increment or address-of; n a plain local or a field of a local struct value): i takes "
    "0, 1, ... and stops at the first i == n under either test, so `i < n` is `i != n`",
}
UNSIGNED = {"size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "unsigned"}
WRITES = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}


def _rule_status(toks, k, repl):
    """R1: `!=` -> `>` or `==` -> `<=` where one operand is the single token PC_OK."""
    if (toks[k].text, repl) not in (("!=", ">"), ("==", "<=")):
        return None
    prev_ok = k > 0 and toks[k - 1].text == "PC_OK"
    next_ok = k + 1 < len(toks) and toks[k + 1].text == "PC_OK" and (k + 2 >= len(toks) or toks[k + 2].text in
                                                                    (")", ";", "&&", "||", "?", ","))
    return "R1" if prev_ok or next_ok else None


def _written(toks, lo, hi, name, fieldless):
    """True when tokens [lo, hi) may write `name`: assigned, incremented, or its address taken."""
    for q in range(lo, hi):
        if toks[q].text != name or toks[q].kind != "id":
            continue
        if q > lo and toks[q - 1].text in ("&", "++", "--"):
            return True
        r = q + 1
        if not fieldless:  # `s.n = ...` writes the bound `s.n`; skip a `.f` chain to the operator
            while r + 1 < hi and toks[r].text == "." and toks[r + 1].kind == "id":
                r += 2
        if r < hi and toks[r].text in WRITES:
            return True
    return False


def _rule_counted_loop(toks, k, repl, match):
    """R2: `i < n` -> `i != n` in the header `for (U i = 0; i < n; i++)` (see RULES)."""
    if toks[k].text != "<" or repl != "!=" or k < 8:
        return None
    # for ( U i = 0 ; i < n ; i ++ )  — the comparison is the whole condition
    i_tok, semi = toks[k - 1], toks[k - 2]
    if i_tok.kind != "id" or semi.text != ";":
        return None
    init = k - 6  # U i = 0 ;
    if not (toks[init].text in UNSIGNED and toks[init + 1].text == i_tok.text and toks[init + 2].text == "=" and
            toks[init + 3].text == "0" and toks[init + 4].text == ";" and init + 5 == k - 1):
        return None
    if not (toks[init - 1].text == "(" and toks[init - 2].text == "for" and (init - 1) in match):
        return None
    close = match[init - 1]
    # the bound: `n` or `s.f`, then `; i ++ )` or `; ++ i )`
    q, bound = k + 1, []
    while q < close and toks[q].text != ";":
        bound.append(toks[q])
        q += 1
    names = [t.text for t in bound]
    plain = len(names) == 1 and bound[0].kind == "id"
    field = len(names) == 3 and bound[0].kind == "id" and names[1] == "." and bound[2].kind == "id"
    if not (plain or field):
        return None
    step = [t.text for t in toks[q + 1 : close]]
    if step not in ([i_tok.text, "++"], ["++", i_tok.text]):
        return None
    body_lo = close + 1
    if body_lo >= len(toks):
        return None
    body_hi = match.get(body_lo, body_lo) + 1 if toks[body_lo].text == "{" else None
    if body_hi is None:  # a single-statement body: up to its ';' at this depth
        body_hi = body_lo
        while body_hi < len(toks) and toks[body_hi].text != ";":
            body_hi = match.get(body_hi, body_hi) + 1 if toks[body_hi].text in "([{" else body_hi + 1
        body_hi += 1
    if _written(toks, body_lo, body_hi, i_tok.text, True) or _written(toks, body_lo, body_hi, names[0], False):
        return None
    return "R2"


def _is_operand_end(t):
    return t.kind in ("id", "num", "str", "chr") and t.text not in KEYWORDS_BEFORE_UNARY or t.text in (")", "]")


def generate(path_rel, text, line_ranges=None):
    toks = tokenize(text)
    match = _match_parens(toks)
    infn = _in_function_mask(toks, match)
    out = []

    def add(tok_start, tok_end_excl, replacement, op):
        s, e = toks[tok_start].start, toks[tok_end_excl - 1].end
        line = toks[tok_start].line
        if line_ranges and not any(a <= line <= b for a, b in line_ranges):
            return
        m = Mutant(path_rel, s, text[s:e], replacement, op, line)
        if op == "ROR":
            m.rule = _rule_status(toks, tok_start, replacement) or \
                _rule_counted_loop(toks, tok_start, replacement, match)
        out.append(m)

    # paren depth of each token (for statement starts outside for(...) headers)
    pdepth, d = [], 0
    for t in toks:
        if t.kind == "op" and t.text in "([":
            pdepth.append(d)
            d += 1
        elif t.kind == "op" and t.text in ")]":
            d = max(0, d - 1)
            pdepth.append(d)
        else:
            pdepth.append(d)

    for k, t in enumerate(toks):
        if not infn[k]:
            continue
        prev = toks[k - 1] if k > 0 else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if t.kind == "op":
            if t.text in ROR:
                for r in ROR[t.text]:
                    add(k, k + 1, r, "ROR")
            elif t.text in LCR:
                for r in LCR[t.text]:
                    add(k, k + 1, r, "LCR")
            elif t.text in AOR and prev is not None and _is_operand_end(prev):
                # binary only; clang-format spaces binary operators on both sides, and a pointer declarator
                # ('pc_node *n') or a unary minus is attached to its operand
                spaced = text[t.start - 1 : t.start] in (" ", "\n") and text[t.end : t.end + 1] in (" ", "\n")
                if t.text in ("+=", "-=") or spaced:
                    for r in AOR[t.text]:
                        add(k, k + 1, r, "AOR")
            elif t.text == "(" and prev is not None and prev.text in ("if", "while") and k in match:
                end = match[k]
                if end > k + 1:
                    inner = text[toks[k + 1].start : toks[end - 1].end]
                    add(k + 1, end, "!(" + inner + ")", "NEG")
        elif t.kind == "num":
            if re.fullmatch(r"[0-9]+[uUlL]*", t.text):
                digits = re.match(r"[0-9]+", t.text).group(0)
                suffix = t.text[len(digits) :]
                v = int(digits)
                if len(digits) > 1 and digits.startswith("0"):
                    continue  # octal: leave alone
                if prev is not None and prev.text == "[" and nxt is not None and nxt.text == "]" and k >= 2 and \
                        toks[k - 2].kind == "id" and k >= 3 and toks[k - 3].kind == "id":
                    continue  # an array size in a declaration ('double vals[2]'): only changes storage
                if v == 0:
                    add(k, k + 1, "1" + suffix, "CRP")
                elif v == 1:
                    add(k, k + 1, "0" + suffix, "CRP")
                    add(k, k + 1, "2" + suffix, "CRP")
                else:
                    add(k, k + 1, str(v + 1) + suffix, "CRP")
                    add(k, k + 1, str(v - 1) + suffix, "CRP")
        elif t.kind == "id":
            if t.text in BOOL:
                add(k, k + 1, BOOL[t.text], "CRP")
            # statement deletion: `continue;`, `break;`, or a call statement `f(...);` at a statement start
            starts_stmt = prev is not None and pdepth[k] == _block_pdepth(toks, k, pdepth) and (
                prev.text in ("{", "}", ";", "else", ":")
                or (prev.text == ")" and (k - 1) in match and match[k - 1] > 0 and toks[match[k - 1] - 1].text in CONTROL)
            )
            if not starts_stmt:
                continue
            if prev.text == ":" and not _is_case_colon(toks, k - 1):
                continue
            if t.text in ("continue", "break") and nxt is not None and nxt.text == ";":
                add(k, k + 2, ";", "SDL")
            elif nxt is not None and nxt.text == "(" and t.text not in CONTROL and t.text != "return" and \
                    (k + 1) in match:
                close = match[k + 1]
                if close + 1 < len(toks) and toks[close + 1].text == ";":
                    add(k, close + 2, ";", "SDL")
    return out


def _block_pdepth(toks, k, pdepth):
    # a statement start is never inside parentheses of the enclosing statement (for-headers, calls)
    return 0 if pdepth[k] == 0 else -1


def _is_case_colon(toks, c):
    """True when the ':' at index c ends a `case X:` or `default:` label (not a ?: or a bit-field)."""
    q = c - 1
    depth = 0
    while q >= 0:
        t = toks[q].text
        if t in (")", "]"):
            depth += 1
        elif t in ("(", "["):
            depth -= 1
        elif depth == 0 and t in ("case", "default"):
            return True
        elif depth == 0 and t in (";", "{", "}", "?"):
            return False
        q -= 1
    return False


def parse_ranges(spec):
    """'10-20,35' -> [(10,20),(35,35)]"""
    if not spec:
        return None
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.append((int(a), int(b or a)))
    return out


def head_files():
    """Files of HEAD's tree: mutants are made from the committed tree (what `git archive HEAD` copies), never
    from the working tree another change may be editing."""
    out = sh(["git", "-C", REPO, "ls-tree", "-r", "--name-only", "HEAD"]).stdout.decode()
    return out.split("\n")


def head_text(rel):
    r = sh(["git", "-C", REPO, "show", "HEAD:" + rel])
    if r.returncode:
        sys.exit("cannot read %s at HEAD" % rel)
    return r.stdout.decode("utf-8")


def select_mutants(args):
    files = []
    tree = head_files()
    for pat in args.files or DEFAULT_FILES:
        files += [f for f in tree if fnmatch.fnmatch(f, pat) and f not in files]
    ranges = parse_ranges(args.line_ranges)
    muts = []
    for f in files:
        muts += generate(f, head_text(f), ranges)
    if args.operators:
        ops = set(args.operators.split(","))
        muts = [m for m in muts if m.op in ops]
    if args.sample:
        # the N mutants whose ids hash lowest under the seed: an edit to one file changes only that file's
        # mutants in the sample (sampling by list position shifted every later file's picks)
        rank = {m.id: hashlib.sha1(("%d:%s" % (args.seed, m.id)).encode()).hexdigest() for m in muts}
        keep = set(sorted(rank, key=rank.get)[: args.sample])
        muts = [m for m in muts if m.id in keep]
    if args.limit:
        muts = muts[: args.limit]
    return muts


# ----------------------------------------------------------------------------------------------------------
# Running


def sh(cmd, cwd=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout)


class Runner:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work_dir)
        self.src = os.path.join(self.work, "src")
        self.build = os.path.join(self.work, "build")
        # a sanitizer costs the suite 4-8x (every forked case checks for leaks at exit; ASan's shadow memory
        # makes each fork dear), so it judges only the mutants the plain build's suite lets survive, in its own
        # build directory
        self.san_build = os.path.join(self.work, "build-" + args.sanitize) if args.sanitize != "none" else None
        self.cache_path = os.path.abspath(args.cache or os.path.join(self.work, "cache.json"))
        self.cache = {}
        if os.path.exists(self.cache_path):
            with open(self.cache_path) as fh:
                self.cache = json.load(fh)
        head = sh(["git", "-C", REPO, "rev-parse", "HEAD", "HEAD^{tree}"]).stdout.decode().split()
        self.head, self.tree = head[0], head[1]
        self.cmd = args.suite_cmd or DEFAULT_SUITE
        self.full_cmd = None if args.no_full_suite or args.suite_cmd else FULL_SUITE

    def log(self, *a):
        print(*a, file=sys.stderr, flush=True)

    def prepare(self, muts):
        """A private copy of HEAD's tree (git archive), rebuilt when HEAD moved; never the working tree."""
        os.makedirs(self.work, exist_ok=True)
        self.lock = open(os.path.join(self.work, "lock"), "w")
        try:  # one run per work directory: two runs would build each other's mutants
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit("another mutate.py run holds %s; wait for it or use another --work-dir" % self.work)
        stamp = os.path.join(self.src, ".mutate-head")
        have = open(stamp).read().strip() if os.path.exists(stamp) else None
        if have != self.head:
            self.log("extracting HEAD %s into %s" % (self.head[:10], self.src))
            shutil.rmtree(self.src, ignore_errors=True)
            os.makedirs(self.src)
            arch = subprocess.Popen(["git", "-C", REPO, "archive", "HEAD"], stdout=subprocess.PIPE)
            # -m: the files get the extraction time, not the commit's, so make rebuilds what an earlier HEAD's
            # objects (newer than an old commit's time) would otherwise pass for up to date
            subprocess.run(["tar", "-x", "-m", "-C", self.src], stdin=arch.stdout, check=True)
            arch.wait()
            with open(stamp, "w") as fh:
                fh.write(self.head + "\n")
        tree = head_files()
        mutable = {f for f in tree for pat in DEFAULT_FILES if fnmatch.fnmatch(f, pat)}
        for rel in sorted(mutable | {m.file for m in muts}):  # undo a mutant left behind by a killed run
            want = head_text(rel)
            path = os.path.join(self.src, rel)
            if open(path, encoding="utf-8").read() != want:
                self.log("restoring %s (left mutated by an interrupted run)" % rel)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(want)
        for build in filter(None, (self.build, self.san_build)):
            if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
                cfg = ["cmake", "-S", self.src, "-B", build, "-DCMAKE_BUILD_TYPE=Release"]
                if build == self.san_build:
                    flag = "-fsanitize=" + self.args.sanitize
                    cfg += ["-DCMAKE_C_FLAGS=" + flag, "-DCMAKE_EXE_LINKER_FLAGS=" + flag]
                r = sh(cfg)
                if r.returncode:
                    sys.exit("configure failed:\n" + r.stdout.decode(errors="replace")[-3000:])
            ok, out = self.compile(build)
            if not ok:
                sys.exit("the unmutated tree does not build:\n" + out[-3000:])

    def compile(self, build=None):
        r = sh(["cmake", "--build", build or self.build, "--target", "passcheck", "-j%d" % self.args.build_jobs])
        return r.returncode == 0, r.stdout.decode(errors="replace")

    def object_hash(self, rel):
        # the object file of `rel` (CMake: build/CMakeFiles/<lib>.dir/<rel>.o)
        for dp, _, fs in os.walk(os.path.join(self.build, "CMakeFiles")):
            for f in fs:
                if f == os.path.basename(rel) + ".o" and dp.endswith(os.path.dirname(rel)):
                    with open(os.path.join(dp, f), "rb") as fh:
                        return hashlib.sha1(fh.read()).hexdigest()
        return None

    def suite(self, extra="", build=None, timeout=None, cmd=None):
        out = tempfile.mkdtemp(prefix="suite-", dir=self.work)
        cmd = (cmd or self.cmd).format(passcheck=os.path.join(build or self.build, "passcheck"), out=out) + extra
        # unsymbolized reports: symbolizing thousands of forked cases' reports takes minutes
        env = dict(os.environ, LSAN_OPTIONS="symbolize=0", ASAN_OPTIONS="symbolize=0:detect_leaks=1")
        t0 = time.time()
        # the suite runs in a session of its own, and a timeout kills that whole process group: subprocess.run
        # would kill only the shell, leaving the suite and its forked cases running (a mutant that loops
        # kept two cores busy for an hour after the 7420362 sample)
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env)
        try:
            out, _ = p.communicate(timeout=timeout or self.timeout)
            rc, text = p.returncode, out.decode(errors="replace")
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, _ = p.communicate()
            rc, text = "timeout", (out or b"").decode(errors="replace")
        shutil.rmtree(out, ignore_errors=True)
        return rc, text, time.time() - t0

    def key(self, m, full=True, sanitize=None):
        # "new-signatures+coverage": killed means a failure signature the clean run lacks, or a rewrite-coverage
        # table that differs from the clean run's (older caches judged exit 1, then new signatures only)
        # a sanitizer setting other than none joins the key: the same mutant may die only under it
        parts = [m.id, self.cmd, self.tree, "new-signatures+coverage"]
        sanitize = self.args.sanitize if sanitize is None else sanitize
        if sanitize != "none":
            parts.append("sanitize=%s-survivors" % sanitize)
        if self.args.unit_tests:
            parts.append("unit-tests")
        if self.full_cmd and full:
            parts.append("full-suite-survivors")
        return hashlib.sha1("\0".join(parts).encode()).hexdigest()

    def save_cache(self):
        tmp = self.cache_path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.cache, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.cache_path)

    @staticmethod
    def coverage(text):
        # the summary's rewrite-coverage rows: "pass/kind  fired  near-miss  [<< ...]"
        return {m.group(1): (int(m.group(2)), int(m.group(3)))
                for m in re.finditer(r"^([a-z0-9_]+/[a-z0-9_]+)\s+(\d+)\s+(\d+)", text, re.M)}

    @staticmethod
    def signatures(text):
        # the summary's failure lines: "  property@pass/kind: N cases, first case ..."
        return set(re.findall(r"^\s+([a-z][a-z-]*@[A-Za-z0-9_/.-]+): \d+ cases?,", text, re.M))

    def baseline(self):
        self.timeout = self.args.timeout or 600
        rc, text, dt = self.suite()
        self.base_sigs = self.signatures(text)
        self.base_cov = self.coverage(text)
        if not self.base_cov:
            sys.exit("the clean run printed no rewrite-coverage table (is --stats or --quiet without the table?)")
        self.log("clean run: exit %s in %.1f s; known findings: %s" % (rc, dt, " ".join(sorted(self.base_sigs))
                                                                        or "none"))
        # a real finding the suite already reports (exit 1) is the baseline, not a reason to stop: a mutant is
        # killed by a signature the clean run does not have (as tests/suite/run_faults.sh judges faults)
        if rc not in (0, 1) or (rc == 1) != bool(self.base_sigs):
            sys.exit("the clean run (no mutant) could not judge; it exited %s:\n%s" % (rc, text[-3000:]))
        if not self.args.timeout:
            self.timeout = max(60.0, 10 * dt)
        rc, text, dt = self.suite(" --inject " + self.args.sanity_fault)
        self.log("sanity run (--inject %s): exit %s in %.1f s" % (self.args.sanity_fault, rc, dt))
        if rc != 1 or not (self.signatures(text) - self.base_sigs):
            sys.exit("the sanity run with a planted fault must be killed (a new signature); it exited %s" % rc)
        if self.full_cmd:  # the default run's own known findings and coverage table, judged the same way
            rc, text, dt = self.suite(cmd=self.full_cmd)
            self.full_sigs, self.full_cov = self.signatures(text), self.coverage(text)
            self.log("clean default run: exit %s in %.1f s; known findings: %s" %
                     (rc, dt, " ".join(sorted(self.full_sigs)) or "none"))
            if rc not in (0, 1) or (rc == 1) != bool(self.full_sigs) or not self.full_cov:
                sys.exit("the clean default run could not judge; it exited %s:\n%s" % (rc, text[-3000:]))
            self.full_timeout = max(120.0, 10 * dt)
        if self.san_build:  # the unmutated tree must be clean under the sanitizer too, or it judges nothing
            self.san_timeout = self.timeout
            rc, text, dt = self.suite(build=self.san_build, timeout=self.san_timeout)
            self.log("sanitizer (%s) run: exit %s in %.1f s" % (self.args.sanitize, rc, dt))
            if rc not in (0, 1) or self.signatures(text) != self.base_sigs:
                sys.exit("the clean sanitizer run differs from the plain one (exit %s):\n%s" % (rc, text[-3000:]))
            if not self.args.timeout:
                self.san_timeout = max(60.0, 10 * dt)

    def run_one(self, m, plain=None):
        """plain: the verdict of a run without the sanitizer (cache), which the sanitizer stage starts from."""
        path = os.path.join(self.src, m.file)
        with open(path, encoding="utf-8") as fh:
            orig = fh.read()
        base_obj = self.object_hash(m.file)
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(m.apply(orig))
            ok, out = self.compile()
            if not ok:
                err = [ln for ln in out.splitlines() if "error" in ln][:2]
                return {"status": "stillborn", "detail": " | ".join(err)[:300]}
            if base_obj is not None and self.object_hash(m.file) == base_obj:
                # trivial compiler equivalence: the same object code as the original
                return {"status": "equivalent", "detail": "TCE: identical object file"}
            res = plain or self.judge(*self.suite())
            if res["status"] == "survived" and self.full_cmd and not plain:
                full = self.judge(*self.suite(cmd=self.full_cmd, timeout=self.full_timeout),
                                  base=(self.full_sigs, self.full_cov))
                if full["status"] != "survived":
                    full["detail"] = "default suite: " + full.get("detail", "")
                    return full
            if res["status"] == "survived" and self.san_build:
                ok, out = self.compile(self.san_build)
                if not ok:
                    return {"status": "error", "detail": "the sanitizer build failed"}
                san = self.judge(*self.suite(build=self.san_build, timeout=self.san_timeout))
                if san["status"] != "survived":
                    san["detail"] = "-fsanitize=%s build: %s" % (self.args.sanitize, san.get("detail", ""))
                    return san
            if res["status"] == "survived" and self.args.unit_tests and not plain:
                failed = self.unit_tests(m.file)
                if failed:  # killed, but not by the default suite: the report keeps the two rates apart
                    return {"status": "killed", "stage": "unit", "detail": "unit tests: " + failed,
                            "seconds": res.get("seconds")}
            return res
        finally:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(orig)

    def unit_names(self, rel):
        """The unit tests (ctest names, which are their targets' names) of rel's folder."""
        pat = next((p for d, p in UNIT_TESTS.items() if rel.startswith(d)), None)
        if pat is None:
            return []
        if not hasattr(self, "all_tests"):
            out = sh(["ctest", "--test-dir", self.build, "-N"]).stdout.decode(errors="replace")
            self.all_tests = re.findall(r"Test +#\d+: (\S+)", out)
        return [t for t in self.all_tests if re.match(pat, t)]

    def unit_tests(self, rel):
        """Builds and runs rel's folder's unit tests on the mutated tree; the names that failed ('' if none).
        The first call per folder runs them on the clean tree too: a test failing there judges nothing."""
        names = self.unit_names(rel)
        if not names:
            return ""
        r = sh(["cmake", "--build", self.build, "-j%d" % self.args.build_jobs, "--target"] + names)
        if r.returncode:
            return "build failed"
        regex = "^(%s)$" % "|".join(re.escape(n) for n in names)
        r = sh(["ctest", "--test-dir", self.build, "-R", regex, "--timeout", "300"], timeout=1800)
        text = r.stdout.decode(errors="replace")
        return " ".join(re.findall(r"\d+ - (\S+) \(", text)) or ("ctest exit %d" % r.returncode if r.returncode
                                                                    else "")

    def unit_baseline(self, muts):
        for folder in sorted({d for m in muts for d in UNIT_TESTS if m.file.startswith(d)}):
            rel = next(m.file for m in muts if m.file.startswith(folder))
            failed = self.unit_tests(rel)
            self.log("unit tests of %s on the clean tree: %s" % (folder, "fail: " + failed if failed else "pass"))
            if failed:
                sys.exit("the unit tests of %s fail on the unmutated tree: %s" % (folder, failed))

    def judge(self, rc, text, dt, base=None):
        base_sigs, base_cov = base or (self.base_sigs, self.base_cov)
        new = sorted(self.signatures(text) - base_sigs)
        if rc == 1 and new:
            return {"status": "killed", "detail": "exit 1 " + new[0], "seconds": round(dt, 1)}
        if rc == "timeout":
            return {"status": "killed", "detail": "timeout", "seconds": round(dt, 1)}
        if isinstance(rc, int) and rc < 0:
            return {"status": "killed", "detail": "signal %d" % -rc, "seconds": round(dt, 1)}
        if rc == 0 or rc == 1:
            # the suite's rewrite-coverage table is deterministic: a mutant that changes where a rewrite fires
            # or nearly fires is caught by the snapshot ctest (tests/suite/run_coverage.sh) even when no graph
            # property fails
            cov = self.coverage(text)
            moved = sorted(k for k in set(cov) | set(base_cov) if cov.get(k) != base_cov.get(k))
            if moved:
                k = moved[0]
                return {"status": "killed", "seconds": round(dt, 1),
                        "detail": "coverage %s %s -> %s" % (k, base_cov.get(k), cov.get(k))}
            return {"status": "survived", "seconds": round(dt, 1)}  # nothing new caught it
        return {"status": "error", "detail": "exit %s: %s" % (rc, text.strip().splitlines()[-1:]),
                "seconds": round(dt, 1)}

    def reuse(self, m):
        """A reduced-suite verdict cached before the default-suite stage existed still holds when the reduced
        suite killed the mutant (the default run has it as a prefix) or it never ran (stillborn, TCE). A
        verdict of the same run without a sanitizer holds for a run with one unless the mutant survived it:
        the sanitizer stage judges only survivors (run_one starts from the plain survivor's verdict)."""
        if self.full_cmd and self.key(m) not in self.cache:
            old = self.cache.get(self.key(m, full=False))
            if old and old["status"] in ("killed", "stillborn", "equivalent") and old.get("stage") != "unit":
                self.cache[self.key(m)] = old
        if self.san_build and self.key(m) not in self.cache:
            old = self.cache.get(self.key(m, sanitize="none"))
            if old and old["status"] != "survived":
                self.cache[self.key(m)] = old

    def plain_survivor(self, m):
        """The cached verdict without a sanitizer when the mutant survived it (the suite stages then need no
        rerun), else None."""
        if not self.san_build:
            return None
        old = self.cache.get(self.key(m, sanitize="none"))
        return old if old and old["status"] == "survived" else None

    def run(self, muts):
        self.prepare(muts)
        for m in muts:
            self.reuse(m)
        ruled = {m.id: {"status": "equivalent", "detail": "rule " + m.rule} for m in muts if m.rule}
        todo = [m for m in muts if not m.rule and self.key(m) not in self.cache]
        self.log("%d mutants selected, %d equivalent by rule, %d cached, %d to run" %
                 (len(muts), len(ruled), len(muts) - len(ruled) - len(todo), len(todo)))
        if todo:
            self.baseline()
            if self.args.unit_tests:
                self.unit_baseline(todo)
        t0 = time.time()
        for i, m in enumerate(todo):
            res = self.run_one(m, plain=self.plain_survivor(m))
            res.update({"file": m.file, "line": m.line, "op": m.op, "original": m.original,
                        "replacement": m.replacement, "id": m.id})
            self.cache[self.key(m)] = res
            self.save_cache()
            self.log("[%d/%d %.0fs] %s %s:%d %s %s %s" % (i + 1, len(todo), time.time() - t0, m.id, m.file, m.line,
                                                          m.op, m.describe(40), res["status"]))
        for build in filter(None, (self.build, self.san_build)):
            self.compile(build)  # leave the private builds unmutated
        return {m.id: ruled.get(m.id) or self.cache[self.key(m)] for m in muts}


# ----------------------------------------------------------------------------------------------------------
# Report


def load_equivalent(path):
    eq = {}
    if os.path.exists(path):
        for ln in open(path, encoding="utf-8"):
            ln = ln.strip()
            if ln and not ln.startswith("#"):
                mid, _, reason = ln.partition(" ")
                eq[mid] = reason.strip()
    return eq


def report(muts, results, eq):
    lines, files = [], {}
    by_unit = {m.id for m in muts if results[m.id].get("stage") == "unit"}
    for m in muts:
        r = results[m.id]
        st = "survived" if m.id in by_unit else r["status"]  # the table is the default suite's verdict
        if st == "survived" and m.id in eq:
            st = "equivalent"
        f = files.setdefault(m.file, {"mutants": 0, "stillborn": 0, "killed": 0, "survived": 0, "equivalent": 0,
                                      "error": 0})
        f["mutants"] += 1
        f[st] += 1
    lines.append("| file | mutants | stillborn | equivalent | killed | survived | error | kill rate |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    tot = {k: 0 for k in ("mutants", "stillborn", "equivalent", "killed", "survived", "error")}
    for name in sorted(files):
        f = files[name]
        for k in tot:
            tot[k] += f[k]
        lines.append(_row(name, f))
    lines.append(_row("**total**", tot))
    unit = [m for m in muts if m.id in by_unit and m.id not in eq]
    if unit:
        k = tot["killed"] + len(unit)
        lines.append("")
        lines.append("With the unit tests of the mutated folder (`--unit-tests`): %d more killed, %d of %d, %.1f%%."
                     % (len(unit), k, tot["killed"] + tot["survived"],
                        100.0 * k / max(1, tot["killed"] + tot["survived"])))
    surv = [m for m in muts if (results[m.id]["status"] == "survived" or m.id in by_unit) and m.id not in eq]
    if surv:
        lines.append("")
        lines.append("Survivors (%d):" % len(surv))
        lines.append("")
        src_cache = {}
        for m in sorted(surv, key=lambda m: (m.file, m.line, m.offset)):
            if m.file not in src_cache:
                src_cache[m.file] = head_text(m.file).splitlines()
            code = src_cache[m.file][m.line - 1].strip()
            by = " (killed by the %s)" % results[m.id]["detail"] if m.id in by_unit else ""
            lines.append("- `%s` %s:%d %s `%s` — `%s`%s" % (m.id, m.file, m.line, m.op, m.describe(), code[:110], by))
    used = sorted({m.rule for m in muts if m.rule})
    if used:
        lines.append("")
        lines.append("Equivalent by rule (not run; bench/mutate/mutate.py, RULES):")
        lines.append("")
        for r in used:
            lines.append("- %s (%d mutants): %s" % (r, sum(m.rule == r for m in muts), RULES[r]))
    errs = [m for m in muts if results[m.id]["status"] == "error"]
    if errs:
        lines.append("")
        lines.append("Errors (not counted as killed):")
        for m in errs:
            lines.append("- `%s` %s:%d %s" % (m.id, m.file, m.line, results[m.id].get("detail", "")))
    return "\n".join(lines) + "\n"


def _row(name, f):
    denom = f["killed"] + f["survived"]
    rate = "%.1f%%" % (100.0 * f["killed"] / denom) if denom else "n/a"
    return "| %s | %d | %d | %d | %d | %d | %d | %s |" % (name, f["mutants"], f["stillborn"], f["equivalent"],
                                                          f["killed"], f["survived"], f["error"], rate)


# ----------------------------------------------------------------------------------------------------------
# Self-test

SNIPPET = r'''#include <stdio.h>
#define TWICE(x) ((x) + (x) * 2 < 3)
static const int table[3] = {1, 2, 3};
/* a comment with a < b && c */
static int f(const int *p, int n)
{
    int s = 0; // x - y
    const char *msg = "a < b || c";
    char ch = '-';
    for (int i = 0; i < n; i++) {
        if (p[i] == 1 && s >= 2) continue;
        s += p[i] * 3;
        puts(msg);
    }
    if (n) printf("%d", ch);
    return s - 1;
}
'''


def self_test():
    toks = tokenize(SNIPPET)
    texts = [t.text for t in toks]
    assert "define" not in texts and "TWICE" not in texts, "preprocessor lines must be skipped"
    assert '"a < b || c"' in texts and "'-'" in texts, "string/char literals are single tokens"
    assert "comment" not in texts and "x" not in texts, "comments must be skipped"
    muts = generate("snippet.c", SNIPPET)
    got = sorted((m.line, m.op, m.original, m.replacement) for m in muts)
    want = sorted([
        (7, "CRP", "0", "1"),
        (10, "CRP", "0", "1"), (10, "ROR", "<", "<="), (10, "ROR", "<", "!="),
        (11, "NEG", "p[i] == 1 && s >= 2", "!(p[i] == 1 && s >= 2)"),
        (11, "ROR", "==", "<="), (11, "ROR", "==", ">="), (11, "CRP", "1", "0"), (11, "CRP", "1", "2"),
        (11, "LCR", "&&", "||"), (11, "ROR", ">=", ">"), (11, "ROR", ">=", "=="),
        (11, "CRP", "2", "3"), (11, "CRP", "2", "1"), (11, "SDL", "continue;", ";"),
        (12, "AOR", "+=", "-="), (12, "AOR", "*", "/"), (12, "CRP", "3", "4"), (12, "CRP", "3", "2"),
        (13, "SDL", "puts(msg);", ";"),
        (15, "NEG", "n", "!(n)"), (15, "SDL", 'printf("%d", ch);', ";"),
        (16, "AOR", "-", "+"), (16, "CRP", "1", "0"), (16, "CRP", "1", "2"),
    ])
    if got != want:
        for x in sorted(set(got) - set(want)):
            print("unexpected:", x)
        for x in sorted(set(want) - set(got)):
            print("missing:", x)
        sys.exit("self-test FAILED")
    for m in muts:  # every mutant applies cleanly and changes exactly its span
        new = m.apply(SNIPPET)
        assert new != SNIPPET and new.startswith(SNIPPET[: m.offset])
    ids = [m.id for m in muts]
    assert len(set(ids)) == len(ids), "mutant ids must be unique"
    assert generate("snippet.c", SNIPPET)[0].id == muts[0].id, "ids must be stable"
    assert not generate("snippet.c", SNIPPET, [(13, 13)])[1:], "line ranges select"
    # the pointer declarator and the unary minus are not AOR sites
    assert not [m for m in generate("t.c", "int g(void)\n{\n    int *q = 0;\n    return -f(q);\n}\n") if m.op == "AOR"]
    # the equivalence rules: what they accept and, as importantly, what they must refuse
    rules = "pc_status g(int *p, size_t n, int s)\n{\n" \
        "    for (size_t i = 0; i < n; i++) p[i] = 0;\n" \
        "    for (size_t i = 0; i < n; i++) n--;\n" \
        "    for (size_t i = 0; i < n; i++) { i++; }\n" \
        "    for (int i = 0; i < n; i++) p[i] = 1;\n" \
        "    for (size_t i = 0; i < n; i++) h(&n);\n" \
        "    if (s != PC_OK) return s;\n" \
        "    return s == PC_OK ? PC_OK : s;\n}\n"
    ruled = sorted((m.line, m.original, m.replacement, m.rule) for m in generate("r.c", rules) if m.rule)
    want_rules = [(3, "<", "!=", "R2"), (8, "!=", ">", "R1"), (9, "==", "<=", "R1")]
    assert ruled == want_rules, "equivalence rules: got %s, want %s" % (ruled, want_rules)
    print("self-test passed: %d mutants of the snippet as expected, %d by rule" % (len(muts), len(ruled)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", nargs="?", choices=["list", "run", "report"], default="run")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--files", action="append", help="glob relative to the repository root (repeatable); "
                    "default: core/passes, core/transpose, core/ep, core/eval")
    ap.add_argument("--operators", help="comma list of ROR,AOR,LCR,NEG,CRP,SDL")
    ap.add_argument("--line-ranges", help="only mutants on these lines, e.g. 10-40,55")
    ap.add_argument("--sample", type=int, help="a seeded random sample of N mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, help="at most N mutants (after sampling)")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "pc-mutate"))
    ap.add_argument("--cache", help="result cache (default WORK_DIR/cache.json)")
    ap.add_argument("--suite-cmd", help="suite command with {passcheck} and {out}; default: " + DEFAULT_SUITE)
    ap.add_argument("--no-full-suite", action="store_true",
                    help="do not judge the reduced suite's survivors again by the default 30,000-case suite "
                    "(implied by --suite-cmd)")
    ap.add_argument("--timeout", type=float, help="seconds per suite run (default 10x the clean run, >= 60)")
    ap.add_argument("--build-jobs", type=int, default=2)
    ap.add_argument("--sanitize", choices=["none", "leak", "address"], default="address",
                    help="judge the plain suite's survivors again in a build with this sanitizer (default "
                    "address: out-of-bounds reads and leaks fail the suite, as in ci/test's ASan build)")
    ap.add_argument("--sanity-fault", default=SANITY_FAULT)
    ap.add_argument("--equivalent", default=os.path.join(HERE, "equivalent.txt"))
    ap.add_argument("--report", help="also write the markdown report to this file")
    ap.add_argument("--unit-tests", action="store_true",
                    help="judge the suite's survivors by the mutated folder's unit tests too (UNIT_TESTS); "
                    "reported as a second rate: the goal is the default suite's")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    muts = select_mutants(args)
    if args.command == "list":
        for m in muts:
            print("%s %s:%d %s %s" % (m.id, m.file, m.line, m.op, m.describe()))
        print("%d mutants" % len(muts), file=sys.stderr)
        return
    # SIGTERM/SIGHUP unwind like Ctrl-C, so the mutated file is restored by run_one's `finally`
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit("mutate.py: terminated"))
    runner = Runner(args)
    if args.command == "report":
        for m in muts:
            runner.reuse(m)
        results = {m.id: {"status": "equivalent", "detail": "rule " + m.rule} if m.rule else
                   runner.cache[runner.key(m)] for m in muts if m.rule or runner.key(m) in runner.cache}
        muts = [m for m in muts if m.id in results]
    else:
        results = runner.run(muts)
    text = report(muts, results, load_equivalent(args.equivalent))
    print(text)
    if args.report:
        with open(args.report, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
