#!/bin/sh
# run_fork.sh LIBJAGER JAGER PROG — workers made by fork() WITHOUT exec (issue 17, issue 16
# item 1; docs/configuration.md, "fork() without exec"). PROG forkwork K HOW: a thread
# records 5000 spans of launch.bg while the parent records 100 + 100 of launch.parent
# around forking 3 workers; worker i records 100 × (i + 1) of launch.work and leaves by
# exit(), by _exit(), or (nested) worker 0 first forks a grandchild of 50 launch.grand.
#  - JAGER_OUTPUT with %p: one complete file per process — the parent's with its own
#    spans only, each worker's with its own only (none of the parent's, none of the
#    thread's), process.parent_pid naming who forked it —, in zero-code mode (preload)
#    and with jager_init(), and `jager summary` reads them as a set and as a folder.
#  - without %p: one file, the parent's, complete and exact; the workers say nothing.
#  - 20 forks one after another while a thread keeps the recorder's locks busy: no hang,
#    every worker exact (the library before this hung here, its child on a lock the
#    parent's thread held).
# No timing: the counts are exact whatever the machine's load.
set -u
lib=$(readlink -f "${1:?usage: run_fork.sh LIBJAGER JAGER PROG}")
jager=$(readlink -f "${2:?}")
prog=$(readlink -f "${3:?}")
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
# every span an event: the counts below are exact, and the background thread's tight loop
# would be thinned at the default (auto)
export JAGER_SAMPLE=all
fails=0
n=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

info() { "$jager" info "$1" 2>/dev/null | sed -n "s/^$2: //p; s/^  \"$2\": \"\\(.*\\)\"\$/\\1/p" | head -1; }
# the file's launch.* sites with their calls: "launch.bg=5000 launch.parent=200 "
sites() { "$jager" summary "$1" 2>/dev/null | awk '$1 ~ /^launch\./ { print $1 "=" $2 }' | sort | tr '\n' ' '; }

PARENT="launch.bg=5000 launch.parent=200 "

# run WHAT OUTPUT MODE HOW [SAID]: PROG forkwork 3 HOW in a fresh folder $d, MODE preload or
# init; stderr holds exactly SAID (default 0) lines "…, recorded nothing: JAGER_OUTPUT (…) has
# no %p…" — one from each process that records nothing — and no other line of jager's
run() {
  n=$((n + 1))
  d="$top/f$n"
  mkdir -p "$d"
  what=$1
  if [ "$3" = preload ]; then
    (cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/$2" "$prog" forkwork 3 "$4" 2>"$d/stderr")
  else
    (cd "$d" && JAGER_LAUNCH_TEST_INIT=1 JAGER_OUTPUT="$d/$2" "$prog" forkwork 3 "$4" 2>"$d/stderr")
  fi
  rc=$?
  [ $rc -eq 0 ] || fail "$what: exit status $rc ($(cat "$d/stderr"))"
  said=$(grep -c "^jager: process [0-9]*, forked by [0-9]*, recorded nothing: JAGER_OUTPUT (.*) has no %p" "$d/stderr")
  other=$(grep jager "$d/stderr" | grep -vc "recorded nothing: JAGER_OUTPUT")
  if [ "$said" != "${5:-0}" ] || [ "$other" != 0 ]; then
    fail "$what: stderr (want ${5:-0} 'recorded nothing' lines, nothing else of jager's): $(cat "$d/stderr")"
  elif [ "${5:-0}" != 0 ]; then
    ok "$what: each of the ${5} processes that record nothing says so once"
  fi
  rm -f "$d/stderr"
}

# per_process WHAT NESTED: the files of $d, one per process (w.<pid>.jgr)
per_process() {
  what=$1 nested=$2
  want=4
  [ "$nested" = 1 ] && want=5
  cnt=$(ls "$d" | grep -c '^w\.[0-9]*\.jgr$')
  [ "$cnt" = "$want" ] && [ "$(ls "$d" | wc -l)" = "$want" ] || { fail "$what: files $(ls "$d" | tr '\n' ' ') (want $want w.<pid>.jgr)"; return; }
  parent="" workers="" grand=""
  for f in "$d"/w.*.jgr; do
    pid=$(info "$f" process.pid)
    [ "$(basename "$f")" = "w.$pid.jgr" ] || { fail "$what: $(basename "$f") was written by process '$pid'"; return; }
    [ "$(info "$f" status)" = complete ] || { fail "$what: $(basename "$f"): status '$(info "$f" status)'"; return; }
    s=$(sites "$f")
    case "$s" in
    "$PARENT") parent=$pid ;;
    "launch.grand=50 ") grand=$f ;;
    launch.work=*) workers="$workers$s|$pid|$(info "$f" process.parent_pid)
