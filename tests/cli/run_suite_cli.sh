#!/usr/bin/env bash
# ctest: `passcheck suite` — usage errors naming the option (exit 2), the --list-* outputs, a short real run whose
# JSON and JUnit parse (python3 json / xml.dom.minidom) and agree with each other, --jobs 1 vs 2 giving the same
# report, shards adding up to the whole run, the failure database replayed first by the next run and --replay, and
# (Debug/sanitizer builds, where the test hooks exist) a crashing and a hanging case reported as failures.
# usage: run_suite_cli.sh PASSCHECK HOOKS   (HOOKS: "hooks" when PC_SUITE_TEST_CRASH/HANG are compiled in)
set -uo pipefail
pc=$1 hooks=${2:-nohooks}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tmp" || exit 1

# help and usage errors
expect 0 "usage: passcheck suite" -- "$pc" suite --help
expect 2 "unknown option '--bogus'" -- "$pc" suite --bogus
expect 2 "--cases needs an argument" -- "$pc" suite --cases
expect 2 "bad --cases 'x'" -- "$pc" suite --cases x
expect 2 "bad --cases '0'" -- "$pc" suite --cases 0
expect 2 "--cases and --time exclude each other" -- "$pc" suite --cases 3 --time 1
expect 2 "bad --time '-1'" -- "$pc" suite --time -1
expect 2 "bad --seed 'abc'" -- "$pc" suite --seed abc
expect 2 "bad --jobs '0'" -- "$pc" suite --jobs 0
expect 2 "bad --jobs '9999'" -- "$pc" suite --jobs 9999
expect 2 "bad --shard '3/2'" -- "$pc" suite --shard 3/2
expect 2 "bad --shard '0/2'" -- "$pc" suite --shard 0/2
expect 2 "bad --shard '1'" -- "$pc" suite --shard 1
expect 2 "--family: unknown family 'nope'" -- "$pc" suite --family float,nope
expect 2 "--property: .*nope" -- "$pc" suite --property nope
expect 2 "--inject: unknown fault 'nope'" -- "$pc" suite --inject nope
expect 2 "bad --oracle 'tf'" -- "$pc" suite --oracle tf
expect 2 "--ep: " -- "$pc" suite --ep nosuchep
expect 2 "--seed given twice" -- "$pc" suite --seed 1 --seed 2
expect 2 "bad --max-nodes '0'" -- "$pc" suite --max-nodes 0
expect 2 "bad --timeout '0'" -- "$pc" suite --timeout 0
expect 2 "--replay: 'missing' is not a folder" -- "$pc" suite --replay missing
expect 2 "--replay runs only the saved failures: it takes no --cases" -- "$pc" suite --replay . --cases 3
expect 2 "unexpected argument 'extra'" -- "$pc" suite extra
expect 2 "--stats given twice" -- "$pc" suite --stats --stats --cases 1
expect 2 "--stats counts the rewrites of new cases: --replay runs none" -- "$pc" suite --replay . --stats
expect 3 "cannot write --json file nodir/r.json" -- "$pc" suite --cases 1 --json nodir/r.json
expect 2 "--known .*missing.txt" -- "$pc" suite --cases 1 --known missing.txt
printf '# known\nnumerics@fold_constants/values\nnot a signature\n' >bad-known.txt
expect 2 "--known bad-known.txt:3: 'not a signature' is not a failure signature" -- "$pc" suite --cases 1 --known bad-known.txt
expect 2 "--fail-fast given twice" -- "$pc" suite --fail-fast --fail-fast
touch notadir
expect 3 "--out notadir: not a directory" -- "$pc" suite --cases 1 --out notadir

# lists: 'name  description' per line, every registered name once
expect 0 "concat-wrong-axis  the transpose optimizer" -- "$pc" suite --list-faults
check "--list-faults has 7 faults" test "$("$pc" suite --list-faults | wc -l)" -ge 7
check "--list-families lists float and nhwc" sh -c "'$pc' suite --list-families | grep -q '^float  ' && '$pc' suite --list-families | grep -q '^nhwc  '"
check "--list-properties lists numerics" sh -c "'$pc' suite --list-properties | grep -q '^numerics  '"

