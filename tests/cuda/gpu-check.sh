#!/bin/sh
# gpu-check.sh [BUILD] — the cuda plugin on a real GPU, in under 5 minutes, building nothing:
# every binary comes from BUILD (default: build), made on a machine without a GPU:
#   bin/tiny_kernels bin/cuda_launch_cost bin/cuda_gpu_verify bin/jager
#   plugins/libjager-cuda.so lib/libjager.so*
# (cmake --build BUILD --target tiny_kernels cuda_launch_cost cuda_gpu_verify jager_cli jager-cuda)
#
# Checks, on a program with 2,000 tiny kernels, 8 large ones, copies, a memset and syncs:
#   kernel count equals launches; every kernel after its launch on the Jäger clock; every
#   launch inside its host span; host stacks name the launching functions (apply_bc,
#   solve_big); drops zero or counted; small kernels found (≥ 99 % of launches under 1,024
#   threads; `jager hunt`'s small_kernels when the tools know cuda events); and the host
#   cost per launch with the plugin against without (bench/cuda, the ratio).
# Figures go to stdout and OUT/figures.txt (OUT: $OUT, else BUILD/gpu-check). Exit 0 when all pass.
#
# gpu-check.sh --pack BUILD DEST (here, before a GPU session): copy just those files into DEST,
# with this toolkit's libcupti.so.13 and liblz4/libzstd/libz (about 10 MiB; name DEST
# build-something so it stays gitignored), so that DEST is all a session carries.
set -u
if [ "${1:-}" = "--pack" ]; then
    [ $# -eq 3 ] || { echo "usage: gpu-check.sh --pack BUILD DEST" >&2; exit 2; }
    mkdir -p "$3/bin" "$3/plugins" "$3/lib"
    for f in tiny_kernels cuda_launch_cost cuda_gpu_verify jager; do cp "$2/bin/$f" "$3/bin/" || exit 1; done
    cp "$2/plugins/libjager-cuda.so" "$3/plugins/" || exit 1
    cp -P "$2"/lib/libjager.so* "$3/lib/" || exit 1
    # CUPTI of this toolkit (used when the GPU machine has none) and the few system
    # libraries the binaries need, in case that machine's image lacks them
    for c in /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 /usr/local/cuda/lib64/libcupti.so.13; do
        [ -e "$c" ] && cp -L "$c" "$3/lib/libcupti.so.13" && break
    done
    for l in $(ldd "$2/bin/jager" "$2/bin/tiny_kernels" | awk '/=> \// {print $3}' | grep -E 'liblz4|libzstd|libz\.' | sort -u); do
        cp -L "$l" "$3/lib/"
    done
    du -sh "$3"
    exit 0
fi
B=${1:-build}
OUT=${OUT:-$B/gpu-check}
mkdir -p "$OUT"
FIG="$OUT/figures.txt"
: > "$FIG"
fig() { echo "$*" | tee -a "$FIG"; }
die() { echo "gpu-check: FAILED: $*" | tee -a "$FIG"; exit 1; }
for f in bin/tiny_kernels bin/cuda_launch_cost bin/cuda_gpu_verify bin/jager plugins/libjager-cuda.so lib/libjager.so; do
    [ -e "$B/$f" ] || die "$B/$f missing: build it here first (see the header of this script)"
done
export JAGER_PLUGIN_PATH="$B/plugins" LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset JAGER_DISABLE JAGER_CUDA_CUPTI_LIB JAGER_CUDA_DRIVER_LIB
# CUPTI: the toolkit's, or one next to the build
if [ -z "${JAGER_CUDA_CUPTI_LIB:-}" ]; then
    for c in /usr/local/cuda/extras/CUPTI/lib64/libcupti.so /usr/local/cuda/lib64/libcupti.so "$B/lib/libcupti.so.13"; do
        [ -e "$c" ] && export JAGER_CUDA_CUPTI_LIB="$c" && break
    done
fi
fig "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
fig "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
fig "cupti: ${JAGER_CUDA_CUPTI_LIB:-loader default}"

# 1. the recording
T=2000 G=8
rm -f "$OUT/tiny.jgr"
if ! JAGER_PLUGINS=cuda JAGER_OUTPUT="$OUT/tiny.jgr" timeout 120 "$B/bin/tiny_kernels" $T $G >"$OUT/tiny.out" 2>"$OUT/tiny.err"; then
    cat "$OUT/tiny.err"
    die "tiny_kernels failed"
fi
grep -q "launches tiny=$T big=$G" "$OUT/tiny.out" || { cat "$OUT/tiny.out" "$OUT/tiny.err"; die "tiny_kernels did not run on the GPU"; }
"$B/bin/jager" dump "$OUT/tiny.jgr" --type diag | tee "$OUT/diag.json" | grep -q 'stepped aside' && die "the plugin stepped aside: $(cat "$OUT/diag.json")"
timeout 60 "$B/bin/cuda_gpu_verify" "$OUT/tiny.jgr" --kernels $((T + G)) --stack-func apply_bc,solve_big --min-small 0.99 \
    | tee -a "$FIG" || die "recording checks"
"$B/bin/jager" dump "$OUT/tiny.jgr" --type cuda.summary | tee -a "$FIG"
"$B/bin/jager" dump "$OUT/tiny.jgr" --type cuda.device | tee -a "$FIG"
for t in cuda.memcpy cuda.memset cuda.sync cuda.memory; do
    fig "$t: $("$B/bin/jager" dump "$OUT/tiny.jgr" --type $t | wc -l | tr -d ' ') events"
done
[ "$("$B/bin/jager" dump "$OUT/tiny.jgr" --type cuda.memcpy | wc -l | tr -d ' ')" -ge 2 ] || die "want 2 copies"

# 2. the tools' view (informative until the tools read cuda events)
timeout 60 "$B/bin/jager" summary "$OUT/tiny.jgr" >"$OUT/summary.txt" 2>&1 || true
timeout 60 "$B/bin/jager" hunt "$OUT/tiny.jgr" >"$OUT/hunt.txt" 2>&1 || true
if grep -q small_kernels "$OUT/hunt.txt"; then fig "hunt: small_kernels found: $(grep -m1 small_kernels "$OUT/hunt.txt")"
else fig "hunt: small_kernels not reported by this jager (tools side pending)"; fi

# 3. the cost per launch, without and with the plugin (best of 5 runs of 20,000 launches)
base=$(JAGER_PLUGINS= timeout 60 "$B/bin/cuda_launch_cost" 20000 | awk '/^launch_ns/ {print $2}')
with=$(JAGER_PLUGINS=cuda JAGER_OUTPUT="$OUT/bench.jgr" timeout 60 "$B/bin/cuda_launch_cost" 20000 | awk '/^launch_ns/ {print $2}')
nostack=$(JAGER_PLUGINS=cuda JAGER_CUDA_DEPTH=0 JAGER_OUTPUT="$OUT/bench0.jgr" timeout 60 "$B/bin/cuda_launch_cost" 20000 | awk '/^launch_ns/ {print $2}')
[ -n "$base" ] && [ -n "$with" ] || die "launch_cost did not run"
fig "launch cost: $base ns without the plugin, $with ns with it ($(awk "BEGIN {printf \"%.2f\", $with / $base}")x), $nostack ns with JAGER_CUDA_DEPTH=0"
fig "gpu-check: ok"
