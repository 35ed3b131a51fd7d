"""Judges a `passcheck conformance --json` report of the generated cases (run.sh calls it).

    check_outcomes.py valid REPORT.json KNOWN_FAILURES.txt
        every case passed, except those listed in KNOWN_FAILURES.txt (`case outcome  # reason`) with exactly
        the listed outcome; a listed case that passes, or that was not generated, is an error too (keep the
        list true).
    check_outcomes.py bad REPORT.json BAD_ROOT
        every case has the outcome its generator wrote to BAD_ROOT/<generator>/expected-outcomes.txt: `error`
        is load-error or run-error carrying one of the executor's error codes ("[bad-shape] ..."), so a crash,
        a sanitizer report or a timeout (run-error "crashed: ...", "child exited with status ...", "timed out
        ...") never counts; `unsupported` is unsupported. Never passed.

Prints one line per problem and exits 1 if there is any.
"""
import json
import os
import re
import sys

CLEAN_ERROR = re.compile(r"^\[[a-z0-9-]+\] ")


def read_list(path):
    """`name outcome  # comment` lines -> {name: outcome}."""
    entries = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                sys.exit("%s:%d: expected `case outcome`, got %r" % (path, lineno, line))
            if parts[0] in entries:
                sys.exit("%s:%d: %s listed twice" % (path, lineno, parts[0]))
            entries[parts[0]] = parts[1]
    return entries


def describe(c):
    return "%s: %s%s" % (c["name"], c["outcome"], ": " + c["message"] if c["message"] else "")


def check_valid(cases, known_path):
    known = read_list(known_path)
    problems = []
    tolerated = 0
    for c in cases:
        want = known.pop(c["name"], None)
        if want is None:
            if c["outcome"] != "passed":
                problems.append("FAIL " + describe(c))
        elif c["outcome"] == "passed":
            problems.append("FIXED %s: passes now; remove it from %s" % (c["name"], known_path))
        elif c["outcome"] != want:
            problems.append("FAIL %s (known failure, listed as %s)" % (describe(c), want))
        else:
            tolerated += 1
            print("KNOWN " + describe(c))
    for name in sorted(known):
        problems.append("STALE %s is listed in %s but was not generated" % (name, known_path))
    return problems, "%d valid cases: %d passed, %d known failures" % (
        len(cases), sum(c["outcome"] == "passed" for c in cases), tolerated)


def check_bad(cases, bad_root):
    expect = {}
    for gen in sorted(os.listdir(bad_root)):
        manifest = os.path.join(bad_root, gen, "expected-outcomes.txt")
        if not os.path.isfile(manifest):
            sys.exit("%s: missing (every bad-case generator writes one)" % manifest)
        for name, outcome in read_list(manifest).items():
            if outcome not in ("error", "unsupported"):
                sys.exit("%s: %s: unknown expected outcome %r" % (manifest, name, outcome))
            expect[gen + "/" + name] = outcome
    problems = []
    counts = {"error": 0, "unsupported": 0}
    for c in cases:
        want = expect.pop(c["name"], None)
        if want is None:
            problems.append("UNEXPECTED %s has no entry in its expected-outcomes.txt" % describe(c))
            continue
        if want == "error":
            ok = c["outcome"] in ("load-error", "run-error") and CLEAN_ERROR.match(c["message"]) is not None
        else:
            ok = c["outcome"] == "unsupported"
        if ok:
            counts[want] += 1
        else:
            problems.append("BAD %s (expected %s)" % (describe(c), want))
    for name in sorted(expect):
        problems.append("MISSING %s has an expected outcome but did not run" % name)
    return problems, "%d bad cases: %d refused with an error, %d unsupported, as expected" % (
        len(cases), counts["error"], counts["unsupported"])


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("valid", "bad"):
        sys.exit("usage: check_outcomes.py valid REPORT.json KNOWN_FAILURES | bad REPORT.json BAD_ROOT")
    with open(sys.argv[2]) as f:
        cases = json.load(f)["cases"]
    if sys.argv[1] == "valid":
        problems, summary = check_valid(cases, sys.argv[3])
    else:
        problems, summary = check_bad(cases, sys.argv[3])
    for p in problems:
        print(p)
    print(summary + ("" if not problems else "; %d problems" % len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
