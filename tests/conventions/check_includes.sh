#!/usr/bin/env bash
# House conventions a compiler does not check (CONTRIBUTING.md):
#  - one include style: project headers by their path from the repository root ("core/ir/ir_internal.h"), never
#    a bare name or a "../" path;
#  - layers: core <- reference <- generators <- properties <- tools (bench and fuzz sit with tools); a file includes
#    nothing from a layer above its own, and outside core/ only core/passcheck.h and core/internal.h from core
#    (tests may include any header);
#  - no absolute path of a machine in a tracked file.
# Usage: check_includes.sh [REPO]. Prints each violation as FILE:LINE: reason; exit 1 when there is one.
set -uo pipefail
cd "${1:-$(dirname "$0")/../..}" || exit 2
bad=0
report() { echo "$1"; bad=1; }

layer_rank() { # the rank of a path's layer, or "" for tests
    case $1 in
    core/*) echo 0 ;;
    reference/*) echo 1 ;;
    generators/*) echo 2 ;;
    properties/*) echo 3 ;;
    tools/* | bench/* | fuzz/*) echo 4 ;;
    *) echo "" ;;
    esac
}

while IFS= read -r file; do
    rank=$(layer_rank "$file")
    while IFS=: read -r line text; do
        inc=${text#*\"}
        inc=${inc%%\"*}
        case $inc in
        onnx.pb-c.h) [ "$rank" = 0 ] || [ -z "$rank" ] || report "$file:$line: onnx.pb-c.h is core/onnx's own" ; continue ;;
        esac
        if [ ! -f "$inc" ]; then
            report "$file:$line: \"$inc\" is not a path from the repository root"
            continue
        fi
        [ -z "$rank" ] && continue
        irank=$(layer_rank "$inc")
        if [ -z "$irank" ]; then
            report "$file:$line: includes a test header \"$inc\""
        elif [ "$irank" -gt "$rank" ]; then
            report "$file:$line: \"$inc\" is in a layer above this file's"
        elif [ "$irank" = 0 ] && [ "$rank" != 0 ] && [ "$inc" != core/passcheck.h ] && [ "$inc" != core/internal.h ]; then
            report "$file:$line: outside core, include core/passcheck.h or core/internal.h, not \"$inc\""
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file")
done < <(git ls-files '*.c' '*.h')

# Paths of a machine: a home, root's home or the build machine's work folder.
while IFS= read -r hit; do
    report "$hit: names a path of one machine"
done < <(git grep -nE '(^|[^$A-Za-z_.~])/(work|root|home)/' -- ':!corpus' ':!tests/conventions/check_includes.sh' || true)

if [ $bad -ne 0 ]; then
    echo "check_includes: conventions broken (see CONTRIBUTING.md)"
    exit 1
fi
echo "check_includes: $(git ls-files '*.c' '*.h' | wc -l) files follow the include and layer rules"
