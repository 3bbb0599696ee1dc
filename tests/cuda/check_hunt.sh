#!/bin/sh
# check_hunt.sh JAGER FAKE_RECORD OUTDIR — the GPU findings on synthetic recordings made
# through the test double: 200 tiny kernels (32 threads, 200 ns) under `assemble` → apply_bc
# give small_kernels (with the launching call path) and launch_bound; 200 big ones
# (1M threads, 500 µs) give neither; the same with 255 registers per thread gives
# low_occupancy (12%, limited by registers). `jager summary` shows the GPU table; the Chrome export
# names kernels and links each to its launch.
set -eu
JAGER=$1 PROG=$2 OUT=$3
mkdir -p "$OUT"
fail() { echo "check_hunt: $*" >&2; exit 1; }
rm -f "$OUT/tiny.jgr" "$OUT/big.jgr"
JAGER_PLUGINS=cuda JAGER_OUTPUT="$OUT/tiny.jgr" JAGER_QUIET=1 "$PROG" 200 >/dev/null
JAGER_PLUGINS=cuda JAGER_OUTPUT="$OUT/big.jgr" JAGER_QUIET=1 "$PROG" 200 big >/dev/null
H=$("$JAGER" hunt "$OUT/tiny.jgr")
echo "$H" | grep -q '\[small_kernels\] 100% of the kernels launched in `assemble` run fewer than 1024 threads' \
    || fail "no small_kernels on tiny kernels: $H"
echo "$H" | grep -q 'launched from apply_bc' || fail "small_kernels without the launching function: $H"
echo "$H" | grep -q '\[launch_bound\]' || fail "no launch_bound on tiny kernels: $H"
[ "$("$JAGER" hunt --format json "$OUT/tiny.jgr" | grep -o '"kind":"small_kernels"' | wc -l | tr -d ' ')" = 1 ] \
    || fail "want one small_kernels finding in the JSON"
JAGER_PLUGINS=cuda JAGER_OUTPUT="$OUT/fat.jgr" JAGER_QUIET=1 "$PROG" 200 fat >/dev/null
F=$("$JAGER" hunt "$OUT/fat.jgr")
# 255 registers × 256 threads: one block of 8 warps per SM (65536 registers) of 64 warps
echo "$F" | grep -q '\[low_occupancy\] Kernel `fat_stencil` reaches 12% theoretical occupancy, limited by registers' \
    || fail "no low_occupancy on a 255-register kernel: $F"
B=$("$JAGER" hunt "$OUT/big.jgr")
echo "$B" | grep -q 'low_occupancy' && fail "low_occupancy on a 16-register kernel: $B"
echo "$H" | grep -q 'low_occupancy' && fail "low_occupancy on 1-block grids: $H"
echo "$B" | grep -q 'small_kernels' && fail "small_kernels on big kernels: $B"
echo "$B" | grep -q 'launch_bound' && fail "launch_bound on big kernels: $B"
S=$("$JAGER" summary "$OUT/tiny.jgr")
echo "$S" | grep -q '^GPU 200 kernels' || fail "summary without its GPU line: $S"
echo "$S" | grep -q 'tiny_bc_kernel  *200 ' || fail "summary without the kernel table: $S"
echo "$S" | grep -q 'copies host→device: 1, 1.0 MiB' || fail "summary without the copy line: $S"
"$JAGER" summary --format json "$OUT/tiny.jgr" | grep -q '"gpu":{"kernels":200,' || fail "summary JSON without gpu"
# Chrome/Perfetto: kernels named after their function, one flow launch → kernel each
"$JAGER" export --format chrome "$OUT/tiny.jgr" -o "$OUT/tiny.trace.json" >/dev/null
C=$(cat "$OUT/tiny.trace.json")
[ "$(echo "$C" | grep -o '"name":"tiny_bc_kernel","cat":"cuda.kernel","ph":"X"' | wc -l | tr -d ' ')" = 200 ] \
    || fail "chrome: want 200 kernel slices named tiny_bc_kernel"
[ "$(echo "$C" | grep -o '"cat":"cuda.flow","ph":"s"' | wc -l | tr -d ' ')" = 200 ] || fail "chrome: want 200 flow starts"
[ "$(echo "$C" | grep -o '"cat":"cuda.flow","ph":"f"' | wc -l | tr -d ' ')" = 200 ] || fail "chrome: want 200 flow ends"
echo "check_hunt: ok"
