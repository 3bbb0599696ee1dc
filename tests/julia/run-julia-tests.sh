#!/usr/bin/env bash
# run-julia-tests.sh <libjager.so> <abi_sizes program> [part] — the Julia binding's test suite
# (part "dispatch": the dispatch sensor's tests)
# under ctest. Julia comes from scripts/install-julia.sh: if it cannot be installed the
# test fails (it is never skipped). A temporary depot keeps ~/.julia untouched.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=${1:?usage: run-julia-tests.sh <libjager.so> <abi_sizes>}
abi=${2:?usage: run-julia-tests.sh <libjager.so> <abi_sizes>}
if ! julia=$("$root/scripts/install-julia.sh" --print); then
  echo "run-julia-tests: Julia could not be installed (scripts/install-julia.sh failed)" >&2
  exit 1
fi
depot=$(mktemp -d)
trap 'rm -rf "$depot"' EXIT
# Two threads: thread_tests.jl checks exact per-thread signature counts.
export JULIA_DEPOT_PATH="$depot" JAGER_LIB="$lib" JAGER_ABI_SIZES="$abi" JAGER_QUIET=1 JULIA_NUM_THREADS=2
# Plugins built next to the library (the dispatch and gc tests load them).
export JAGER_PLUGIN_PATH="${JAGER_PLUGIN_PATH:-$(dirname "$lib")/../plugins}"
exec "$julia" --startup-file=no --project="$root/bindings/julia" "$root/bindings/julia/test/runtests.jl" "${@:3}"
