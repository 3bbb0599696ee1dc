#!/usr/bin/env bash
# test.sh — everything a fresh machine needs, then every test: Debian packages, npm peers and
# Julia (install-deps.sh), a warnings-as-errors build, and one ctest run that covers the unit
# tests, the plugin ABI and abidiff checks, Julia, the real peers (DuckDB, hyparquet, go tool
# pprof, Chromium), the fuzzer, and the sanitizer and valgrind re-runs. "N passed, N failed"
# closes the output; the exit status is non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${JAGER_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJAGER_WERROR=ON -DBUILD_TESTING=ON >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$build.build.log" 2>&1 || { "$root/scripts/build-failed.sh" "$build.build.log"; exit 1; }
echo "build: ok ($build, log in $build.build.log)"
# ctest prints its label and time summaries after the pass/fail line: the last line here
# restates that line as "N passed, N failed", and the exit status is ctest's. Above it, the
# failure digest names each failed test's cause (CI shows the end of the log).
set +e
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${JAGER_CTEST_ARGS:-} 2>&1 | tee "$build.ctest.log"
rc=${PIPESTATUS[0]}
set -e
python3 "$root/scripts/ctest-digest.py" "$build.ctest.log" || true
line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$build.ctest.log" | tail -1)
if [ -n "$line" ]; then
  failed=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
  total=$(echo "$line" | sed -E 's/.*failed out of ([0-9]+).*/\1/')
  echo "$((total - failed)) passed, $failed failed"
else
  echo "0 passed, 1 failed (ctest printed no summary; exit $rc)"
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