"
      ev=$(info "$f" events) c=${s#launch.work=}
      [ "$ev" = "${c% }" ] || { fail "$what: $(basename "$f"): $ev events for $s"; return; } ;;
    *) fail "$what: $(basename "$f"): sites '$s'"; return ;;
    esac
  done
  [ -n "$parent" ] || { fail "$what: no file holds the parent's spans ($PARENT)"; return; }
  [ -z "$(info "$d/w.$parent.jgr" process.parent_pid)" ] || { fail "$what: the parent's file names a parent"; return; }
  got=$(printf '%s' "$workers" | cut -d'|' -f1 | sort | tr '\n' '|')
  [ "$got" = "launch.work=100 |launch.work=200 |launch.work=300 |" ] || { fail "$what: workers' sites: $got"; return; }
  bad=$(printf '%s' "$workers" | awk -F'|' -v p="$parent" 'NF && $3 != p' | wc -l)
  [ "$bad" = 0 ] || { fail "$what: a worker's process.parent_pid is not $parent: $workers"; return; }
  if [ "$nested" = 1 ]; then
    [ -n "$grand" ] || { fail "$what: no grandchild file"; return; }
    w0=$(printf '%s' "$workers" | awk -F'|' '$1 == "launch.work=100 " { print $2 }')
    [ "$(info "$grand" process.parent_pid)" = "$w0" ] || { fail "$what: the grandchild's parent is '$(info "$grand" process.parent_pid)', want $w0"; return; }
    [ "$(info "$grand" events)" = 50 ] || { fail "$what: the grandchild has $(info "$grand" events) events"; return; }
  fi
  ok "$what: $want files, each complete with exactly its own process's spans"
}

# one_file WHAT: only run.jgr, the parent's, complete and exact
one_file() {
  what=$1
  [ "$(ls "$d")" = run.jgr ] || { fail "$what: files $(ls "$d" | tr '\n' ' ') (want run.jgr)"; return; }
  f="$d/run.jgr"
  [ "$(info "$f" status)" = complete ] || { fail "$what: status '$(info "$f" status)'"; return; }
  [ "$(sites "$f")" = "$PARENT" ] || { fail "$what: sites '$(sites "$f")' (want $PARENT)"; return; }
  [ "$(info "$f" events)" = 5200 ] || { fail "$what: $(info "$f" events) events (want 5200)"; return; }
  ok "$what: the parent's file alone, complete, exact; the workers left it alone"
}

for how in exit _exit nested; do
  nested=0
  [ $how = nested ] && nested=1
  run "preload %p, workers leave by $how" 'w.%p.jgr' preload $how; per_process "$what" $nested
  run "jager_init %p, workers leave by $how" 'w.%p.jgr' init $how; per_process "$what" $nested
  run "preload no %p, workers leave by $how" run.jgr preload $how $((3 + nested)); one_file "$what"
  run "jager_init no %p, workers leave by $how" run.jgr init $how $((3 + nested)); one_file "$what"
done

# forks while another thread keeps the recorder's locks busy (registering sites, recording
# spans without a pause): every one of 20 workers records exactly its own, none hangs
for mode in preload init; do
  n=$((n + 1))
  d="$top/f$n"
  mkdir -p "$d"
  what="$mode %p, 20 forks under a busy thread"
  if [ $mode = preload ]; then
    (cd "$d" && LD_PRELOAD="$lib" JAGER_OUTPUT="$d/w.%p.jgr" timeout 100 "$prog" forkstorm 20 2>"$d/stderr")
  else
    (cd "$d" && JAGER_LAUNCH_TEST_INIT=1 JAGER_OUTPUT="$d/w.%p.jgr" timeout 100 "$prog" forkstorm 20 2>"$d/stderr")
  fi
  rc=$?
  if [ $rc -ne 0 ]; then fail "$what: exit status $rc (124: it hung) $(cat "$d/stderr")"; continue; fi
  if grep -q jager "$d/stderr"; then fail "$what: stderr says: $(cat "$d/stderr")"; continue; fi
  rm -f "$d/stderr"
  good=0 parents=0 other=""
  for f in "$d"/w.*.jgr; do
    s=$("$jager" summary "$f" 2>/dev/null | awk '$1 == "launch.work" || $1 == "launch.parent" { print $1 "=" $2 }' | tr '\n' ' ')
    st=$(info "$f" status)
    if [ "$s" = "launch.parent=200 " ] && [ "$st" = complete ]; then parents=$((parents + 1))
    elif [ "$s" = "launch.work=10 " ] && [ "$st" = complete ] && [ "$(info "$f" events)" = 10 ]; then good=$((good + 1))
    else other="$other $(basename "$f"): '$s' $st;"; fi
  done
  if [ $good = 20 ] && [ $parents = 1 ] && [ -z "$other" ]; then ok "$what: 20 worker files of exactly 10 spans, the parent's whole"
  else fail "$what: $good good workers, $parents parent files, others:$other"; fi
done

# the set of files of one run, and its folder, read by `jager summary`
run "summary of the set" 'w.%p.jgr' preload nested
for input in set folder; do
  if [ $input = set ]; then out=$("$jager" summary "$d"/w.*.jgr 2>&1); else out=$("$jager" summary "$d" 2>&1); fi
  rc=$?
  heads=$(printf '%s\n' "$out" | grep -c '^== .*w\.[0-9]*\.jgr ==$')
  total=$(printf '%s\n' "$out" | awk '$1 == "launch.work" { s += $2 } END { print s + 0 }')
  if [ $rc -eq 0 ] && [ "$heads" = 5 ] && [ "$total" = 600 ]; then ok "jager summary, the $input: 5 recordings, 600 launch.work calls"
  else fail "jager summary, the $input: exit $rc, $heads recordings, $total launch.work calls: $out"; fi
done

if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all checks passed"
