#!/usr/bin/env bash
# ctest suite_faults: the default suite must catch every planted fault (passcheck suite --list-faults) and shrink it
# to a repro of at most 6 nodes that replays with the same signature (issue 5).
#
# For each fault: run the suite with --inject FAULT on the same cases as a baseline run without faults; a failure
# signature the baseline does not have must appear (so a finding the suite already reports without the fault — a
# real bug in a pass — can't pass for the fault being caught, and the test does not depend on the baseline having
# findings or not), its shrunk repro must have at most MAX_NODES nodes, and `passcheck suite --replay` of the repro
# with the fault on must fail with the same signature. The fault runs get the baseline's signatures as --known and
# stop at the first case failing with another (--fail-fast): the same cases in the same order, so a fault is
# caught exactly when the whole run would catch it, without running the cases after the catch.
#
# usage: run_faults.sh PASSCHECK [default|targeted]
#   default (the default): `passcheck suite` with its defaults — every family, every property, seed 1, its default
#     case count, jobs and shrink budget; only --inject, --known, --fail-fast, --out, --json and --quiet are
#     added. ctest runs it from a Release build (label "suite"; ci/test builds one for it).
#   targeted: a reduced run for sanitizer builds, where checks are ~10x slower: CASES (default 600) cases with seed
#     SEED (default 7), each fault's run (and its baseline) restricted to the family that exercises the faulted pass
#     (annotated for the level-1 annotation faults, nhwc for the transpose-optimizer faults and the NHWC depthwise
#     runtime fault, qdq for the QDQ rewrite and the runtime's requantization,
#     eps for the EP-file parser, the capability check and the systolic rewrite (its EP is in eps' random configs),
#     float for the blocked EP's compile (30% of float cases run on blocked,cpu),
#     patterns for the faults only the pattern library reaches, every family otherwise) and SHRINK_TIME (default 15) seconds of shrinking per signature.
# Environment: MAX_NODES (default 6); FAULTS (default: every fault) to run a subset; SUITE_ARGS, extra arguments
# for every suite run (e.g. "--cases 5000" for a quick local run).
set -uo pipefail
passcheck=$1
mode=${2:-default}
max_nodes=${MAX_NODES:-6}
case $mode in
default | targeted) ;;
*)
    echo "usage: run_faults.sh PASSCHECK [default|targeted]" >&2
    exit 2
    ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
family_for() {
    [ "$mode" = targeted ] || {
        echo all
        return
    }
    case $1 in
    fusion-drops-annotation | fusion-merges-annotations | layer-rule-contains) echo annotated ;;
    concat-wrong-axis | softmax-push-old-opset | transpose-skip-cancel | reshape-push-any | runtime-depthwise-nhwc-channels) echo nhwc ;;
    qdq-wrong-rounding | runtime-requant-truncate) echo qdq ;;
    blocked-weight-io-swapped | blocked-reorder-per-op) echo float ;;
    ep-file-block-bound | capability-refuses-min-opset | systolic-weight-ohwi | systolic-add-shape-copy | systolic-add-no-return) echo eps ;;
    neg-neg-skipped | gather-push-wrong-axis | cast-same-width-removed | fold-int-div-floor | fold-skips-errors | eval-tie-later | gather-perm-order | reshape-groups-apart) echo patterns ;;
    *) echo all ;;
    esac
}
now() { date +%s%N; }
run() { # name, family ("all" = every family), extra args...
    local name=$1 family=$2
    shift 2
    local args=()
    if [ "$mode" = targeted ]; then
        args=(--seed "${SEED:-7}" --cases "${CASES:-600}" --shrink-time "${SHRINK_TIME:-15}")
        [ "$family" = all ] || args+=(--family "$family")
    fi
    # shellcheck disable=SC2206 # SUITE_ARGS is a list of words on purpose
    local extra=(${SUITE_ARGS:-})
    local t0
    t0=$(now)
    "$passcheck" suite --quiet "${args[@]}" "${extra[@]}" --out "$tmp/$name" --json "$tmp/$name.json" "$@" \
        >"$tmp/$name.log" 2>&1
    local rc=$?
    secs=$((($(now) - t0) / 1000000000))
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
        echo "FAIL: suite run '$name' exited $rc"
        tail -5 "$tmp/$name.log"
        return 2
    fi
}
faults=${FAULTS:-$("$passcheck" suite --list-faults | awk '{print $1}')}
status=0
for fault in $faults; do
    family=$(family_for "$fault")
    if [ ! -f "$tmp/baseline-$family.json" ]; then
        # the baseline's own findings are not shrunk: only their signatures matter here
        run "baseline-$family" "$family" --no-shrink || exit 1
        printf 'baseline (families: %s): %s signatures, %d s\n' "$family" \
            "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["signatures"]))' \
                "$tmp/baseline-$family.json")" "$secs"
    fi
    /usr/bin/python3 -c 'import json,sys; [print(s["signature"]) for s in json.load(open(sys.argv[1]))["signatures"]]' \
        "$tmp/baseline-$family.json" >"$tmp/known-$family.txt"
    run "$fault" "$family" --inject "$fault" --known "$tmp/known-$family.txt" --fail-fast || {
        status=1
        continue
    }
    verdict=$(
        /usr/bin/python3 - "$tmp/baseline-$family.json" "$tmp/$fault.json" <<'PY'
import json, sys
base = {s["signature"] for s in json.load(open(sys.argv[1]))["signatures"]}
run = json.load(open(sys.argv[2]))
new = [s for s in run["signatures"] if s["signature"] not in base]
if not new:
    print("MISSED", run["cases"])
    sys.exit()
best = min(new, key=lambda s: s.get("nodes_after") or 10**9)
print(best["signature"], best.get("cases"), run["cases"], best.get("nodes_before"), best.get("nodes_after"),
      best.get("repro") or "-", len(new))
PY
    )
    # shellcheck disable=SC2086 # split the verdict into fields
    set -- $verdict
    if [ "$1" = MISSED ]; then
        echo "FAIL: $fault: no new failure signature in $2 cases (families: $family)"
        status=1
        continue
    fi
    sig=$1 n_cases=$2 total=$3 before=$4 after=$5 repro=$6 n_new=$7
    if [ "$after" = None ] || [ "$repro" = - ] || [ "$after" -gt "$max_nodes" ]; then
        echo "FAIL: $fault: caught as $sig ($n_cases cases) but shrunk to $after nodes (limit $max_nodes)"
        status=1
        continue
    fi
    # the repro replays with the same signature while the fault is on
    if ! "$passcheck" suite --replay "$repro" --inject "$fault" --quiet --out "$tmp/replay-$fault" \
        --json "$tmp/replay-$fault.json" >"$tmp/replay-$fault.log" 2>&1; then
        if ! grep -q "\"$sig\"" "$tmp/replay-$fault.json" 2>/dev/null; then
            echo "FAIL: $fault: replaying $repro did not fail with $sig"
            status=1
            continue
        fi
    else
        echo "FAIL: $fault: replaying $repro passed"
        status=1
        continue
    fi
    printf 'caught %s: %s in %s of %s cases (families: %s; %s new signatures), shrunk %s -> %s nodes, %d s\n' \
        "$fault" "$sig" "$n_cases" "$total" "$family" "$n_new" "$before" "$after" "$secs"
done
[ $status -eq 0 ] && echo "suite_faults: every fault caught and shrunk to <= $max_nodes nodes"
exit $status
