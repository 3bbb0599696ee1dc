#!/bin/sh
# jager summary of a recording of omp_regions (REGIONS × THREADS): every thread's `omp work`
# and join wait hang under their region (one row of REGIONS·THREADS calls, indented), none
# at the top level.   summary-tree.sh JAGER FILE CALLS
set -u
jager=$1 file=$2 calls=$3
"$jager" summary "$file" > "$file.summary" || { echo "FAIL: jager summary"; exit 1; }
cat "$file.summary"
fail=0
grep -Eq "^  omp work @[^ ]+ +$calls " "$file.summary" || { echo "FAIL: no '  omp work … $calls' row under the region"; fail=1; }
grep -Eq "^  omp join barrier @[^ ]+ +$calls " "$file.summary" || { echo "FAIL: no '  omp join barrier … $calls' row under the region"; fail=1; }
grep -Eq "^omp (work|join barrier) " "$file.summary" && { echo "FAIL: worker rows at the top level"; fail=1; }
exit $fail
