#!/usr/bin/env bash
# run-pic-example.sh <jager command> <libjager.so> — examples/pic.jl end to end, as a user
# runs it: JAGER_PLUGINS=dispatch JAGER_OUTPUT=… julia examples/pic.jl, then the `jager`
# command must find in the file both weight signatures of `scatter!` with their exact call
# counts (600 Float32 and 400 Float64 particles × 10 steps) and the type instability of
# `deposit!`. Julia comes from scripts/install-julia.sh; failing to install it fails the test.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jager=${1:?usage: run-pic-example.sh <jager> <libjager.so>}
lib=${2:?usage: run-pic-example.sh <jager> <libjager.so>}
if ! julia=$("$root/scripts/install-julia.sh" --print); then
  echo "run-pic-example: Julia could not be installed (scripts/install-julia.sh failed)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JULIA_DEPOT_PATH="$tmp/depot" JAGER_LIB="$lib" JAGER_QUIET=1
export JAGER_PLUGIN_PATH="${JAGER_PLUGIN_PATH:-$(dirname "$lib")/../plugins}"
JAGER_PLUGINS=dispatch JAGER_OUTPUT="$tmp/pic.jgr" \
  "$julia" --startup-file=no --project="$root/bindings/julia" "$root/examples/pic.jl"

summary=$("$jager" summary "$tmp/pic.jgr" --format json)
hunt=$("$jager" hunt "$tmp/pic.jgr" --format json --min-pct 0)
fail=0
expect() { # expect <what> <text> <extended regex>
  if ! grep -Eq -- "$3" <<<"$2"; then echo "run-pic-example: missing $1 (/$3/)" >&2; fail=1; fi
}
expect "Float32 signature ×6000" "$summary" 'typeof\(scatter!\),[^"]*Float32\}","calls":6000\}'
expect "Float64 signature ×4000" "$summary" 'typeof\(scatter!\),[^"]*Float64,[^"]*Float64\}","calls":4000\}'
expect "dispatch.instability events" "$summary" '"name":"dispatch.instability","count":1,'
expect "the instability finding" "$hunt" '"kind":"type_instability"'
expect "its reason" "$hunt" 'runtime dispatch: `scatter!\([^`]*AbstractFloat\)` at pic\.jl:[0-9]+'
exit $fail
