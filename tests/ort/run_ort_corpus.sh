#!/usr/bin/env bash
# ctest: the ORT-format loader on what ONNX Runtime 1.30 writes. Every ONNX backend model is converted to the
# ORT format by ORT itself (optimizations disabled, and again at 'basic' so runtime optimization records and
# ORT's rewrites appear); passcheck must load every file ORT writes, and the disabled-level files, placed where
# the backend cases' model.onnx was (the format is detected by content), must give the same conformance outcome
# as the ONNX originals (tests/conformance/expected.txt) — the reference executor against the recorded outputs,
# so "the graph equals the original" is judged by what it computes. Documented differences:
# tests/ort/corpus-differences.txt ('case outcome reason'): ORT expands some function ops, folds Constant nodes
# into initializers, and so on.
# usage: run_ort_corpus.sh PASSCHECK ORT_NODE_MODULES_DIR TESTDATA_DIR SOURCE_DIR   (77 = skipped: no node/ORT)
set -euo pipefail
passcheck=$1 ort_dir=$2 data=$3 src=$4
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1; then echo "node not found: skipping"; exit 77; fi
if [ ! -d "$ort_dir/onnxruntime-node" ]; then echo "onnxruntime-node not in $ort_dir: skipping"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# disabled: a copy of each case with the ORT file as model.onnx and the recorded data linked
find "$data" -name model.onnx | sort | while read -r m; do
    case_dir=$(dirname "$m")
    rel=${case_dir#"$data"/}
    mkdir -p "$tmp/cases/$rel"
    for d in "$case_dir"/test_data_set_*; do [ -d "$d" ] && ln -s "$d" "$tmp/cases/$rel/"; done
    printf '%s\t%s\n' "$m" "$tmp/cases/$rel/model.onnx"
done >"$tmp/manifest-disabled"
node "$here/ort_convert.js" "$ort_dir" disabled <"$tmp/manifest-disabled" >"$tmp/converted-disabled"
n_ok=$(grep -c '^ok ' "$tmp/converted-disabled" || true)
n_refused=$(grep -c '^refused ' "$tmp/converted-disabled" || true)
echo "ORT wrote $n_ok files at level disabled and refused $n_refused models"
# cases ORT refused have no model: drop their folders so conformance does not count them
grep '^refused ' "$tmp/converted-disabled" | while read -r _ m _; do
    rel=$(dirname "${m#"$data"/}")
    rm -rf "${tmp:?}/cases/$rel"
done
sets=()
for s in node pytorch-converted pytorch-operator simple; do [ -d "$tmp/cases/$s" ] && sets+=("$tmp/cases/$s"); done
"$passcheck" conformance --quiet --errata "$src/tests/conformance/errata.txt" --write-expect "$tmp/ort-outcomes" \
    "${sets[@]}" >"$tmp/conformance.log" 2>&1 || true
# each converted case's outcome against the ONNX original's, minus the documented differences
awk -v diffs="$here/corpus-differences.txt" '
    BEGIN { while ((getline l < diffs) > 0) { if (l ~ /^#/ || l == "") continue; split(l, f, " "); doc[f[1]] = f[2] } }
    FNR == NR { if ($0 !~ /^#/ && NF >= 2) want[$1] = $2; next }
    $0 ~ /^#/ || NF < 2 { next }
    {
        n++
        if (($1 in doc) && doc[$1] == $2) { documented++; next }
        if (!($1 in want)) { printf "%s: %s, not in the ONNX expectations\n", $1, $2; bad++; next }
        if (want[$1] != $2) { printf "%s: %s as ORT format, %s as ONNX\n", $1, $2, want[$1]; bad++ }
    }
    END { printf "%d cases compared, %d documented differences, %d unexpected\n", n, documented, bad; exit bad > 0 }
' "$src/tests/conformance/expected.txt" "$tmp/ort-outcomes" || fail=1

# basic: every file ORT writes loads (runtime optimization records, ORT's contrib-op rewrites)
mkdir -p "$tmp/basic"
awk -F'\t' -v out="$tmp/basic" '{ n = split($1, p, "/"); printf "%s\t%s/%s__%s.ort\n", $1, out, p[n - 2], p[n - 1] }' \
    "$tmp/manifest-disabled" >"$tmp/manifest-basic"
node "$here/ort_convert.js" "$ort_dir" basic <"$tmp/manifest-basic" >"$tmp/converted-basic"
n_basic=0 n_basic_bad=0
for f in "$tmp"/basic/*.ort; do
    [ -e "$f" ] || continue
    n_basic=$((n_basic + 1))
    if ! "$passcheck" info "$f" >/dev/null 2>"$tmp/info.err"; then
        echo "level basic: $(cat "$tmp/info.err")"
        n_basic_bad=$((n_basic_bad + 1))
    fi
done
echo "level basic: $n_basic files ORT wrote, $n_basic_bad refused by passcheck"
[ "$n_basic_bad" -eq 0 ] || fail=1
exit $fail
