#!/bin/sh
# libjager.so exports exactly the functions its public headers declare with JAGER_API:
# nothing internal leaks (every exported name is a declared jager_* function) and nothing
# declared is missing. Usage: check-exports.sh path/to/libjager.so
set -u
lib=${1:?usage: check-exports.sh path/to/libjager.so}
here=$(cd "$(dirname "$0")" && pwd)
include="$here/../../sdk/include"
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols, version suffixes cut; 'A' entries are version-node markers.
nm -D --defined-only "$lib" > "$tmp/nm" || { echo "nm failed on $lib"; exit 2; }
# The libc functions libjager interposes on purpose, and only those: _exit and _Exit, so a
# worker made by fork() that records (JAGER_OUTPUT with %p) ends its file when it leaves
# with them (docs/configuration.md, "fork() without exec"). They are not Jäger's API.
awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' "$tmp/nm" | grep -vx -e _exit -e _Exit | sort -u > "$tmp/exported"
# Declared: the function name on each line that starts with JAGER_API, and the variables
# declared `JAGER_API extern <type> name;`.
{
  grep -h '^JAGER_API' "$include"/jager*.h |
    grep -v '^JAGER_API extern' | grep -o 'jager_[a-z0-9_]*(' | tr -d '('
  grep -h '^JAGER_API extern' "$include"/jager*.h |
    grep -o 'jager_[a-z0-9_]*;' | tr -d ';'
} | sort -u > "$tmp/declared"

status=0
leaked=$(grep -v '^jager_' "$tmp/exported")
if [ -n "$leaked" ]; then
  echo "FAIL: libjager exports symbols outside the jager_ namespace:"; echo "$leaked" | sed 's/^/  /'; status=1
fi
extra=$(comm -23 "$tmp/exported" "$tmp/declared")
if [ -n "$extra" ]; then
  echo "FAIL: exported but not declared with JAGER_API in a public header:"; echo "$extra" | sed 's/^/  /'; status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
if [ -n "$missing" ]; then
  echo "FAIL: declared with JAGER_API but not exported (not implemented, or hidden):"; echo "$missing" | sed 's/^/  /'; status=1
fi
echo "$(wc -l < "$tmp/exported") symbols exported, $(wc -l < "$tmp/declared") declared"
exit $status
