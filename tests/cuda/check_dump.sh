#!/bin/sh
# check_dump.sh JAGER FAKE_RECORD OUTDIR — record through the test double into a .jgr file
# and read it back with `jager dump`: every cuda.* type decodes, counts are exact, kernels
# carry their launch (stack, site "assemble", time before the kernel).
set -eu
JAGER=$1 PROG=$2 OUT=$3
mkdir -p "$OUT"
F="$OUT/fake_cuda.jgr"
rm -f "$F"
JAGER_PLUGINS=cuda JAGER_OUTPUT="$F" JAGER_QUIET=1 "$PROG" 25 >/dev/null
fail() { echo "check_dump: $*" >&2; exit 1; }
n() { "$JAGER" dump "$F" --type "$1" | wc -l | tr -d ' '; }
[ "$(n cuda.launch)" = 26 ] || fail "cuda.launch: $(n cuda.launch), want 26"
[ "$(n cuda.kernel)" = 25 ] || fail "cuda.kernel: $(n cuda.kernel), want 25"
[ "$(n cuda.memcpy)" = 1 ] || fail "cuda.memcpy: $(n cuda.memcpy), want 1"
[ "$(n cuda.summary)" = 1 ] || fail "cuda.summary: $(n cuda.summary), want 1"
[ "$(n cuda.device)" = 1 ] || fail "cuda.device: $(n cuda.device), want 1"
K=$("$JAGER" dump "$F" --type cuda.kernel)
[ "$(echo "$K" | grep -c '"name":"tiny_bc_kernel"')" = 25 ] || fail "kernel names"
[ "$(echo "$K" | grep -c '"launch_site":"assemble"')" = 25 ] || fail "kernels not tied to the span's site"
[ "$(echo "$K" | grep -c '"block_x":32')" = 25 ] || fail "block_x"
[ "$(echo "$K" | grep -c '"launch_stack":0[,}]')" = 0 ] || fail "a kernel without its launch stack"
S=$("$JAGER" dump "$F" --type cuda.summary)
echo "$S" | grep -q '"kernels":25' || fail "summary kernels: $S"
echo "$S" | grep -q '"correlation_misses":0' || fail "summary misses: $S"
echo "$S" | grep -q '"dropped_records":0' || fail "summary drops: $S"
"$JAGER" dump "$F" --type cuda.device | grep -q '"name":"Fake H200"' || fail "device name"
echo "check_dump: ok"
