#!/bin/sh
# run_outputs.sh LIBJAGER JAGER PROG — the commands that write files never replace a device
# node, never follow a symbolic link planted at a temporary's name, write straight to
# FIFOs and "-", replace regular files atomically (keeping their mode) and leave no
# temporary behind, on success or failure: `jager report -o`, `jager bench run -o`,
# `jager export -o` (and its exit code when the output cannot be written), `jager lock -o`.
# A device node made here (mknod, as root) stands in for /dev/null.
set -u
lib=$(readlink -f "${1:?usage: run_outputs.sh LIBJAGER JAGER PROG}")
jager=$(readlink -f "${2:?}")
prog=$(readlink -f "${3:?}")
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

LD_PRELOAD="$lib" JAGER_OUTPUT="$d/rec.jgr" "$prog" 200 || { echo "FAIL could not record"; exit 1; }

# report onto a device node: written straight, the node stays
if mknod "$d/null" c 1 3 2>/dev/null; then
  "$jager" report "$d/rec.jgr" -o "$d/null" >/dev/null 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then fail "report -o device: exit $rc"
  elif [ ! -c "$d/null" ]; then fail "report -o device: the device node was replaced ($(ls -l "$d/null"))"
  else ok "report -o onto a device node: exit 0, still a character device"; fi
  LD_PRELOAD="$lib" "$jager" bench run -n 1 -w 0 -o "$d/null" -- "$prog" 50 >/dev/null 2>&1
  rc=$?
  if [ $rc -ne 0 ] || [ ! -c "$d/null" ]; then fail "bench run -o device: exit $rc, $(ls -l "$d/null")"
  else ok "bench run -o onto a device node: still a character device"; fi
  "$jager" export --format chrome "$d/rec.jgr" -o "$d/null" >/dev/null 2>&1
  if [ ! -c "$d/null" ]; then fail "export -o device: replaced"; else ok "export -o onto a device node: still a device"; fi
else
  echo "note: not root, the device-node case is checked on /dev/null only (written straight)"
  "$jager" report "$d/rec.jgr" -o /dev/null >/dev/null 2>&1 && [ -c /dev/null ] || fail "report -o /dev/null"
fi

# report onto a FIFO: written straight to its reader
mkfifo "$d/fifo"
cat "$d/fifo" >"$d/from_fifo" &
reader=$!
"$jager" report "$d/rec.jgr" -o "$d/fifo" >/dev/null 2>&1
rc=$?
wait $reader
if [ $rc -ne 0 ] || [ ! -p "$d/fifo" ] || ! grep -q '<html' "$d/from_fifo"; then
  fail "report -o FIFO: exit $rc, $(ls -l "$d/fifo"), $(wc -c <"$d/from_fifo") bytes read"
else ok "report -o onto a FIFO: the page came through ($(wc -c <"$d/from_fifo") bytes), still a FIFO"; fi

# "-": standard output
"$jager" report "$d/rec.jgr" -o - >"$d/stdout.html" 2>/dev/null
if grep -q '<html' "$d/stdout.html"; then ok "report -o -: the page on standard output"; else fail "report -o -"; fi

# a symbolic link planted at the old temporary's name is never followed
echo precious >"$d/victim"
ln -s "$d/victim" "$d/page.html.tmp"
"$jager" report "$d/rec.jgr" -o "$d/page.html" >/dev/null 2>&1
rc=$?
if [ $rc -ne 0 ] || [ "$(cat "$d/victim")" != precious ] || [ ! -L "$d/page.html.tmp" ] || [ ! -f "$d/page.html" ] ||
  [ -L "$d/page.html" ] || ! grep -q '<html' "$d/page.html"; then
  fail "report with a symlinked .tmp: exit $rc, victim '$(head -c 40 "$d/victim")', $(ls -l "$d" | tr '\n' ' ')"
else ok "report with OUT.tmp a symlink: the link's target untouched, OUT a regular file with the page"; fi

