#!/usr/bin/env bash
# ctest fuzz_oss_fuzz_build: fuzz/oss-fuzz/build.sh run the way OSS-Fuzz runs it (address sanitizer,
# libFuzzer), in a temporary directory: $SRC/passcheck is this checkout, $WORK the build tree, $OUT the result.
# Checks that every fuzz target, its seed corpus zip, its dictionary (where it has one) and its options file
# land in $OUT, that the binaries find their shared libraries in $OUT/lib, and that each binary replays its
# seed corpus (-runs=0) cleanly.
# usage: run_oss_fuzz_build.sh SOURCE_ROOT CLANG     (PC_BUILD_JOBS: build parallelism, default all cores)
set -uo pipefail
root=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check WHAT COMMAND...
    if "${@:2}" >/dev/null 2>&1; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi
}

export SRC="$tmp/src" WORK="$tmp/work" OUT="$tmp/out"
mkdir -p "$SRC" "$WORK" "$OUT"
ln -s "$root" "$SRC/passcheck"
export CC="$cc" CXX="${cc/clang/clang++}"
# OSS-Fuzz's address-sanitizer flags (infra/base-images/base-builder: SANITIZER_FLAGS_address, COVERAGE_FLAGS)
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
-fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS" LIB_FUZZING_ENGINE="-fsanitize=fuzzer" SANITIZER=address FUZZING_ENGINE=libfuzzer

start=$SECONDS
if ! (cd "$SRC/passcheck" && bash "$SRC/passcheck/fuzz/oss-fuzz/build.sh") >"$tmp/build.log" 2>&1; then
    tail -n 40 "$tmp/build.log"
    echo "FAIL: fuzz/oss-fuzz/build.sh failed"
    exit 1
fi
echo "ok: build.sh ran in $((SECONDS - start)) s"

for t in fuzz_onnx_load fuzz_pipeline fuzz_ort_load; do
    check "$t built" test -x "$OUT/$t"
    check "$t links the engine (LLVMFuzzerTestOneInput and libFuzzer's main)" \
        sh -c "nm '$OUT/$t' | grep -q ' T LLVMFuzzerTestOneInput' && '$OUT/$t' -help=1 2>&1 | grep -q runs"
    check "$t finds its libraries in \$OUT/lib" sh -c "! ldd '$OUT/$t' | grep -q 'not found' &&
        ldd '$OUT/$t' | grep -q '$OUT/lib/libprotobuf-c'"
    check "${t}_seed_corpus.zip" test -s "$OUT/${t}_seed_corpus.zip"
    check "$t.options" grep -q '^\[libfuzzer\]' "$OUT/$t.options"
    mkdir -p "$tmp/seeds/$t"
    unzip -q "$OUT/${t}_seed_corpus.zip" -d "$tmp/seeds/$t"
    dict=()
    if [[ $t != fuzz_pipeline ]]; then
        check "$t.dict" test -s "$OUT/$t.dict"
        dict=(-dict="$OUT/$t.dict")
    fi
    n=$(find "$tmp/seeds/$t" -type f | wc -l)
    if PC_FUZZ_OUT="$tmp/pipeline-failures" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$OUT/$t" -runs=0 -timeout=60 -rss_limit_mb=2048 -max_len=1048576 "${dict[@]}" \
        -artifact_prefix="$tmp/" "$tmp/seeds/$t" >"$tmp/$t.log" 2>&1; then
        echo "ok: $t replays its $n seeds"
    else
        tail -n 30 "$tmp/$t.log"
        echo "FAIL: $t -runs=0 over its $n seeds"
        fails=$((fails + 1))
    fi
done
check "fuzz_ort_load has its custom mutator" sh -c "nm '$OUT/fuzz_ort_load' | grep -q ' T LLVMFuzzerCustomMutator'"

if ((fails)); then
    echo "fuzz_oss_fuzz_build: $fails check(s) failed"
    exit 1
fi
echo "fuzz_oss_fuzz_build: all checks passed"
