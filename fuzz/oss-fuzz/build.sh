#!/bin/bash -eu
# OSS-Fuzz build script for passcheck: builds every fuzz target (fuzz_onnx_load, fuzz_pipeline, fuzz_ort_load)
# with the environment OSS-Fuzz provides ($CC, $CFLAGS with the sanitizer and -fsanitize=fuzzer-no-link,
# $LIB_FUZZING_ENGINE, $OUT, $SRC, $WORK) and puts into $OUT: the binaries, <target>_seed_corpus.zip,
# <target>.dict (the targets that have a dictionary) and <target>.options (libFuzzer flags).
#
# Also run locally by ctest fuzz_oss_fuzz_build (tests/fuzz/run_oss_fuzz_build.sh) with clang and
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer. Overrides for that: PASSCHECK_SRC (default $SRC/passcheck),
# PC_BUILD_JOBS (default: all cores).
src="${PASSCHECK_SRC:-$SRC/passcheck}"
build="$WORK/passcheck-build"
targets=(fuzz_onnx_load fuzz_pipeline fuzz_ort_load)

# The library's invariant checks (PC_DEBUG_CHECKS, on in passcheck's own Debug and sanitizer builds) turn
# silent corruption into reports. Build type "OSSFuzz" has no flags of its own, so $CFLAGS decide
# optimization and debug info (CMake's default here would be Release: -O3 -DNDEBUG).
export CFLAGS="$CFLAGS -DPC_DEBUG_CHECKS=1"
# The runner image has neither protobuf-c nor OpenBLAS: the shared libraries the binaries need are copied to
# $OUT/lib below and found through an $ORIGIN rpath.
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=OSSFuzz \
    -DPC_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" -DPC_SANITIZE=OFF -DPC_WERROR=OFF \
    -DCMAKE_BUILD_RPATH='$ORIGIN/lib'
cmake --build "$build" -j"${PC_BUILD_JOBS:-$(nproc)}" --target "${targets[@]}"

mkdir -p "$OUT/lib"
for t in "${targets[@]}"; do
    cp "$build/fuzz/$t" "$OUT/"
    # every non-glibc shared library the binary loads
    ldd "$OUT/$t" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
        case "$(basename "$lib")" in
        libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libgcc_s.so* | libstdc++.so*) ;;
        *) cp -L "$lib" "$OUT/lib/" ;;
        esac
    done
done

seed_zip() { # seed_zip TARGET DIR: every file of DIR, flat
    rm -f "$OUT/$1_seed_corpus.zip"
    (cd "$2" && find . -maxdepth 1 -type f -print0 | sort -z | xargs -0 zip -q -j "$OUT/$1_seed_corpus.zip")
}
seed_zip fuzz_onnx_load "$src/corpus/onnx"
seed_zip fuzz_pipeline "$src/corpus/pipeline"
seed_zip fuzz_ort_load "$src/corpus/ort"

# fuzz_pipeline's bytes are choice draws, not a file format: no dictionary
cp "$src/fuzz/onnx.dict" "$OUT/fuzz_onnx_load.dict"
cp "$src/fuzz/ort.dict" "$OUT/fuzz_ort_load.dict"

# the flags ci/fuzz passes (ci/fuzz, fuzz/README.md)
printf '[libfuzzer]\nmax_len = 1048576\ntimeout = 20\n' >"$OUT/fuzz_onnx_load.options"
printf '[libfuzzer]\nmax_len = 4096\ntimeout = 60\nentropic = 0\n' >"$OUT/fuzz_pipeline.options"
printf '[libfuzzer]\nmax_len = 65536\ntimeout = 20\n' >"$OUT/fuzz_ort_load.options"
