#!/bin/sh
# The hunt finds load imbalance at a wait known only by its role, and ignores a wait word in
# a work site's name once a role says otherwise.
#   run_roles.sh ROLES_REC JAGER OUTDIR
set -u
rec=$1 jager=$2 dir=$3 fail=0
for mode in roles none misnamed; do
  "$rec" "$dir/roles_$mode.jgr" $mode || { echo "FAIL: roles_rec $mode"; exit 1; }
  "$jager" hunt "$dir/roles_$mode.jgr" > "$dir/roles_$mode.txt" 2>&1
  grep '\[load_imbalance\]' "$dir/roles_$mode.txt" > "$dir/roles_$mode.imb"
  case $mode in
    roles|misnamed)
      grep -q 'threads wait .* at `gather`' "$dir/roles_$mode.imb" || { echo "FAIL: $mode: no load_imbalance at gather"; cat "$dir/roles_$mode.txt"; fail=1; }
      grep -q 'at `barrier_rows`' "$dir/roles_$mode.imb" && { echo "FAIL: $mode: barrier_rows taken for a wait"; fail=1; } ;;
    none)
      [ -s "$dir/roles_$mode.imb" ] && { echo "FAIL: none: load_imbalance without any wait site"; cat "$dir/roles_$mode.imb"; fail=1; } ;;
  esac
done
[ $fail -eq 0 ] && echo "waits by role: found at gather; none without roles; a name does not override a role"
exit $fail