# a short real run: banner, exit 0 or 1, JSON and JUnit parse and agree
"$pc" suite --cases 24 --seed 7 --jobs 1 --no-shrink --out out1 --json r1.json --junit r1.xml >run1.txt 2>run1.err
rc1=$?
check "real run exits 0 or 1 (got $rc1)" test "$rc1" -le 1
check "banner names the seed and the rerun command" sh -c "grep -q '^seed 7, 24 cases' run1.txt && grep -q '^rerun: passcheck suite --seed 7 --cases 24' run1.txt"
check "summary ends with timing" sh -c "tail -1 run1.txt | grep -qE '^24 cases in [0-9.]+ s \\([0-9.]+ cases/s\\)'"
check "JSON and JUnit parse and agree" python3 - r1.json r1.xml "$rc1" <<'EOF'
import json, sys, xml.dom.minidom
j = json.load(open(sys.argv[1]))
doc = xml.dom.minidom.parse(sys.argv[2])
rc = int(sys.argv[3])
assert j["cases"] == 24 and j["seed"] == 7, j
assert sum(f["cases"] for f in j["family_table"]) == 24
assert (j["failed_cases"] > 0) == (rc == 1), (j["failed_cases"], rc)
assert len(j["failures"]) == j["failed_cases"]
assert [f["case"] for f in j["failures"]] == sorted(f["case"] for f in j["failures"])
suites = doc.getElementsByTagName("testsuite")
names = [s.getAttribute("name") for s in suites]
assert names == j["properties"] + ["harness"], names
junit_failures = sum(int(s.getAttribute("failures")) for s in suites)
sigfam = {(s["property"] if s["property"] in j["properties"] else "harness", f["family"])
          for f in j["failures"] for s in j["signatures"] if s["signature"] == f["signature"]}
assert junit_failures == len(sigfam), (junit_failures, sigfam)
cov = j["rewrite_coverage"]
assert cov["min_fired_cases"] == 50 and cov["min_near_miss_cases"] == 20, cov
assert len(cov["kinds"]) >= 30 and len({k["kind"] for k in cov["kinds"]}) == len(cov["kinds"])
for k in cov["kinds"]:
    assert k["kind"].startswith(k["pass"] + "/"), k
    assert 0 <= k["fired_cases"] <= 24 and 0 <= k["near_miss_cases"] <= 24, k
    assert k["below"] == (k["fired_cases"] < 50 or k["near_miss_cases"] < 20), k
assert cov["below"] == sum(k["below"] for k in cov["kinds"])
assert sum(k["fired_cases"] for k in cov["kinds"]) > 0, "no rewrite fired in 24 cases"
EOF
check "summary ends with the rewrite-coverage table before timing" sh -c "grep -q '^rewrite coverage: cases where each kind fired' run1.txt && tail -2 run1.txt | head -1 | grep -qE '^rewrite coverage: [0-9]+ of [0-9]+ kinds below 50 fired / 20 near-miss cases'"

# --stats: only the coverage table, the same counts as the full run's JSON
"$pc" suite --cases 24 --seed 7 --jobs 1 --no-shrink --out outst --stats >stats.txt 2>stats.err
rcs=$?
check "--stats exits as the run does ($rcs vs $rc1)" test "$rcs" -eq "$rc1"
check "--stats prints only the coverage table" sh -c "head -2 stats.txt | tail -1 | grep -q '^rewrite coverage: cases where' && ! grep -qE '^(seed|property|family) |cases in ' stats.txt && test ! -s stats.err"
check "--stats rows agree with the JSON" python3 - r1.json stats.txt <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 3 and "/" in f[0] and f[1].isdigit():
        rows[f[0]] = (int(f[1]), int(f[2]))
want = {k["kind"]: (k["fired_cases"], k["near_miss_cases"]) for k in j["rewrite_coverage"]["kinds"]}
assert rows == want, (rows, want)
EOF

# --known and --fail-fast with a planted fault: stopped at its first case; known, it does not fail the run
kf=(--seed 1 --cases 600 --family patterns --no-shrink --property rewrite-fired --inject neg-neg-skipped)
expect 1 "--fail-fast stopped at case [0-9]+" -- "$pc" suite "${kf[@]}" --out kf1 --fail-fast --json kf1.json
printf 'rewrite-fired@end-to-end/neg_neg_removed\n' >known.txt
expect 0 "rewrite-fired@end-to-end/neg_neg_removed \\[known\\]" -- "$pc" suite "${kf[@]}" --out kf2 --known known.txt --fail-fast --json kf2.json
check "--fail-fast and --known in the JSON" python3 - kf1.json kf2.json <<'EOF'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
stop = a["stopped_early"]["order"]
assert a["cases"] < 600 and a["failures"][0]["case"] == stop and a["known_failed"] == 0, a["stopped_early"]
assert b["stopped_early"] is None and b["cases"] == 600 and b["known_failed"] == b["failed_cases"] > 0, b["cases"]
assert b["failures"][0]["case"] == stop and all(s["known"] and s["repro"] is None for s in b["signatures"])
EOF

# --jobs 2 gives the same report (timing aside) and the same summary (last line aside)
"$pc" suite --cases 24 --seed 7 --jobs 2 --no-shrink --out out2 --json r2.json --junit r2.xml >run2.txt 2>/dev/null
check "--jobs 1 and 2: same JSON" python3 -c "
import json, sys
a, b = json.load(open('r1.json')), json.load(open('r2.json'))
a.pop('timing'); b.pop('timing')
for s in a['signatures'] + b['signatures']: s['repro'] = s['repro'] and s['repro'].split('/', 1)[1]
sys.exit(a != b)"
check "--jobs 1 and 2: same summary" bash -c "diff <(head -n -1 run1.txt | sed 's/out[12]/OUT/g') <(head -n -1 run2.txt | sed 's/out[12]/OUT/g') >/dev/null"

