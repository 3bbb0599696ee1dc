#!/usr/bin/env bash
# bench/supply/run.sh JAGER [PACKAGES FILES_PER_PACKAGE KIB] — the supply-chain scanner's
# hashing against sha256sum over the same files: a generated depot of PACKAGES packages ×
# FILES_PER_PACKAGE files of KIB KiB each (default 50 × 100 × 16 KiB: 5,000 files, 78 MiB),
# locked as a Julia environment's packages would be. Prints wall times and their ratio
# (best of 3 each, page cache warm). Asserts nothing.
set -euo pipefail
jager=${1:?usage: run.sh JAGER [PACKAGES FILES KIB]}
npk=${2:-50} nf=${3:-100} kib=${4:-16}
t=$(mktemp -d /tmp/jager-bench-supply.XXXXXX)
trap 'rm -rf "$t"' EXIT
pk='['
for p in $(seq 1 "$npk"); do
  d="$t/pkgs/P$p/src"; mkdir -p "$d"
  for f in $(seq 1 "$nf"); do head -c $((kib * 1024)) /dev/urandom > "$d/f$f.jl"; done
  [ "$p" = 1 ] || pk+=','
  pk+="{\"name\":\"P$p\",\"uuid\":\"$p\",\"version\":\"\",\"source\":\"$t/pkgs/P$p\",\"files\":{}}"
done
pk+=']'
# a lock with empty file lists: verify rehashes every file (each reported "added")
printf '{"format":"jager.lock","version":1,"julia":{"packages":%s}}\n' "$pk" > "$t/bench.lock"
best() { local b=999999; for i in 1 2 3; do local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
  local ms=$(( (e - s) / 1000000 )); [ $ms -lt $b ] && b=$ms; done; echo $b; }
find "$t/pkgs" -type f > "$t/list"
cat $(cat "$t/list") > /dev/null # warm the page cache
ms_sum=$(best sh -c "xargs -a '$t/list' sha256sum")
ms_one=$(best "$jager" verify --no-environment --threads 1 "$t/bench.lock")
ms_all=$(best "$jager" verify --no-environment "$t/bench.lock")
echo "files: $(wc -l < "$t/list") in $npk packages, $((npk * nf * kib / 1024)) MiB"
echo "sha256sum (one process per xargs batch): ${ms_sum} ms"
echo "jager verify, 1 thread:                 ${ms_one} ms  ($(awk "BEGIN{printf \"%.2f\", $ms_one/$ms_sum}")× sha256sum)"
echo "jager verify, all cores ($(nproc)):          ${ms_all} ms  ($(awk "BEGIN{printf \"%.2f\", $ms_all/$ms_sum}")× sha256sum)"
