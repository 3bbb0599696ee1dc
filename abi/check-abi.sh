#!/bin/sh
# Compare a freshly built libjager.so with the committed ABI dump (abi/libjager.abi).
#
#   abi/check-abi.sh path/to/libjager.so
#
# Fails (exit 1) when an existing interface changed incompatibly: a function or variable
# removed (abidiff bit 8), or a type of the public interface changed in any way other
# than fields appended at the end of a size-first struct (what our versioning rules
# allow, see docs/plugins.md). Additions pass and are listed. Exit 2: abidiff could not
# run. Regenerate the dump with abi/update-abi.sh after an intended, reviewed change.
set -u
lib=${1:?usage: check-abi.sh path/to/libjager.so}
here=$(cd "$(dirname "$0")" && pwd)
ref="$here/libjager.abi"
headers="$here/../sdk/include"
command -v abidiff > /dev/null || { echo "abidiff not found (Debian: abigail-tools)"; exit 2; }
[ -f "$ref" ] || { echo "no reference dump $ref (run abi/update-abi.sh)"; exit 2; }
out=$(mktemp) || exit 2
supp=$(mktemp) || exit 2
trap 'rm -f "$out" "$supp"' EXIT

# What our versioning rules allow (docs/plugins.md, "Versioning"): fields appended at the
# end of a struct whose first field is its size. One suppression per such struct, found in
# the headers, so a new sized struct is covered without editing this script. (Scoped by
# name: libabigail 2.2 crashes evaluating this rule on the opaque jager_reader.)
awk '/^typedef struct [a-z_0-9]+ \{/ { name = $3; getline; if ($0 ~ /^ *uint32_t struct_size;/) print name }' \
  "$headers"/*.h | while read -r name; do
  printf '[suppress_type]\n  type_kind = struct\n  name = %s\n  has_data_member_inserted_at = end\n  has_size_change = yes\n\n' "$name"
done > "$supp"
[ -s "$supp" ] || { echo "found no size-first structs in $headers"; exit 2; }

# 1. Compatibility: appended struct fields suppressed, additions not reported.
abidiff --no-corpus-path --headers-dir2 "$headers" --suppressions "$supp" \
  --no-added-syms "$ref" "$lib" > "$out" 2>&1
rc=$?
if [ $((rc & 3)) -ne 0 ]; then
  cat "$out"; echo "abidiff failed to compare (exit $rc)"; exit 2
fi
if [ $((rc & 12)) -ne 0 ]; then
  cat "$out"
  if [ $((rc & 8)) -ne 0 ]; then
    echo "FAIL: incompatible ABI change (removed or changed interface) against abi/libjager.abi"
  else
    echo "FAIL: an existing interface changed (not an append at the end of a struct) against abi/libjager.abi"
  fi
  exit 1
fi

# 2. Additions: print them; they are compatible.
abidiff --no-corpus-path --headers-dir2 "$headers" --suppressions "$supp" \
  "$ref" "$lib" > "$out" 2>&1
if [ $? -ne 0 ]; then
  echo "compatible additions (commit a new dump with abi/update-abi.sh when they are released):"
  cat "$out"
fi
echo "ABI compatible with abi/libjager.abi"
exit 0
