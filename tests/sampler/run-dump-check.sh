#!/bin/sh
# Heavy span traffic on 4 threads (enough CPU time for 20+ samples at a 250 Hz tick) sampled at 10 kHz, read back with `jager dump`: the file
# parses to its end, every span is there (count exact: JAGER_SAMPLE=all, no thinning), and the sampler.sample records
# equal the summary's own count. Usage: run-dump-check.sh JAGER_CLI STORM PLUGIN_DIR MODE
set -eu
cli=$1 storm=$2 plugins=$3 mode=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(JAGER_PLUGINS=sampler JAGER_PLUGIN_PATH="$plugins" JAGER_OUTPUT="$tmp/storm.jgr" JAGER_QUIET=1 \
      JAGER_SAMPLE=all JAGER_RING_BYTES=67108864 JAGER_SAMPLER_HZ=10000 JAGER_SAMPLER_MODE="$mode" "$storm" 4 200000)
echo "storm: $out"
expected=$(echo "$out" | sed -n 's/^spans \([0-9]*\) dropped 0$/\1/p')
[ -n "$expected" ] || { echo "FAIL: storm dropped events or printed '$out'"; exit 1; }
"$cli" dump "$tmp/storm.jgr" > "$tmp/dump.jsonl"
spans=$(grep -c '"type":"span"' "$tmp/dump.jsonl" || true)
samples=$(grep -c '"type":"sampler.sample"' "$tmp/dump.jsonl" || true)
summary=$(grep '"type":"sampler.summary"' "$tmp/dump.jsonl" | sed -n 's/.*"samples":\([0-9]*\).*/\1/p')
echo "dump: spans $spans (expected $expected), samples $samples (summary says $summary)"
[ "$spans" = "$expected" ] || { echo "FAIL: span count"; exit 1; }
[ -n "$summary" ] && [ "$samples" = "$summary" ] || { echo "FAIL: sample count"; exit 1; }
[ "$samples" -ge 20 ] || { echo "FAIL: too few samples ($samples)"; exit 1; }
echo "PASS"
