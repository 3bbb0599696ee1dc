#!/bin/sh
# run_julia.sh FILE ARGS… — run a Julia test file with the project's Julia (1.5.3 from
# scripts/install-julia.sh, installed on first use). When no Julia can be had the test
# fails: these tests never skip.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print) || { echo "run_julia.sh: Julia could not be installed" >&2; exit 1; }
[ -x "$julia" ] || { echo "run_julia.sh: no julia at '$julia'" >&2; exit 1; }
# Precompilation caches go to the build tree, not ~/.julia.
: "${JULIA_DEPOT_PATH:=${JAGER_TEST_DEPOT:-$root/.cache/julia-depot}}"
export JULIA_DEPOT_PATH
exec "$julia" --startup-file=no "$@"
