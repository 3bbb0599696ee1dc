#!/bin/sh
# small_parallel_regions on a real libgomp recording (omp_small_regions.c): two consecutive
# tiny `parallel for`, 3000 times, are two findings at the regions' lines (15, 17) with 3000
# regions each and most of their time outside the work; the same loops merged into one `parallel`
# (the rule's own advice) are not.
#   run_small_regions.sh PROG LIBJAGER PLUGIN_DIR JAGER OUTDIR
set -u
prog=$1 lib=$2 dir=$3 jager=$4 out=$5
mkdir -p "$out"
fail=0
for mode in small merged; do
  f="$out/$mode.jgr"
  rm -f "$f"
  env OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive JAGER_QUIET=1 JAGER_PLUGINS=openmp JAGER_PLUGIN_PATH="$dir" \
    JAGER_OUTPUT="$f" LD_PRELOAD="$lib $dir/libjager-openmp.so" "$prog" "$mode" 3000 2000 >/dev/null ||
    { echo "FAIL: $prog $mode exited $?"; exit 1; }
  "$jager" hunt --format json "$f" > "$out/$mode.json" || { echo "FAIL: jager hunt $mode"; exit 1; }
  python3 - "$mode" "$out/$mode.json" <<'PY' || fail=1
import json, sys
mode, path = sys.argv[1], sys.argv[2]
found = [f for f in json.load(open(path))["findings"] if f["kind"] == "small_parallel_regions"]
ev = lambda f, k: f["evidence"][k]
loc = lambda f: f["location"]
if mode == "small":
    ok = len(found) >= 1 and all(ev(f, "regions") == 3000 and ev(f, "outside_work_pct") >= 30 for f in found) and \
        len(found) == 2 and sorted(loc(f)["line"] for f in found) == [15, 17] and \
        all(loc(f)["file"].endswith("omp_small_regions.c") for f in found)
    print(("ok  " if ok else "FAIL") + " small: %d finding(s): %s" % (len(found), [(loc(f)["line"], ev(f, "regions"),
          round(ev(f, "outside_work_pct")), round(ev(f, "mean_ns"))) for f in found]))
else:
    ok = not found
    print(("ok  " if ok else "FAIL") + " merged into one region: no small_parallel_regions (%d)" % len(found))
sys.exit(0 if ok else 1)
PY
done
exit $fail
