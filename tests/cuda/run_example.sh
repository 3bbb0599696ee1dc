#!/bin/sh
# run_example.sh JAGER TINY_KERNELS OUTDIR — the CUDA example under JAGER_PLUGINS=cuda with
# the real libcupti and whatever driver this machine has. Without a GPU: the program says so
# and exits 0, the plugin steps aside once with its reason, in the recording. With one: the
# kernels are there (gpu-check.sh checks them in detail).
set -eu
JAGER=$1 PROG=$2 OUT=$3
mkdir -p "$OUT"
F="$OUT/example.jgr"
rm -f "$F"
out=$(JAGER_PLUGINS=cuda JAGER_OUTPUT="$F" JAGER_QUIET=1 "$PROG" 20 1)
fail() { echo "run_example: $*" >&2; exit 1; }
D=$("$JAGER" dump "$F" --type diag)
case "$out" in
"no CUDA device"*)
    [ "$(echo "$D" | grep -c '"source":"cuda"')" = 2 ] || fail "want the reason and 'stepped aside' once each: $D"
    echo "$D" | grep -q "stepped aside" || fail "no 'stepped aside': $D"
    echo "$D" | grep -q "no GPU events will be recorded" || fail "no reason: $D"
    echo "run_example: no GPU here; the plugin stepped aside once: ok" ;;
"launches tiny=20 big=1"*)
    [ "$("$JAGER" dump "$F" --type cuda.kernel | wc -l | tr -d ' ')" = 21 ] || fail "want 21 kernels"
    echo "run_example: 21 kernels recorded: ok" ;;
*) fail "unexpected output: $out" ;;
esac
