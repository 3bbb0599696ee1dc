#!/bin/sh
# Record an OpenMP program with the openmp plugin preloaded, then check the recording.
#   run_omp.sh PROG CHECK LIBJAGER PLUGIN_DIR OUT REGIONS THREADS SKEW_MS RUNTIME
set -u
prog=$1 check=$2 lib=$3 dir=$4 out=$5 regions=$6 threads=$7 skew=$8 runtime=$9
rm -f "$out"
# Passive waits: the test machine may have fewer cores than threads.
env OMP_WAIT_POLICY=passive OMP_DYNAMIC=false JAGER_QUIET=1 JAGER_PLUGINS=openmp JAGER_PLUGIN_PATH="$dir" \
    JAGER_OUTPUT="$out" LD_PRELOAD="$lib $dir/libjager-openmp.so" "$prog" "$regions" "$threads" "$skew" || {
  echo "FAIL: $prog exited $?"; exit 1; }
exec "$check" "$out" "$regions" "$threads" "$skew" "$runtime"
