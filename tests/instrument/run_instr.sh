#!/bin/sh
# Record an instrumented program with libjager-instrument.so preloaded, then check it.
#   run_instr.sh PROG CHECK LIBINSTRUMENT OUT FILTER EXPECT...   (FILTER "" = none)
set -u
prog=$1 check=$2 lib=$3 out=$4 filter=$5
shift 5
rm -f "$out"
env JAGER_QUIET=1 JAGER_OUTPUT="$out" JAGER_INSTRUMENT_FILTER="$filter" LD_PRELOAD="$lib" "$prog" > /dev/null || {
  echo "FAIL: $prog exited $?"; exit 1; }
# Without the library the same program runs (glibc's no-op hooks) and writes nothing.
rm -f "$out.plain"
env JAGER_OUTPUT="$out.plain" "$prog" > /dev/null || { echo "FAIL: $prog without the library"; exit 1; }
[ ! -e "$out.plain" ] || { echo "FAIL: a recording without the library"; exit 1; }
exec "$check" "$out" "$@"
