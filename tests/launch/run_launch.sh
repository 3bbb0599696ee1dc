#!/bin/sh
# run_launch.sh LIBJAGER JAGER PROG [JULIA] — zero-code mode under launchers
# (docs/configuration.md, "Which process records"). Each form runs
#   LD_PRELOAD=libjager.so JAGER_OUTPUT=DIR/run.jgr <launcher…> PROG 500
# in a fresh folder and must leave exactly one file, DIR/run.jgr: complete, 500 events, 500
# calls of launch.work, written by PROG (process.executable), and nothing from Jäger on
# stderr. Then: a second process of the same run, a concurrent writer, a stale file, %p
# workers, and the same launchers in front of Julia.
set -u
lib=$(readlink -f "${1:?usage: run_launch.sh LIBJAGER JAGER PROG [JULIA]}")
jager=$(readlink -f "${2:?}")
prog=$(readlink -f "${3:?}")
julia=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
fails=0
n=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# info FILE KEY: the value of a line "KEY: value" or a metadata entry "KEY": "value"
info() { "$jager" info "$1" 2>/dev/null | sed -n "s/^$2: //p; s/^  \"$2\": \"\\(.*\\)\"\$/\\1/p" | head -1; }
calls() { "$jager" summary "$1" 2>/dev/null | awk -v s="$2" '$1 == s { print $2; exit }'; }

# check DIR WHAT FILE EVENTS SITE EXE: FILE is the only file in DIR, complete, EVENTS events, SITE called EVENTS times, by EXE
check() {
  d=$1 what=$2 f=$3 ev=$4 csite=$5 exe=$6
  files=$(cd "$d" && ls -A | grep -v '^stderr$' | tr '\n' ' ')
  [ "$files" = "$(basename "$f") " ] || { fail "$what: files in the folder: '$files' (want only $(basename "$f"))"; return; }
  st=$(info "$f" status) e=$(info "$f" events) by=$(info "$f" process.executable) c=$(calls "$f" "$csite")
  [ "$st" = complete ] || { fail "$what: status '$st'"; return; }
  [ "$e" = "$ev" ] || { fail "$what: events $e, want $ev"; return; }
  [ "$c" = "$ev" ] || { fail "$what: $csite calls '$c', want $ev"; return; }
  [ "$by" = "$exe" ] || { fail "$what: recorded by '$by', want $exe"; return; }
  if grep -q 'jager' "$d/stderr"; then fail "$what: stderr says: $(cat "$d/stderr")"; return; fi
  ok "$what: one file, $ev events of $csite, by $(basename "$exe")"
}

