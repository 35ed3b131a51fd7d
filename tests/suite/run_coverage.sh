#!/usr/bin/env bash
# ctest suite_coverage (label "suite", issue 14): the default suite — every family, every property, seed 1, its
# default case count — must leave no rewrite kind (PC_REWRITE_KINDS, core/passcheck.h) below 50 cases where it fired
# or 20 cases where it nearly fired (the thresholds the suite's JSON reports under "rewrite_coverage"). Fails naming
# every kind below them. ci/test runs it from its Release build (`ctest -L '^suite$'`).
#
# It also compares the table with the recorded one, tests/suite/coverage-baseline.txt (kind, fired cases, near-miss
# cases): the suite is deterministic, so any difference means a change made a rewrite fire (or nearly fire) in other
# cases than before. A change that means it reruns with COVERAGE_UPDATE=1, which rewrites the file, and commits the
# diff for review; an unintended difference is the regression this catches (a rewrite that silently stopped
# firing, a near-miss report lost). Skipped when SUITE_ARGS or JSON change the run.
#
# usage: run_coverage.sh PASSCHECK [JSON]
#   JSON: judge an existing `passcheck suite --json` report instead of running the suite.
# Environment: SUITE_ARGS, extra arguments for the suite run (e.g. "--cases 5000" for a quick local look; the
# verdict then is not the default suite's).
set -uo pipefail
passcheck=$1
json=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$json" ]; then
    json=$tmp/suite.json
    # shellcheck disable=SC2086
    "$passcheck" suite --quiet --no-shrink --out "$tmp/out" --json "$json" ${SUITE_ARGS:-} >"$tmp/summary.txt" 2>&1
    rc=$?
    if [ "$rc" -gt 1 ] || [ ! -s "$json" ]; then
        echo "run_coverage: passcheck suite failed to run (exit $rc):" >&2
        tail -20 "$tmp/summary.txt" >&2
        exit 1
    fi
fi
baseline="$(dirname "${BASH_SOURCE[0]}")/coverage-baseline.txt"
compare=yes
[ -n "${SUITE_ARGS:-}" ] || [ -n "${2:-}" ] && compare=no
python3 - "$json" "$baseline" "$compare" "${COVERAGE_UPDATE:-}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
baseline, compare, update = sys.argv[2], sys.argv[3] == "yes", sys.argv[4] == "1"

cov = j["rewrite_coverage"]
lo_f, lo_n = cov["min_fired_cases"], cov["min_near_miss_cases"]
below = [k for k in cov["kinds"] if k["below"]]
assert all(k["below"] == (k["fired_cases"] < lo_f or (k["has_near_miss"] and k["near_miss_cases"] < lo_n))
           for k in cov["kinds"]), "the suite's 'below' flags disagree with the thresholds"
print("rewrite coverage over %d cases: %d kinds, %d below %d fired / %d near-miss cases"
      % (j["cases"], len(cov["kinds"]), len(below), lo_f, lo_n))
for k in below:
    print("  %-44s fired %6d  near miss %6d" % (k["kind"], k["fired_cases"], k["near_miss_cases"]))
table = ["%s %d %d" % (k["kind"], k["fired_cases"], k["near_miss_cases"]) for k in cov["kinds"]]
differ = False
if compare and update:
    with open(baseline, "w") as fh:
        fh.write("# passcheck suite's rewrite coverage (the default suite: seed 1, 30,000 cases): kind, fired cases,\n"
                 "# near-miss cases. Written by COVERAGE_UPDATE=1 tests/suite/run_coverage.sh PASSCHECK; see there.\n")
        fh.write("\n".join(table) + "\n")
    print("run_coverage: wrote %s" % baseline)
elif compare:
    want = [ln.strip() for ln in open(baseline) if ln.strip() and not ln.startswith("#")]
    if want != table:
        differ = True
        old = {ln.split()[0]: ln for ln in want}
        new = {ln.split()[0]: ln for ln in table}
        print("run_coverage: the rewrite coverage differs from %s (rerun with COVERAGE_UPDATE=1 if intended):"
              % baseline)
        for kind in sorted(set(old) | set(new)):
            if old.get(kind) != new.get(kind):
                print("  was: %-60s now: %s" % (old.get(kind, "(absent)"), new.get(kind, "(absent)")))
sys.exit(1 if below or differ else 0)
PY
