#!/usr/bin/env bash
# test.sh — everything a fresh machine needs, then every test: Debian packages, npm peers and
# Julia (install-deps.sh), a warnings-as-errors build, and one ctest run that covers the unit
# tests, the plugin ABI and abidiff checks, Julia, the real peers (DuckDB, hyparquet, go tool
# pprof, Chromium), the fuzzer, and the sanitizer and valgrind re-runs. ctest's summary line
# closes the output; the exit status is non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${JAGER_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJAGER_WERROR=ON -DBUILD_TESTING=ON >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$build.build.log" 2>&1 || { "$root/scripts/build-failed.sh" "$build.build.log"; exit 1; }
echo "build: ok ($build, log in $build.build.log)"
exec ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${JAGER_CTEST_ARGS:-}
