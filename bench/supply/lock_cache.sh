#!/usr/bin/env bash
# bench/supply/lock_cache.sh JAGER [PACKAGES FILES_PER_PACKAGE KIB] — the lock step's cache
# (docs/supply-chain.md): a generated environment of PACKAGES path packages × FILES_PER_PACKAGE
# files of KIB KiB (default 50 × 100 × 16 KiB: 5,000 files, 78 MiB), locked with
# `jager lock --julia-project` without the cache (--no-cache: every file hashed) and with a
# warm cache (every file unchanged: none read), best of 3 each, page cache warm. Also julia's
# own part (reading the Manifest through Pkg, the same in both) run alone, so the hashing's
# share shows. Asserts nothing; prints wall times and ratios.
set -euo pipefail
jager=${1:?usage: lock_cache.sh JAGER [PACKAGES FILES KIB]}
npk=${2:-50} nf=${3:-100} kib=${4:-16}
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
export JAGER_JULIA="$julia" JAGER_SUPPLY_JL="${JAGER_SUPPLY_JL:-$root/bindings/julia/src/supply_main.jl}"
t=$(mktemp -d /tmp/jager-bench-lockcache.XXXXXX)
trap 'rm -rf "$t"' EXIT
export JAGER_SUPPLY_CACHE="$t/cache/supply-cache.json" JULIA_DEPOT_PATH="$t/depot"
mkdir -p "$t/env" "$t/depot"
: > "$t/env/Project.toml"
{ echo "# This file is machine-generated - editing it directly is not advised"; echo; } > "$t/env/Manifest.toml"
for p in $(seq 1 "$npk"); do
  u=$(printf '00000000-0000-4000-8000-%012d' "$p")
  d="$t/env/pkgs/P$p"; mkdir -p "$d/src"
  printf 'name = "P%d"\nuuid = "%s"\nversion = "0.1.0"\n' "$p" "$u" > "$d/Project.toml"
  for f in $(seq 1 "$nf"); do head -c $((kib * 1024)) /dev/urandom > "$d/src/f$f.jl"; done
  printf '[[P%d]]\npath = "pkgs/P%d"\nuuid = "%s"\nversion = "0.1.0"\n\n' "$p" "$p" "$u" >> "$t/env/Manifest.toml"
done
sleep 2 # past the cache's racily-clean margin (1 s): every file may be stored
best() { local b=999999; for i in 1 2 3; do local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
  local ms=$(( (e - s) / 1000000 )); [ $ms -lt $b ] && b=$ms; done; echo $b; }
"$jager" lock --julia-project "$t/env" -o "$t/warmup.lock" 2> "$t/first.err" # fills the cache, warms the page cache
ms_jl=$(best "$julia" --startup-file=no --history-file=no "$JAGER_SUPPLY_JL" environment "$t/env" "$t/env.json")
ms_cold=$(best "$jager" lock --no-cache --julia-project "$t/env" -o "$t/cold.lock")
ms_warm=$(best "$jager" lock --julia-project "$t/env" -o "$t/warm.lock")
"$jager" lock --julia-project "$t/env" -o "$t/warm.lock" 2> "$t/warm.err"
cmp -s "$t/cold.lock" "$t/warm.lock" || { echo "lock_cache: the cached lock differs from the uncached one" >&2; exit 1; }
files=$(( npk * nf + npk ))
echo "environment: $npk path packages, $files files, $((npk * nf * kib / 1024)) MiB"
echo "first lock:  $(grep 'cache ' "$t/first.err" | sed 's/.*json: //')"
echo "warm lock:   $(grep 'cache ' "$t/warm.err" | sed 's/.*json: //')"
echo "julia reading the environment alone:     ${ms_jl} ms"
echo "jager lock --no-cache (every file hashed): ${ms_cold} ms  (hashing ≈ $((ms_cold - ms_jl)) ms)"
echo "jager lock, warm cache (none read):        ${ms_warm} ms  (hashing ≈ $((ms_warm - ms_jl)) ms)"
echo "ratio warm/cold: whole command $(awk "BEGIN{printf \"%.2f\", $ms_warm/$ms_cold}"), beyond julia $(awk "BEGIN{d=$ms_cold-$ms_jl; r=d>0?($ms_warm-$ms_jl)/d:0; if (r<0) r=0; printf \"%.2f\", r}")"
