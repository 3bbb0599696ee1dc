#!/bin/sh
# The tools on a sampled recording (sampler_hot: in_step inside spans of "step",
# hidden_hot as long outside any span): `jager summary` lists both as top functions with
# their shares, `jager hunt` reports hidden_hot as unannotated_hotspot and names in_step
# inside step, `jager export --format folded` folds every sample (counts sum to the
# periods of the summary), speedscope's sampled profiles hold exactly the recorded samples,
# and `go tool pprof -top` reads the .cpu.pb.gz profile naming both.
# Usage: run-tools-check.sh JAGER_CLI SAMPLER_HOT PLUGIN_DIR
set -eu
cli=$1 hot=$2 plugins=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
JAGER_PLUGINS=sampler JAGER_PLUGIN_PATH="$plugins" JAGER_OUTPUT="$tmp/hot.jgr" JAGER_QUIET=1 JAGER_SAMPLER_HZ=1000 \
  "$hot" 300

"$cli" summary "$tmp/hot.jgr" > "$tmp/summary.txt"
cat "$tmp/summary.txt"
grep -q '^sampled CPU time: [0-9]* samples' "$tmp/summary.txt" || fail "summary has no sampled section"
in_pct=$(awk '$1 == "in_step" { sub("%", "", $2); print $2 }' "$tmp/summary.txt")
hid_pct=$(awk '$1 == "hidden_hot" { sub("%", "", $2); print $2 }' "$tmp/summary.txt")
hid_out=$(awk '$1 == "hidden_hot" { sub("%", "", $4); print $4 }' "$tmp/summary.txt")
in_out=$(awk '$1 == "in_step" { sub("%", "", $4); print $4 }' "$tmp/summary.txt")
[ -n "$in_pct" ] && [ -n "$hid_pct" ] || fail "in_step or hidden_hot missing from the top functions"
# equal work: each near half of the samples; hidden_hot entirely outside spans, in_step never
awk -v a="$in_pct" -v b="$hid_pct" 'BEGIN { exit !(a > 40 && a < 60 && b > 40 && b < 60) }' || fail "shares $in_pct / $hid_pct"
[ "$in_out" = "0.0" ] || fail "in_step outside spans: $in_out"
awk -v a="$hid_pct" -v b="$hid_out" 'BEGIN { exit !(a == b) }' || fail "hidden_hot outside $hid_out of $hid_pct"
grep -q '^inside step (.*): in_step ' "$tmp/summary.txt" || fail "summary does not name in_step inside step"

"$cli" hunt "$tmp/hot.jgr" > "$tmp/hunt.txt" || true
cat "$tmp/hunt.txt"
grep -q '\[unannotated_hotspot\] hot code outside any span: hidden_hot' "$tmp/hunt.txt" || fail "no unannotated_hotspot for hidden_hot"
grep -q 'unannotated_hotspot.*in_step' "$tmp/hunt.txt" && fail "in_step reported outside spans"

"$cli" export --format folded -o "$tmp/hot.folded" "$tmp/hot.jgr"
head -5 "$tmp/hot.folded"
folded=$(awk '{ s += $NF } END { print s }' "$tmp/hot.folded")
periods=$("$cli" dump "$tmp/hot.jgr" | grep '"type":"sampler.summary"' | sed -n 's/.*"periods":\([0-9]*\).*/\1/p')
[ -n "$periods" ] && [ "$folded" = "$periods" ] || fail "folded counts $folded != periods $periods"
grep -q ';main;hidden_hot [0-9]*$' "$tmp/hot.folded" || fail "no main;hidden_hot stack in the folded file"
grep -q ';main;in_step [0-9]*$' "$tmp/hot.folded" || fail "no main;in_step stack in the folded file"

# speedscope: sampled profiles equal to the recording's samples (check_speedscope.mjs, Node.js)
node "$(dirname "$0")/check_speedscope.mjs" "$cli" "$tmp/hot.jgr" "$tmp" || fail "speedscope sampled profiles"

"$cli" export --format pprof -o "$tmp/hot.pb.gz" "$tmp/hot.jgr"
[ -f "$tmp/hot.cpu.pb.gz" ] || fail "no .cpu.pb.gz profile"
go tool pprof -top "$tmp/hot.cpu.pb.gz" > "$tmp/pprof.txt" 2>&1 || { cat "$tmp/pprof.txt"; fail "go tool pprof failed"; }
cat "$tmp/pprof.txt"
grep -q '^Type: cpu' "$tmp/pprof.txt" || fail "pprof sample type is not cpu"
grep -q ' in_step$' "$tmp/pprof.txt" && grep -q ' hidden_hot$' "$tmp/pprof.txt" || fail "pprof -top does not name both"
echo PASS
