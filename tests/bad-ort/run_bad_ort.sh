#!/usr/bin/env bash
# ctest ort_bad_inputs: every crafted file in tests/bad-ort is refused by `passcheck info` as expected.tsv says
# (file, status, message substring): exit 3, stderr naming the file, "[status]" and the substring, nothing on
# stdout. The manifest and the folder must list the same .ort files, so a file cannot go unchecked nor an
# expectation unmet. With python3, make_bad_ort.py --check also confirms the files are what the generator
# makes from tests/ort/data.
# usage: run_bad_ort.sh PASSCHECK
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: run_bad_ort.sh PASSCHECK" >&2
    exit 2
fi
pc=$1
here=$(cd "$(dirname "$0")" && pwd)
manifest=$here/expected.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
}

# the manifest: three tab-separated fields per line, each file once
: >"$tmp/listed"
line_no=0
while IFS= read -r line || [ -n "$line" ]; do
    line_no=$((line_no + 1))
    case $line in '#'* | '') continue ;; esac
    IFS=$'\t' read -r file status needle extra <<<"$line"
    if [ -z "$file" ] || [ -z "$status" ] || [ -z "$needle" ] || [ -n "${extra:-}" ]; then
        fail "expected.tsv line $line_no: want FILE<tab>STATUS<tab>SUBSTRING, got '$line'"
        continue
    fi
    printf '%s\n' "$file" >>"$tmp/listed"
done <"$manifest"
sort "$tmp/listed" >"$tmp/listed.sorted"
(cd "$here" && find . -maxdepth 1 -name '*.ort' -printf '%f\n' | sort) >"$tmp/present"
if [ ! -s "$tmp/present" ]; then fail "no .ort files in $here"; fi
while read -r f; do fail "$f is listed twice in expected.tsv"; done < <(uniq -d "$tmp/listed.sorted")
while read -r f; do fail "$f has no line in expected.tsv"; done < <(comm -13 <(uniq "$tmp/listed.sorted") "$tmp/present")
while read -r f; do fail "expected.tsv lists $f, which is not in $here"; done < <(comm -23 <(uniq "$tmp/listed.sorted") "$tmp/present")

# each file: exit 3, the path, the status and the substring on stderr, an empty stdout
while IFS=$'\t' read -r file status needle; do
    case $file in '#'* | '') continue ;; esac
    path=$here/$file
    [ -f "$path" ] || continue # reported above
    rc=0
    "$pc" info "$path" >"$tmp/out" 2>"$tmp/err" || rc=$?
    err=$(cat "$tmp/err")
    problems=()
    [ "$rc" -eq 3 ] || problems+=("exit $rc, not 3")
    grep -qF -- "$path" "$tmp/err" || problems+=("stderr does not name the file")
    grep -qF -- "error [$status]" "$tmp/err" || problems+=("stderr lacks 'error [$status]'")
    grep -qF -- "$needle" "$tmp/err" || problems+=("stderr lacks '$needle'")
    [ ! -s "$tmp/out" ] || problems+=("stdout is not empty: $(head -c 200 "$tmp/out")")
    if [ ${#problems[@]} -eq 0 ]; then
        passed=$((passed + 1))
    else
        fail "$file: $(
            IFS=';'
            echo "${problems[*]}"
        ); stderr: ${err:0:400}"
    fi
done <"$manifest"

if command -v python3 >/dev/null 2>&1; then
    if python3 "$here/make_bad_ort.py" --check >"$tmp/check" 2>&1; then
        passed=$((passed + 1))
    else
        fail "the files differ from what make_bad_ort.py makes: $(cat "$tmp/check")"
    fi
else
    echo "python3 not found: make_bad_ort.py --check not run"
fi

echo "ort_bad_inputs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
