#!/bin/sh
# Cost of the openmp plugin per parallel region: the same program plain and recorded,
# alternately, for the GCC (libgomp interposition) and Clang (libomp OMPT) builds.
#   bench_omp.sh LIBJAGER PLUGIN_DIR BIN_GCC [BIN_CLANG] [REGIONS] [THREADS]
set -u
lib=$1 dir=$2 gcc_bin=$3 clang_bin=${4:-} regions=${5:-2000} threads=${6:-2}
out=${TMPDIR:-/tmp}/bench_omp.$$.jgr
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_DYNAMIC=false JAGER_QUIET=1 JAGER_RING_BYTES=64M
one() { # one BIN MODE → ns per region
  if [ "$2" = plain ]; then "$1" "$regions" "$threads"
  else JAGER_PLUGINS=openmp JAGER_PLUGIN_PATH="$dir" JAGER_OUTPUT="$out" LD_PRELOAD="$lib $dir/libjager-openmp.so" \
         "$1" "$regions" "$threads"; fi
}
row() { # row NAME BIN
  p=$(one "$2" plain); r=$(one "$2" rec); p2=$(one "$2" plain); r2=$(one "$2" rec)
  [ "$p2" -lt "$p" ] && p=$p2; [ "$r2" -lt "$r" ] && r=$r2
  awk -v n="$1" -v p="$p" -v r="$r" -v t="$threads" 'BEGIN {
    printf "  %-22s plain %8.0f ns/region  recorded %8.0f ns/region  ratio %.2fx  cost %+.0f ns/region (%d threads: %d spans)\n",
           n, p, r, r / p, r - p, t, 1 + 2 * t }'
}
echo "openmp plugin, best of 7 × $regions regions in each of 2 runs, $threads threads, OMP_WAIT_POLICY=$OMP_WAIT_POLICY:"
row "GCC libgomp (gomp)" "$gcc_bin"
[ -n "$clang_bin" ] && row "Clang libomp (OMPT)" "$clang_bin"
rm -f "$out"
