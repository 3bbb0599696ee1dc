#!/bin/sh
# Build and run the tools' libFuzzer target (fuzz_tools.c: every `jager` command on each
# input) for a bounded time. The tools are built in a tree of their own under WORK_DIR with
# clang, ASan+UBSan and -fsanitize=fuzzer-no-link (coverage of the tools' code, not only of
# the target's); later runs rebuild what changed. Seeds: the seed generator's recordings and
# the committed corpus (tests/file/fuzz-corpus, read-only: new inputs go to WORK_DIR/corpus;
# a crash's reproducer belongs in fuzz-corpus with its fix). Exits 77 (ctest
# SKIP_RETURN_CODE) with a message when clang or libFuzzer is missing.
# usage: run_fuzz_tools.sh SOURCE_DIR WORK_DIR SEEDS_PROGRAM SECONDS
set -u
src=$1 work=$2 seeds=$3 secs=$4
mkdir -p "$work" || exit 1
cc=${JAGER_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: $cc not found; install clang and libclang-rt-dev to run the tools fuzzer"
    exit 77
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$work/probe.c"
if ! "$cc" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >/dev/null 2>&1; then
    echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer); install libclang-rt-dev"
    exit 77
fi
# The sanitizers through the flags, not JAGER_SANITIZE: clang links no sanitizer runtime into
# a shared library, and the core's modules link with --no-undefined (-shared-libsan gives
# them the runtime; the fuzzer itself links it statically and loads none of them).
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f "$work/build/CMakeCache.txt" ]; then
    cmake -S "$src" -B "$work/build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJAGER_FUZZ=ON \
        -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
        -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined -shared-libsan" \
        -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined -shared-libsan" \
        -DJAGER_BUILD_PLUGINS=OFF -DJAGER_TEST_UNIT_ONLY=ON >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log"; rm -f "$work/build/CMakeCache.txt"; exit 1; }
fi
nice -n 10 cmake --build "$work/build" --target fuzz_tools -j2 >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log"; exit 1; }
fuzzer=$(find "$work/build/tests/file" -maxdepth 1 -name fuzz_tools -type f | head -1)
[ -x "$fuzzer" ] || { echo "run_fuzz_tools.sh: no fuzz_tools in $work/build"; exit 1; }
rm -rf "$work/seeds" && mkdir -p "$work/seeds" "$work/corpus" "$work/tmp" || exit 1
JAGER_QUIET=1 "$seeds" "$work/seeds" || exit 1
# -close_fd_mask=2: the commands' messages on bad input are expected; libFuzzer's report
# (and the sanitizers') still comes through.
TMPDIR="$work/tmp" exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -close_fd_mask=2 -artifact_prefix="$work/" "$work/corpus" "$work/seeds" "$src/tests/file/fuzz-corpus"
