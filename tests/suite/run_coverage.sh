#!/usr/bin/env bash
# ctest suite_coverage (label "suite", issue 14): the default suite — every family, every property, seed 1, its
# default case count — must leave no rewrite kind (PC_REWRITE_KINDS, core/passcheck.h) below 50 cases where it fired
# or 20 cases where it nearly fired (the thresholds the suite's JSON reports under "rewrite_coverage"). Fails naming
# every kind below them. ci/test runs it from its Release build (`ctest -L '^suite$'`).
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
python3 - "$json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
cov = j["rewrite_coverage"]
lo_f, lo_n = cov["min_fired_cases"], cov["min_near_miss_cases"]
below = [k for k in cov["kinds"] if k["below"]]
assert all(k["below"] == (k["fired_cases"] < lo_f or (k["has_near_miss"] and k["near_miss_cases"] < lo_n))
           for k in cov["kinds"]), "the suite's 'below' flags disagree with the thresholds"
print("rewrite coverage over %d cases: %d kinds, %d below %d fired / %d near-miss cases"
      % (j["cases"], len(cov["kinds"]), len(below), lo_f, lo_n))
for k in below:
    print("  %-44s fired %6d  near miss %6d" % (k["kind"], k["fired_cases"], k["near_miss_cases"]))
sys.exit(1 if below else 0)
PY
