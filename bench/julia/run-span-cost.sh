#!/usr/bin/env bash
# run-span-cost.sh <libjager.so> [N] — bench/julia/span_cost.jl with Julia from
# scripts/install-julia.sh and a temporary depot.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
depot=$(mktemp -d)
trap 'rm -rf "$depot"' EXIT
JULIA_DEPOT_PATH="$depot" JAGER_LIB="${1:?usage: run-span-cost.sh <libjager.so> [N]}" \
  "$julia" --startup-file=no --project="$root/bindings/julia" "$root/bench/julia/span_cost.jl" "${@:2}"
