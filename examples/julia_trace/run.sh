#!/usr/bin/env bash
# run.sh <jager CLI> [julia] — run socket_trace.jl as a receiver and a sender (two Julia
# processes), merge their recordings with `jager merge` and check that the merged file holds
# one trace: every context record and every log record's trace id is the same, and both
# processes (parts) have one. Exit 0 when so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
jager=${1:?usage: run.sh <jager CLI> [julia]}
julia=${2:-$("$root/scripts/install-julia.sh" --print)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export JULIA_DEPOT_PATH=${JULIA_DEPOT_PATH:-$work/depot}
run() { "$julia" --startup-file=no --project="$root/bindings/julia" "$here/socket_trace.jl" "$@"; }
run receive "$work/port" "$work/receive.jgr" &
rpid=$!
run send "$work/port" "$work/send.jgr"
wait "$rpid"
"$jager" merge "$work/send.jgr" "$work/receive.jgr" -o "$work/both.jgr"
"$jager" dump "$work/both.jgr" > "$work/both.json"
ids=$(grep -o '"trace_id":"[0-9a-f]*"' "$work/both.json" | grep -v '"trace_id":"00000000000000000000000000000000"' | sort -u)
n=$(printf '%s\n' "$ids" | grep -c . || true)
ctx=$(grep -c '"type":"context"' "$work/both.json" || true)
echo "trace ids in the merged recording: $n ($ids); context records: $ctx"
[ "$n" -eq 1 ] && [ "$ctx" -ge 2 ] || { echo "run.sh: expected one trace in both processes" >&2; exit 1; }
