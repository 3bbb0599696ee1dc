#!/bin/sh
# `jager plugins` against the ABI test plugins.
#   plugins-command-test.sh JAGER TP_DIR TP_DIR_A TP_DIR_B
set -u
jager=${1:?}; dir=${2:?}; dir_a=${3:?}; dir_b=${4:?}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect FILE PATTERN: fixed-string match
  grep -qF -- "$2" "$1" || { echo "FAIL: missing: $2"; fail=1; }
}
reject() {
  if grep -qF -- "$2" "$1"; then echo "FAIL: unexpected: $2"; fail=1; fi
}

# Listing: search order, descriptors, options as environment variables, refusals.
JAGER_PLUGIN_PATH="$dir_a:$dir:$dir_b" "$jager" plugins > "$tmp/list"; rc=$?
cat "$tmp/list"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc listing"; fail=1; }
expect "$tmp/list" "  1. $dir_a  (JAGER_PLUGIN_PATH)"
expect "$tmp/list" "  2. $dir  (JAGER_PLUGIN_PATH)"
expect "$tmp/list" "  3. $dir_b  (JAGER_PLUGIN_PATH)"
expect "$tmp/list" "(installed"
expect "$tmp/list" "(build tree"
expect "$tmp/list" "good  1.2.3-good  ABI 1.3"
expect "$tmp/list" "  ABI test plugin (good)"
expect "$tmp/list" "    JAGER_GOOD_COUNT  (int, default \"0\")  tick events to emit at start"
expect "$tmp/list" "    JAGER_GOOD_JOURNAL  (string, default \"\")  file that records each callback"
expect "$tmp/list" "order  1.2.3-a  ABI 1.3"
expect "$tmp/list" "order  (shadowed by an earlier folder: not loaded)"
expect "$tmp/list" "newer  9.9  ABI 1.7"
expect "$tmp/list" "major  REFUSED: built for plugin ABI 2.3, this jager speaks 1.3"
expect "$tmp/list" "noentry  REFUSED: no entry symbol jager_plugin_entry"
expect "$tmp/list" "nulldesc  REFUSED: the entry point returned no descriptor"
expect "$tmp/list" "mismatch  REFUSED: the descriptor names itself \"other\""
expect "$tmp/list" "noinit  REFUSED: no init callback"
expect "$tmp/list" "small  REFUSED: descriptor struct_size"
# An older minor's options lie beyond its struct_size: none shown, no crash.
sed -n '/^old  /,/^$/p' "$tmp/list" > "$tmp/old"
expect "$tmp/old" "old  1.2.3-old  ABI 1.3"
reject "$tmp/old" "options:"
# No callback ran: the failing and stepping-aside plugins look fine from their descriptors.
expect "$tmp/list" "failinit  1.2.3-failinit"
expect "$tmp/list" "unsupported  1.2.3-unsupported"

# Named: first found wins (b before a with this order), missing and hostile names exit 2.
"$jager" plugins --path "$dir_b:$dir_a" order > "$tmp/named"; rc=$?
cat "$tmp/named"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc for a found plugin"; fail=1; }
expect "$tmp/named" "order  1.2.3-b  ABI 1.3"
expect "$tmp/named" "$dir_b/libjager-order.so"
reject "$tmp/named" "1.2.3-a"

"$jager" plugins --path "$dir" absent major '../evil' > "$tmp/bad"; rc=$?
cat "$tmp/bad"
[ $rc -eq 2 ] || { echo "FAIL: exit $rc for missing/refused names (want 2)"; fail=1; }
expect "$tmp/bad" "absent  NOT FOUND: no libjager-absent.so in the folders above"
expect "$tmp/bad" "major  REFUSED: built for plugin ABI 2.3"
expect "$tmp/bad" "\"../evil\"  REFUSED: plugin names are"

"$jager" plugins --bogus > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: exit $rc for a bad option (want 1)"; fail=1; }

[ $fail -eq 0 ] && echo "ok"
exit $fail
