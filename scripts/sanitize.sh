#!/usr/bin/env bash
# sanitize.sh SANITIZERS BUILD_DIR [AREA…] — build the project with -fsanitize=SANITIZERS in
# BUILD_DIR and run the tests labelled `unit` there (the test areas that hold them come from
# tests/CMakeLists.txt: JAGER_TEST_UNIT_ONLY), and those of each extra AREA (its tests carry
# the area's label, e.g. mpi). Exit status: ctest's.
set -euo pipefail
san=$1; dir=$2; shift 2
extra=$(IFS=';'; echo "$*")
labels=unit
for a in "$@"; do labels="$labels|$a"; done
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJAGER_SANITIZE="$san" -DJAGER_WERROR=ON \
  -DJAGER_TEST_UNIT_ONLY=ON "-DJAGER_TEST_EXTRA_AREAS=$extra" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j2 >"$dir.build.log" 2>&1 || { "$root/scripts/build-failed.sh" "$dir.build.log"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
ctest --test-dir "$dir" -L "^($labels)\$" --output-on-failure -j2