# a regular file is replaced atomically and keeps its mode; no temporary is left
echo old >"$d/keep.html"
chmod 640 "$d/keep.html"
"$jager" report "$d/rec.jgr" -o "$d/keep.html" >/dev/null 2>&1
mode=$(stat -c %a "$d/keep.html")
if [ "$mode" != 640 ] || ! grep -q '<html' "$d/keep.html"; then fail "report onto a regular file: mode $mode"
else ok "report onto an existing file: replaced, mode 640 kept"; fi
LD_PRELOAD="$lib" "$jager" bench run -n 1 -w 0 -o "$d/res.json" -- "$prog" 50 >/dev/null 2>&1
if grep -q '"results"' "$d/res.json" 2>/dev/null; then ok "bench run -o a new file: written"; else fail "bench run -o res.json"; fi

# compare --markdown: atomically onto a regular file (mode kept), straight onto a device
echo old >"$d/table.md"
chmod 600 "$d/table.md"
"$jager" compare "$d/res.json" "$d/res.json" --any-machine --no-annotations --markdown "$d/table.md" >/dev/null 2>&1
if grep -q '|' "$d/table.md" && [ "$(stat -c %a "$d/table.md")" = 600 ]; then ok "compare --markdown onto a file: replaced, mode kept"
else fail "compare --markdown: $(ls -l "$d/table.md"), $(head -c 80 "$d/table.md")"; fi
if [ -c "$d/null" ]; then
  "$jager" compare "$d/res.json" "$d/res.json" --any-machine --no-annotations --markdown "$d/null" >/dev/null 2>&1
  [ -c "$d/null" ] && ok "compare --markdown onto a device node: still a device" || fail "compare --markdown replaced the device"
fi

# jager lock -o: the same rules (it wrote PATH.tmp<pid> with fopen and renamed it onto PATH)
lock() { "$jager" lock --no-cache -o "$1" -- "$prog" >/dev/null 2>"$d/lockerr"; }
if [ -c "$d/null" ]; then dev="$d/null"; else dev=/dev/null; fi # never the real one as root
lock "$dev"
rc=$?
if [ $rc -ne 0 ] || [ ! -c "$dev" ]; then fail "lock -o device $dev: exit $rc, $(ls -l "$dev"), $(cat "$d/lockerr")"
else ok "lock -o onto a device node: exit 0, still a character device"; fi
mkfifo "$d/lock.fifo"
timeout 20 cat "$d/lock.fifo" >"$d/lock_from_fifo" &
reader=$!
timeout 20 "$jager" lock --no-cache -o "$d/lock.fifo" -- "$prog" >/dev/null 2>"$d/lockerr"
rc=$?
wait $reader
if [ $rc -ne 0 ] || [ ! -p "$d/lock.fifo" ] || ! grep -q '"jager.lock"' "$d/lock_from_fifo"; then
  fail "lock -o FIFO: exit $rc, $(ls -l "$d/lock.fifo"), $(wc -c <"$d/lock_from_fifo") bytes read, $(cat "$d/lockerr")"
else ok "lock -o onto a FIFO: the lock came through, still a FIFO"; fi
# symbolic links planted at PATH.tmp and at the old temporary's very name (exec keeps the pid)
echo precious >"$d/lock_victim"
ln -s "$d/lock_victim" "$d/run.lock.tmp"
sh -c 'ln -s "$1" "$2.tmp$$" && exec "$3" lock --no-cache -o "$2" -- "$4"' sh "$d/lock_victim" "$d/run.lock" "$jager" "$prog" \
  >/dev/null 2>"$d/lockerr"
rc=$?
if [ $rc -ne 0 ] || [ "$(cat "$d/lock_victim")" != precious ] || [ -L "$d/run.lock" ] || ! grep -q '"jager.lock"' "$d/run.lock"; then
  fail "lock with symlinked temporaries: exit $rc, victim '$(head -c 40 "$d/lock_victim")', $(cat "$d/lockerr")"
