#!/bin/sh
# Build (unless given) and run the .jgr reader's libFuzzer target for a bounded time,
# from a seed corpus of real recordings. Exits 77 (ctest SKIP_RETURN_CODE) with a message
# when clang or libFuzzer is missing.
# usage: run_fuzz.sh SOURCE_DIR WORK_DIR SEEDS_PROGRAM SECONDS [PREBUILT_FUZZER]
set -u
src=$1 work=$2 seeds=$3 secs=$4 fuzzer=${5:-}
mkdir -p "$work" || exit 1
if [ -z "$fuzzer" ] || [ ! -x "$fuzzer" ]; then
    cc=${JAGER_FUZZ_CC:-clang}
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "SKIP: $cc not found; install clang and libclang-rt-dev to run the reader fuzzer"
        exit 77
    fi
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$work/probe.c"
    if ! "$cc" -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >/dev/null 2>&1; then
        echo "SKIP: $cc cannot link libFuzzer (-fsanitize=fuzzer); install libclang-rt-dev"
        exit 77
    fi
    lz4=$(pkg-config --cflags --libs liblz4 2>/dev/null || echo -llz4)
    fuzzer="$work/fuzz_reader"
    # shellcheck disable=SC2086
    "$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$src/sdk/include" -I"$src/sdk/src" "$src/tests/file/fuzz_reader.c" "$src"/sdk/src/reader/*.c \
        "$src/sdk/src/status.c" "$src/sdk/src/containers.c" $lz4 -o "$fuzzer" || exit 1
fi
rm -rf "$work/seeds" && mkdir -p "$work/seeds" "$work/corpus" || exit 1
JAGER_QUIET=1 "$seeds" "$work/seeds" || exit 1
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" "$work/seeds"