# shards add up to the whole run
for s in 1 2 3 4; do
    "$pc" suite --cases 24 --seed 7 --shard $s/4 --no-shrink --quiet --out outs --json s$s.json \
        --junit s$s.xml >/dev/null 2>&1
done
check "shards 1/4..4/4 = the whole run" python3 -c "
import json, sys
full = json.load(open('r1.json'))
parts = [json.load(open('s%d.json' % s)) for s in (1, 2, 3, 4)]
cases = sorted(f['case'] for p in parts for f in p['failures'] if not f['replayed'])
sys.exit(not ([p['cases'] for p in parts] == [6, 6, 6, 6] and cases == [f['case'] for f in full['failures']]))"
# and their JUnit files together report what the whole run's does: a (property, family) testcase fails in some
# shard exactly when it fails in the whole run (the CI recipe of docs/ci.md merges them so)
check "shard JUnit files together = the whole run's" python3 -c "
import sys, xml.etree.ElementTree as ET
def testcases(path, failing):
    return {(s.get('name'), c.get('name')) for s in ET.parse(path).getroot().findall('testsuite')
            for c in s.findall('testcase') if not failing or c.find('failure') is not None}
ok = all(testcases('r1.xml', f) == set().union(*(testcases('s%d.xml' % s, f) for s in (1, 2, 3, 4)))
         for f in (False, True))
sys.exit(not (ok and testcases('r1.xml', False)))"

# the failure database, with a planted fault so there are failures (float family and the property that catches it
# only, so real findings of other properties cannot linger in the database): saved by run A, replayed first by run B; a run
# without the fault replays them, sees them pass and removes them; --replay of a repro folder re-enables the fault
# the failure was found with and reproduces it without touching anything
inj=(--cases 40 --seed 7 --no-shrink --out dbrun --inject level2-forgets-ep --property ep-assignment --family float)
"$pc" suite "${inj[@]}" --json a.json >/dev/null 2>&1
rca=$?
check "planted fault found (exit $rca)" test "$rca" -eq 1
check "one database entry per signature" python3 -c "
import json, os, sys
j = json.load(open('a.json'))
entries = [f for f in os.listdir('dbrun/.db') if f.endswith('.case')]
sys.exit(not (len(entries) == len(j['signatures']) == j['database_saved'] > 0))"
"$pc" suite "${inj[@]}" --json b.json >/dev/null 2>&1
check "the next run replays the database first" python3 -c "
import json, sys
a, b = json.load(open('a.json')), json.load(open('b.json'))
sys.exit(not (b['replay']['replayed'] == b['replay']['still_failing'] == len(a['signatures'])
              and b['failures'][0]['replayed'] and b['database_saved'] == 0))"
repro=$(python3 -c "import json; print(json.load(open('a.json'))['signatures'][0]['repro'] or '')")
check "a repro folder was written" test -f "$repro/case.txt"
expect 1 "replaying the failures in $repro" -- "$pc" suite --replay "$repro" --no-shrink --out replayout
check "--replay leaves the database alone" test "$(ls dbrun/.db | wc -l)" -gt 0
"$pc" suite --cases 1 --seed 7 --no-shrink --out dbrun --property ep-assignment --family float --json c.json >/dev/null 2>&1
check "without the fault the entries pass and are removed" python3 -c "
import json, os, sys
c = json.load(open('c.json'))
left = [f for f in os.listdir('dbrun/.db') if f.endswith('.case')]
sys.exit(not (c['replay']['removed'] == c['replay']['replayed'] > 0 and not left))"

# crash and hang in a child (test hooks, Debug/sanitizer builds only)
if [ "$hooks" = hooks ]; then
    PC_SUITE_TEST_CRASH=2 PC_SUITE_TEST_HANG=4 "$pc" suite --cases 6 --seed 7 --jobs 2 --timeout 2 --no-shrink \
        --out out5 --json r5.json >run5.txt 2>&1
    rc5=$?
    check "crash and hang are failures (exit $rc5)" test "$rc5" -eq 1
    check "crash and hang reported with their cases" python3 -c "
import json, sys
j = json.load(open('r5.json'))
by_case = {f['case']: f['signature'] for f in j['failures']}
sys.exit(not (by_case.get(2, '').startswith('crash@') and by_case.get(2, '').endswith('/SIGSEGV')
              and by_case.get(4, '').startswith('timeout@') and j['cases'] == 6))"
fi

finish "suite CLI"
