#!/bin/sh
# bench/mpi/run.sh [BUILD_DIR] — per-wrapped-call cost of libjager-mpi.so (2 ranks, MPICH).
# Recording goes to a temporary file; its drop count is printed (the cost counted is
# the recorded path's only if nothing was dropped).
set -e
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mpiexec -n 2 -genv LD_PRELOAD "$B/lib/libjager.so:$B/plugins/libjager-mpi.so" \
  -genv JAGER_OUTPUT "$T/bench.%r.jgr" -genv JAGER_MPI_AGGREGATE 0 -genv JAGER_RING_BYTES 32M -genv JAGER_QUIET 1 "$B/bin/bench_mpi" "$2" "$3"
"$B/bin/jager" info "$T/bench.0.jgr" | grep -E '^(events|dropped)'
