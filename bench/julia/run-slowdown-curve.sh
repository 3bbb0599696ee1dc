#!/usr/bin/env bash
# run-slowdown-curve.sh <libjager.so> [rounds] [plugins] — bench/julia/slowdown_curve.jl with Julia
# from scripts/install-julia.sh and a temporary depot.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
depot=$(mktemp -d)
trap 'rm -rf "$depot"' EXIT
JAGER_PLUGIN_PATH="${JAGER_PLUGIN_PATH:-$(dirname "${1:-.}")/../plugins}" \
JULIA_DEPOT_PATH="$depot" JAGER_LIB="${1:?usage: run-slowdown-curve.sh <libjager.so> [rounds] [plugins]}" \
  "$julia" --startup-file=no --project="$root/bindings/julia" "$root/bench/julia/slowdown_curve.jl" "${@:2}"