else ok "lock with PATH.tmp* symlinks planted: their target untouched, PATH a regular file with the lock"; fi
echo old >"$d/run.lock"
chmod 640 "$d/run.lock"
lock "$d/run.lock"
[ "$(stat -c %a "$d/run.lock")" = 640 ] && grep -q '"jager.lock"' "$d/run.lock" && ok "lock onto an existing file: replaced, mode 640 kept" ||
  fail "lock onto an existing file: $(ls -l "$d/run.lock")"
(cd "$d" && "$jager" lock --no-cache -o - -- "$prog" >"$d/lock_stdout" 2>/dev/null)
if grep -q '"jager.lock"' "$d/lock_stdout" && [ ! -e "$d/-" ]; then ok "lock -o -: the lock on standard output"; else fail "lock -o -"; fi
rm -f "$d"/*.tmp* "$d/run.lock.tmp"

# a symbolic link at OUT itself is written through (like a shell's >), and stays a link
echo old >"$d/target.html"
ln -s "$d/target.html" "$d/link.html"
"$jager" report "$d/rec.jgr" -o "$d/link.html" >/dev/null 2>&1
if [ -L "$d/link.html" ] && grep -q '<html' "$d/target.html"; then ok "report onto a symlink: written through, the link stays"
else fail "report onto a symlink: $(ls -l "$d/link.html")"; fi

# a write that cannot happen: the usage exit code, no temporary, the old file intact
mkdir "$d/ro"
echo old >"$d/ro/page.html"
chmod 555 "$d/ro"
if [ "$(id -u)" != 0 ]; then
  "$jager" report "$d/rec.jgr" -o "$d/ro/page.html" >/dev/null 2>&1
  rc=$?
  [ $rc -eq 1 ] && [ "$(cat "$d/ro/page.html")" = old ] && [ "$(ls -A "$d/ro")" = page.html ] ||
    fail "report into a read-only folder: exit $rc, $(ls -A "$d/ro")"
fi
"$jager" report "$d/rec.jgr" -o "$d/missing/page.html" >/dev/null 2>"$d/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "missing/page.html" "$d/err"; then ok "report into a missing folder: exit 1, said"
else fail "report into a missing folder: exit $rc, $(cat "$d/err")"; fi
chmod 755 "$d/ro"

# export: an output that cannot be written is the output's fault (exit 1, as report), not
# "unreadable input" (2)
if [ -w /dev/full ]; then
  "$jager" export --format chrome "$d/rec.jgr" -o /dev/full >/dev/null 2>"$d/err"
  rc=$?
  if [ $rc -eq 1 ] && grep -q "No space left" "$d/err"; then ok "export -o /dev/full: exit 1, said"
  else fail "export -o /dev/full: exit $rc, $(cat "$d/err")"; fi
fi
"$jager" export --format chrome "$d/rec.jgr" -o "$d/missing/x.json" >/dev/null 2>"$d/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "missing/x.json" "$d/err"; then ok "export into a missing folder: exit 1, said"
else fail "export into a missing folder: exit $rc, $(cat "$d/err")"; fi
"$jager" export --format chrome "$d/nothing.jgr" -o "$d/x.json" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && ok "export of a missing recording: still exit 2" || fail "export of a missing recording: exit $rc"

# negative and not-a-number option values are refused (usage, exit 1), never wrapped
for args in "report $d/rec.jgr --max-spans -1 -o $d/neg.html" "dump $d/rec.jgr --limit -5" "hunt $d/rec.jgr --min-pct nan" \
  "hunt $d/rec.jgr --min-pct -1" "dump $d/rec.jgr --limit 1e3"; do
  # shellcheck disable=SC2086
  "$jager" $args >/dev/null 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "jager $args: exit $rc (want 1)"
done
[ ! -e "$d/neg.html" ] || fail "report --max-spans -1 wrote a page"
ok "negative and NaN option values: exit 1"

left=$(ls -A "$d" | grep -E '\.[A-Za-z0-9]{6}$')
[ -z "$left" ] || fail "temporaries left behind: $left"
if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all checks passed"
