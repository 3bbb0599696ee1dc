#!/bin/sh
# A library exports exactly the symbols matching one extended regex (nm -D):
#   check-exports.sh LIB REGEX
set -u
lib=$1 re=$2
syms=$(nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u) || exit 2
bad=$(printf '%s\n' "$syms" | grep -Ev "^($re)\$")
[ -z "$bad" ] || { echo "FAIL: $lib exports more than ^($re)\$:"; printf '  %s\n' $bad; exit 1; }
printf '%s\n' "$syms" | grep -q . || { echo "FAIL: $lib exports nothing"; exit 1; }
echo "$(printf '%s\n' "$syms" | wc -l) exports, all expected"