# form WHAT ARGV…: run ARGV with the preload in a fresh folder; sets $d
form() {
  n=$((n + 1))
  d="$top/f$n"
  mkdir -p "$d"
  what=$1
  shift
  (cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/run.jgr" "$@" 2>"$d/stderr")
  rc=$?
  [ $rc -eq 0 ] || fail "$what: exit status $rc ($(cat "$d/stderr"))"
}

# the two-level wrapper: wrap1 execs wrap2, which runs the program as a child and waits
mkdir -p "$top/bin"
printf '#!/bin/sh\nexec "%s/wrap2" "$@"\n' "$top/bin" >"$top/bin/wrap1"
printf '#!/bin/sh\n"$@"\nexit $?\n' >"$top/bin/wrap2"
chmod +x "$top/bin/wrap1" "$top/bin/wrap2"

exe=$(readlink -f "$prog")
launchers() { # PROG ARGS…: every launcher form in front of it
  p=$1
  shift
  form "$tag timeout 30" timeout 30 "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag env" env FOO=1 "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag time" /usr/bin/time -o "$top/time.$n" "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag nice" nice -n 1 "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag taskset -c 0" taskset -c 0 "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag sh -c (fork+wait)" sh -c '"$0" "$@"; exit $?' "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag sh -c exec" sh -c 'exec "$0" "$@"' "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
  form "$tag two-level wrapper" "$top/bin/wrap1" "$p" "$@"; check "$d" "$what" "$d/run.jgr" $N $site "$x"
}

# ---- the C program ----
tag=C N=500 site=launch.work x=$exe
form "C bare" "$prog" 500; check "$d" "$what" "$d/run.jgr" 500 launch.work "$exe"
launchers "$prog" 500
# unknown wrappers (not on the launcher list), with no events of their own: the program
# itself in wrapper mode, running a child and waiting, or exec'ing
form "C unknown wrapper (fork+wait)" "$prog" wrap fork "$prog" 500; check "$d" "$what" "$d/run.jgr" 500 launch.work "$exe"
form "C unknown wrapper (exec)" "$prog" wrap exec "$prog" 500; check "$d" "$what" "$d/run.jgr" 500 launch.work "$exe"
form "C nested launchers" env timeout 30 nice sh -c '"$0" 500; exit $?' "$prog"; check "$d" "$what" "$d/run.jgr" 500 launch.work "$exe"
if command -v valgrind >/dev/null 2>&1; then
  form "C valgrind" valgrind -q --error-exitcode=9 "$prog" 500; check "$d" "$what" "$d/run.jgr" 500 launch.work "$exe"
else
  fail "valgrind not installed (scripts/deps/apt-launch.txt)"
fi

# a second process of the same run: the first wins, the second says so once
form "C sequential" sh -c '"$0" 500; "$0" 300; exit $?' "$prog"
said=$(grep -c 'run.jgr was recorded by an earlier process of this run' "$d/stderr")
[ "$said" = 1 ] && [ "$(grep -c jager "$d/stderr")" = 1 ] || fail "$what: stderr $(cat "$d/stderr")"
: >"$d/stderr"
check "$d" "$what (first wins, said once)" "$d/run.jgr" 500 launch.work "$exe"

# a stale file from an earlier run is replaced
n=$((n + 1)) d="$top/f$n"
mkdir -p "$d"
echo "an old recording" >"$d/run.jgr"
(cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/run.jgr" timeout 30 "$prog" 500 2>"$d/stderr")
check "$d" "C stale file replaced" "$d/run.jgr" 500 launch.work "$exe"

# two live processes on one file: the second says where it would have written, once, and
# the first's file is whole
n=$((n + 1)) d="$top/f$n"
mkdir -p "$d"
(cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/run.jgr" JAGER_LAUNCH_TEST_SLEEP_MS=1500 "$prog" 500 2>"$d/stderr.a") &
a=$!
i=0
while [ ! -s "$d/run.jgr" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
(cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/run.jgr" "$prog" 300 2>"$d/stderr.b")
rb=$?
wait $a
ra=$?
msg="run.jgr is being recorded by another process; process"
if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then fail "concurrent: exit $ra / $rb"
elif [ "$(grep -c "$msg" "$d/stderr.b")" != 1 ] || [ "$(grep -c jager "$d/stderr.b")" != 1 ]; then
  fail "concurrent: the second said '$(cat "$d/stderr.b")' (want once: $msg …)"
else
  rm -f "$d/stderr.a" "$d/stderr.b"
  : >"$d/stderr"
  check "$d" "concurrent writers (second refused, said once)" "$d/run.jgr" 500 launch.work "$exe"
fi

# workers with %p: one file each, none for the parent (which has no events of its own)
n=$((n + 1)) d="$top/f$n"
mkdir -p "$d"
(cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/w.%p.jgr" "$prog" workers 3 200 2>"$d/stderr")
cnt=0 good=0
for f in "$d"/w.*.jgr; do
  [ -e "$f" ] || continue
  cnt=$((cnt + 1))
  [ "$(info "$f" status)" = complete ] && [ "$(info "$f" events)" = 200 ] && [ "$(calls "$f" launch.work)" = 200 ] &&
    [ "w.$(info "$f" process.pid).jgr" = "$(basename "$f")" ] && good=$((good + 1))
done
if [ $cnt = 3 ] && [ $good = 3 ]; then ok "%p workers: 3 files of 200 events, none for the parent"; else fail "%p workers: $cnt files, $good good: $(ls "$d")"; fi

# ---- Julia (the wrapper script .cache/julia/bin/julia execs the real julia) ----
if [ -n "$julia" ]; then
  jx=$(sed -n 's/^exec "\([^"]*\)".*/\1/p' "$julia")
  [ -n "$jx" ] || jx=$(readlink -f "$julia")
  tag=Julia N=300 site=launch.jl.work x=$jx
  export JULIA_DEPOT_PATH="$top/depot"
  form "Julia bare" "$julia" --startup-file=no "$here/launch.jl" 300; check "$d" "$what" "$d/run.jgr" 300 launch.jl.work "$jx"
  launchers "$julia" --startup-file=no "$here/launch.jl" 300
fi

if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all checks passed"
