#!/bin/sh
# Record an OpenMP program with the openmp plugin preloaded, then check the recording.
#   run_omp.sh PROG CHECK LIBJAGER PLUGIN_DIR OUT REGIONS THREADS SKEW_MS RUNTIME
set -u
prog=$1 check=$2 lib=$3 dir=$4 out=$5 regions=$6 threads=$7 skew=$8 runtime=$9
rm -f "$out"
# OMP_RUN_MODE: preload (default): both libraries preloaded; tool_libraries: libjager
# preloaded and the plugin named in OMP_TOOL_LIBRARIES (libomp loads it);
# not_preloaded: libjager only: the plugin records nothing and says why (JAGER = jager).
# other_copy: the core loads a copy from another folder than the preloaded file (it hands
# its callbacks to the preloaded copy).
mode=${OMP_RUN_MODE:-preload}
pre="$lib $dir/libjager-openmp.so" tool= path=$dir
case $mode in
  preload) ;;
  other_copy) path=$out.d; rm -rf "$path"; mkdir -p "$path" && cp "$dir/libjager-openmp.so" "$path/" || exit 1 ;;
  tool_libraries) pre=$lib tool=$dir/libjager-openmp.so ;;
  *) pre=$lib ;;
esac
# Passive waits: the test machine may have fewer cores than threads.
env OMP_WAIT_POLICY=passive OMP_DYNAMIC=false JAGER_QUIET=1 JAGER_PLUGINS=openmp JAGER_PLUGIN_PATH="$path" \
    OMP_TOOL_LIBRARIES="$tool" JAGER_OUTPUT="$out" LD_PRELOAD="$pre" "$prog" "$regions" "$threads" "$skew" || {
  echo "FAIL: $prog exited $?"; exit 1; }
if [ "$mode" = not_preloaded ]; then
  "$JAGER" dump "$out" > "$out.txt" || { echo "FAIL: jager dump"; exit 1; }
  grep -q '"type":"span"' "$out.txt" && { echo "FAIL: spans recorded without the plugin in place"; exit 1; }
  grep -q "$OMP_EXPECT_DIAG" "$out.txt" || { echo "FAIL: no diagnostic '$OMP_EXPECT_DIAG'"; exit 1; }
  grep -q '"runtime":"none"' "$out.txt" || { echo "FAIL: openmp.summary does not say runtime none"; exit 1; }
  echo "not preloaded: no spans, diagnostic found"; exit 0
fi
exec "$check" "$out" "$regions" "$threads" "$skew" "$runtime"
