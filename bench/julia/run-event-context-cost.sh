#!/usr/bin/env bash
# run-event-context-cost.sh <libjager.so> [N] — bench/julia/event_context_cost.jl with Julia
# from scripts/install-julia.sh and a temporary depot.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
depot=$(mktemp -d)
trap 'rm -rf "$depot"' EXIT
JULIA_DEPOT_PATH="$depot" JAGER_LIB="${1:?usage: run-event-context-cost.sh <libjager.so> [N]}" JAGER_QUIET=1 \
  "$julia" --startup-file=no --project="$root/bindings/julia" "$root/bench/julia/event_context_cost.jl" "${@:2}"
