#!/usr/bin/env bash
# run-binding-cost.sh <libjager.so> [rounds] [scale] — bench/julia/binding_cost.jl with Julia from
# scripts/install-julia.sh and a temporary depot.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
depot=$(mktemp -d)
trap 'rm -rf "$depot"' EXIT
JAGER_PLUGIN_PATH="${JAGER_PLUGIN_PATH:-$(dirname "${1:-.}")/../plugins}" \
JULIA_DEPOT_PATH="$depot" JAGER_LIB="${1:?usage: run-binding-cost.sh <libjager.so> [rounds] [scale]}" \
  "$julia" --startup-file=no --project="$root/bindings/julia" "$root/bench/julia/binding_cost.jl" "${@:2}"
