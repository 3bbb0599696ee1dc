#!/bin/sh
# run_plugins_isolated.sh JAGER DIR — `jager plugins` survives a plugin whose constructor
# aborts and one whose descriptor claims a million options over a table of one: both are
# listed as REFUSED with the signal, the listing goes on to the build tree's plugins, and
# asking for one of them by name exits 2.
set -u
jager=${1:?usage: run_plugins_isolated.sh JAGER DIR}
dir=${2:?}
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
out=$("$jager" plugins --path "$dir" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "jager plugins --path: exit $rc"
echo "$out" | grep -q '^abort  REFUSED: it crashed while it was opened and read (Aborted)$' || fail "abort not refused: $out"
echo "$out" | grep -q '^liar  REFUSED: it crashed while it was opened and read (Segmentation fault)$' || fail "liar not refused: $(echo "$out" | head -20)"
# the listing went on: a plugin after them in the search order is described
echo "$out" | grep -qE '^(gc|mpi|sampler|dispatch|openmp|cuda)  [0-9]' || fail "nothing listed after the bad plugins: $out"
[ "$(echo "$out" | grep -c 'REFUSED')" -ge 2 ] || fail "refusals: $(echo "$out" | grep REFUSED)"
"$jager" plugins --path "$dir" liar >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "jager plugins liar: exit $rc (want 2)"
"$jager" plugins --path "$dir" abort >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "jager plugins abort: exit $rc (want 2)"
if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "ok   jager plugins: the aborting and the lying plugin are refused, the rest listed"
