#!/usr/bin/env bash
# run-supply-c.sh JAGER PROG LIBVICTIM LIBDIR CC TREE_HASH — the C side of the supply-chain
# scanner: `jager lock` of a program's shared objects, `jager verify` (clean, a rebuilt
# library, a removed one), JAGER_LOCK at jager_init (security events in the .jgr, strict
# status, abort before work), a library dlopened mid-run (checked when it appears: the event
# lies between the program's marks around dlopen and before shutdown), malformed/truncated/
# future lock files, and the tree hash against `git write-tree`.
set -euo pipefail
jager=$1 prog=$2 victim=$3 libdir=$4 cc=$5 treehash=$6 late=$7
src=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d /tmp/jager-supply-c.XXXXXX)
trap 'chmod -R u+rwX "$t" 2>/dev/null; rm -rf "$t"' EXIT
export JAGER_SUPPLY_CACHE="$t/cache/supply-cache.json" # the lock step's cache: this test's own
fails=0
ok()   { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
expect_rc() { local want=$1 name=$2; shift 2; local rc=0; "$@" > "$t/out" 2> "$t/err" || rc=$?
  if [ "$rc" = "$want" ]; then ok "$name (exit $rc)"; else fail "$name: exit $rc, wanted $want"; cat "$t/out" "$t/err"; fi; }
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else fail "$1: '$2' not in $3"; cat "$3"; fi; }
hasnt() { if grep -qF -- "$2" "$3"; then fail "$1: '$2' in $3"; cat "$3"; else ok "$1"; fi; }

mkdir -p "$t/lib1" "$t/lib2" "$t/bin"
cp "$victim" "$t/lib1/libvictim.so"
cp "$prog" "$t/bin/prog"
export LD_LIBRARY_PATH="$t/lib1:$libdir"
"$cc" -shared -fPIC -DVICTIM_VALUE=2 -o "$t/lib2/libvictim.so" "$src/victim.c"

# --- lock, untouched verify ---
expect_rc 0 "lock a program" "$jager" lock -o "$t/prog.lock" -- "$t/bin/prog"
has "lock names the rebuilt-to-be library" "\"$t/lib1/libvictim.so\"" "$t/prog.lock"
has "lock names the program" "\"$t/bin/prog\"" "$t/prog.lock"
has "lock names libjager" "libjager.so" "$t/prog.lock"
has "lock is versioned" '"version": 1' "$t/prog.lock"
has "lock has build ids" '"build_id": "' "$t/prog.lock"
expect_rc 0 "verify untouched" "$jager" verify "$t/prog.lock"
has "verify clean says so" "no differences" "$t/out"
# sorted paths (stable order)
grep -o '"path": "[^"]*"' "$t/prog.lock" > "$t/paths"
if sort -c "$t/paths" 2>/dev/null; then ok "shared objects sorted by path"; else fail "shared objects not sorted"; fi
# a SHA-256 checked against sha256sum
want=$(sha256sum "$t/lib1/libvictim.so" | cut -d' ' -f1)
has "sha256 equals sha256sum's" "$want" "$t/prog.lock"

# --- in-process: untouched, JAGER_LOCK clean ---
expect_rc 0 "JAGER_LOCK clean run" env JAGER_LOCK="$t/prog.lock" JAGER_STRICT=1 JAGER_OUTPUT="$t/clean.jgr" "$t/bin/prog"
has "clean run works" "work 1" "$t/out"
"$jager" dump "$t/clean.jgr" > "$t/clean.dump"
hasnt "clean run: no security event" '"security"' "$t/clean.dump"

# --- plugins: strict refuses one the lock does not list (an event, the run goes on); not
# strict loads it and the objects mapped since start are checked at jager_shutdown ---
if [ -f "$libdir/../plugins/libjager-gc.so" ]; then
  expect_rc 0 "strict run asking for an unlocked plugin" env JAGER_LOCK="$t/prog.lock" JAGER_STRICT=1 JAGER_PLUGINS=gc \
    JAGER_PLUGIN_PATH="$libdir/../plugins" JAGER_OUTPUT="$t/plugin.jgr" JAGER_QUIET=0 "$t/bin/prog"
  has "strict: unlocked plugin refused" "plugin 'gc'" "$t/err"
  has "strict: refusal says why" "supply chain: added" "$t/err"
  "$jager" dump "$t/plugin.jgr" > "$t/plugin.dump"
  has "strict: refused plugin is a security event" '"supply.file":"'"$(realpath "$libdir/../plugins/libjager-gc.so")"'"' "$t/plugin.dump"
  if grep -q '"jager.plugins":"gc"' "$t/plugin.dump"; then fail "strict: the plugin was loaded"; else ok "strict: the plugin was not loaded"; fi
  expect_rc 0 "non-strict run loading a plugin" env JAGER_LOCK="$t/prog.lock" JAGER_PLUGINS=gc \
    JAGER_PLUGIN_PATH="$libdir/../plugins" JAGER_OUTPUT="$t/plugin2.jgr" "$t/bin/prog"
  "$jager" dump "$t/plugin2.jgr" > "$t/plugin2.dump"
  has "plugin mapped after start: added event" "libjager-gc.so" "$t/plugin2.dump"
else echo "skip plugin cases (gc plugin not built)"; fi

# --- LD_LIBRARY_PATH at a rebuilt library (another path): mapped but not locked ---
expect_rc 0 "non-strict run with a rebuilt library" env LD_LIBRARY_PATH="$t/lib2:$libdir" JAGER_LOCK="$t/prog.lock" \
  JAGER_OUTPUT="$t/other.jgr" "$t/bin/prog"
has "non-strict run goes on" "work 2" "$t/out"
"$jager" dump "$t/other.jgr" > "$t/other.dump"
has "security event in the .jgr" '"security":true' "$t/other.dump"
has "event names the library" "$t/lib2/libvictim.so" "$t/other.dump"
has "event kind added" '"supply.kind":"added"' "$t/other.dump"
expect_rc 3 "strict run with a rebuilt library" env LD_LIBRARY_PATH="$t/lib2:$libdir" JAGER_LOCK="$t/prog.lock" \
  JAGER_STRICT=1 JAGER_OUTPUT="$t/strict.jgr" JAGER_QUIET=0 "$t/bin/prog"
has "strict: jager_init returns JAGER_E_SUPPLY_CHAIN" "init -14 JAGER_E_SUPPLY_CHAIN" "$t/out"
hasnt "strict: no work" "work" "$t/out"
has "strict: table names the library" "$t/lib2/libvictim.so" "$t/err"
if [ -e "$t/strict.jgr" ]; then fail "strict: a recording was started"; else ok "strict: no recording"; fi

# --- the locked library replaced in place ---
cp "$t/lib2/libvictim.so" "$t/lib1/libvictim.so"
expect_rc 1 "verify a replaced library" "$jager" verify "$t/prog.lock"
has "verify names it modified" "modified" "$t/out"
has "verify names the file" "$t/lib1/libvictim.so" "$t/out"
expect_rc 78 "JAGER_STRICT=abort exits before work" env JAGER_LOCK="$t/prog.lock" JAGER_STRICT=abort "$t/bin/prog"
hasnt "abort: no work, not even init's line" "init" "$t/out"
has "abort: clear message" "JAGER_STRICT=abort: exiting before the program runs" "$t/err"
has "abort: names the file" "$t/lib1/libvictim.so" "$t/err"
expect_rc 0 "non-strict run with a replaced library" env JAGER_LOCK="$t/prog.lock" JAGER_OUTPUT="$t/mod.jgr" "$t/bin/prog"
"$jager" dump "$t/mod.jgr" > "$t/mod.dump"
has "replaced: modified event" '"supply.kind":"modified"' "$t/mod.dump"
has "replaced: severity error" '"severity":17' "$t/mod.dump"
# the tools show the security events
"$jager" summary "$t/mod.jgr" > "$t/summary" 2>&1 || true
has "summary shows security events" "SECURITY: 1 supply-chain event" "$t/summary"
has "summary names the library" "$t/lib1/libvictim.so" "$t/summary"
"$jager" summary --format json "$t/mod.jgr" > "$t/summary.json" 2>&1 || true
has "summary json counts them" '"security_events":1' "$t/summary.json"
"$jager" hunt "$t/mod.jgr" > "$t/hunt" 2>&1 || true
has "hunt ranks supply_chain first" "1. [supply_chain]" "$t/hunt"
"$jager" hunt --format json "$t/mod.jgr" > "$t/hunt.json" 2>&1 || true
has "hunt json: rank 1 supply_chain" '{"rank":1,"kind":"supply_chain"' "$t/hunt.json"
"$jager" report "$t/mod.jgr" -o "$t/report.html" > /dev/null 2>&1 || true
has "report has the red banner" 'class="security-banner"' "$t/report.html"
has "report banner names the library" "$t/lib1/libvictim.so" "$t/report.html"
clean_banner=$("$jager" report "$t/clean.jgr" -o "$t/clean.html" > /dev/null 2>&1; grep -c 'class="security-banner"' "$t/clean.html" || true)
if [ "$clean_banner" = 0 ]; then ok "clean report: no banner"; else fail "clean report has a banner"; fi
# a hostile library name: escaped in the banner, the summary and verify's table
cp "$t/lib2/libvictim.so" "$t/lib1/x<b>y.so"
ln -sf "$t/lib1/x<b>y.so" "$t/lib1/libvictim.so"
env JAGER_LOCK="$t/prog.lock" JAGER_OUTPUT="$t/evil.jgr" "$t/bin/prog" > /dev/null 2>&1 || true
"$jager" report "$t/evil.jgr" -o "$t/evil.html" > /dev/null 2>&1 || true
has "banner HTML-escapes names" 'x&lt;b&gt;y.so' "$t/evil.html"
if grep -q 'x<b>y.so' "$t/evil.html"; then fail "banner has the raw name"; else ok "banner has no raw markup"; fi
rm "$t/lib1/libvictim.so" "$t/lib1/x<b>y.so"
expect_rc 1 "verify a removed library" "$jager" verify "$t/prog.lock"
has "removed named" "removed" "$t/out"

# --- zero-code mode (libjager preloaded): locked with the same LD_PRELOAD, clean; without, abort ---
LD_PRELOAD="$libdir/libjager.so" "$jager" lock -o "$t/echo-pre.lock" -- /bin/echo > /dev/null 2>&1
"$jager" lock -o "$t/echo.lock" -- /bin/echo > /dev/null 2>&1
expect_rc 0 "zero-code, strict, locked with the preload" env LD_PRELOAD="$libdir/libjager.so" JAGER_OUTPUT="$t/zc.jgr" \
  JAGER_LOCK="$t/echo-pre.lock" JAGER_STRICT=1 /bin/echo zc-work
has "zero-code clean: the program ran" "zc-work" "$t/out"
expect_rc 78 "zero-code, abort, preload not locked" env LD_PRELOAD="$libdir/libjager.so" JAGER_OUTPUT="$t/zc2.jgr" \
  JAGER_LOCK="$t/echo.lock" JAGER_STRICT=abort /bin/echo zc-work
hasnt "zero-code abort: before the program's work" "zc-work" "$t/out"
has "zero-code abort: names libjager" "libjager.so" "$t/err"
# zero-code, a library dlopened mid-run (python's ctypes): the watcher sees it there too
py=$(command -v python3 || true); py=${py:+$(readlink -f "$py")}
if [ -n "$py" ]; then
  LD_PRELOAD="$libdir/libjager.so" "$jager" lock -o "$t/py.lock" -- "$py" > /dev/null 2>&1
  expect_rc 0 "zero-code, a library dlopened mid-run" env LD_PRELOAD="$libdir/libjager.so" JAGER_LOCK="$t/py.lock" \
    JAGER_OUTPUT="$t/py.%p.jgr" "$py" -c "import ctypes, time; time.sleep(0.3); ctypes.CDLL('$t/lib2/libvictim.so'); time.sleep(1)"
  for f in "$t"/py.*.jgr; do "$jager" dump "$f"; done > "$t/py.dump" 2>&1
  has "zero-code, dlopened mid-run: an added event naming it" '"supply.kind":"added","supply.package":"(shared objects)","supply.file":"'"$t/lib2/libvictim.so"'"' "$t/py.dump"
else echo "skip zero-code dlopen case: no python3"; fi

# --- a library dlopened mid-run: checked when it appears, not at jager_shutdown ---
# time_ns of the first event of $2 (a dump) matching $1
t_of() { { grep -F -- "$1" "$2" || true; } | head -1 | sed 's/.*"time_ns":\([0-9]*\).*/\1/'; }
# between() NAME DUMP FILE: the security event naming FILE lies after "late: dlopen" and before
# "late: shutdown" (3 s later): checked when it appeared, not at jager_shutdown
between() { local a b e; a=$(t_of '"body":"late: dlopen"' "$2"); b=$(t_of '"body":"late: shutdown"' "$2")
  e=$(t_of '"security":true,"supply.kind":"' "$2")
  if [ -n "$a" ] && [ -n "$b" ] && [ -n "$e" ] && [ "$e" -ge "$a" ] && [ "$e" -lt "$b" ]; then
    ok "$1: the event is $(( (e - a) / 1000000 )) ms after dlopen, $(( (b - e) / 1000000 )) ms before shutdown"
  else fail "$1: dlopen $a, event $e, shutdown $b"; cat "$2"; fi; }
mkdir -p "$t/late1" "$t/late2"
cp "$victim" "$t/late1/libvictim.so"
cp "$t/lib2/libvictim.so" "$t/late2/libvictim.so"
cp "$late" "$t/bin/late"
# the lock: what the program maps at start-up, and (--pid) what it maps once it has dlopened late1
rm -f "$t/hold" "$t/hold.ready"
"$t/bin/late" "$t/late1/libvictim.so" "$t/hold" > "$t/late-lock.out" 2>&1 &
lpid=$!
for i in $(seq 1 300); do [ -e "$t/hold.ready" ] && break; sleep 0.1; done
expect_rc 0 "lock a process that dlopened a library" "$jager" lock -o "$t/late.lock" --pid "$lpid" -- "$t/bin/late"
touch "$t/hold"; wait "$lpid" || true
has "the lock lists the dlopened library" "\"$t/late1/libvictim.so\"" "$t/late.lock"
expect_rc 0 "late: a locked library dlopened mid-run" env JAGER_LOCK="$t/late.lock" JAGER_OUTPUT="$t/late-ok.jgr" \
  "$t/bin/late" "$t/late1/libvictim.so"
"$jager" dump "$t/late-ok.jgr" > "$t/late-ok.dump"
hasnt "late, locked and unchanged: no security event" '"security":true' "$t/late-ok.dump"
expect_rc 0 "late: an unlocked library dlopened mid-run" env JAGER_LOCK="$t/late.lock" JAGER_OUTPUT="$t/late-add.jgr" \
  "$t/bin/late" "$t/late2/libvictim.so"
has "late, unlocked: the run goes on" "done" "$t/out"
"$jager" dump "$t/late-add.jgr" > "$t/late-add.dump"
has "late, unlocked: an added event naming it" '"supply.kind":"added","supply.package":"(shared objects)","supply.file":"'"$t/late2/libvictim.so"'"' "$t/late-add.dump"
between "late, unlocked" "$t/late-add.dump"
n=$(grep -c '"security":true' "$t/late-add.dump" || true)
if [ "$n" = 1 ]; then ok "late, unlocked: exactly one security event"; else fail "late, unlocked: $n security events"; cat "$t/late-add.dump"; fi
cp "$t/late2/libvictim.so" "$t/late1/libvictim.so" # the locked one rebuilt in place
expect_rc 0 "late: a modified library dlopened mid-run" env JAGER_LOCK="$t/late.lock" JAGER_OUTPUT="$t/late-mod.jgr" \
  "$t/bin/late" "$t/late1/libvictim.so"
"$jager" dump "$t/late-mod.jgr" > "$t/late-mod.dump"
has "late, modified: a modified event naming it" '"supply.kind":"modified","supply.package":"(shared objects)","supply.file":"'"$t/late1/libvictim.so"'"' "$t/late-mod.dump"
between "late, modified" "$t/late-mod.dump"
# strict: the object is mapped already: the event, a line on stderr, the run goes on
expect_rc 0 "late, strict: the run goes on" env JAGER_LOCK="$t/late.lock" JAGER_STRICT=1 JAGER_QUIET=0 \
  JAGER_OUTPUT="$t/late-strict.jgr" "$t/bin/late" "$t/late2/libvictim.so"
has "late, strict: stderr says it" "an object mapped after start differs from the lock" "$t/err"
has "late, strict: the table names it" "$t/late2/libvictim.so" "$t/err"
has "late, strict: the program finished" "done" "$t/out"
"$jager" dump "$t/late-strict.jgr" > "$t/late-strict.dump"
between "late, strict" "$t/late-strict.dump"
has "late, strict: the event is marked late" '"supply.late":true' "$t/late-strict.dump"
# a library at a path that is not UTF-8 is checked all the same
bad="$t/late$(printf '\377')x"; mkdir -p "$bad"; cp "$t/late2/libvictim.so" "$bad/libvictim.so"
expect_rc 0 "late: a library at a non-UTF-8 path" env JAGER_LOCK="$t/late.lock" JAGER_OUTPUT="$t/late-bad.jgr" "$t/bin/late" "$bad/libvictim.so"
"$jager" dump "$t/late-bad.jgr" > "$t/late-bad.dump"
n=$(grep -c '"supply.kind":"added"' "$t/late-bad.dump" || true)
if [ "$n" = 1 ]; then ok "late, non-UTF-8 path: one added event"; else fail "late, non-UTF-8 path: $n added events"; cat "$t/late-bad.dump"; fi
# abort: the process exits when the object is seen, before its shutdown
expect_rc 78 "late, JAGER_STRICT=abort: exits" env JAGER_LOCK="$t/late.lock" JAGER_STRICT=abort \
  JAGER_OUTPUT="$t/late-abort.jgr" "$t/bin/late" "$t/late2/libvictim.so"
has "late, abort: clear message" "JAGER_STRICT=abort: exiting (status 78)" "$t/err"
has "late, abort: ran until the dlopen" "late 2" "$t/out"
hasnt "late, abort: not to its end" "done" "$t/out"

# --- the lock step's cache: unchanged files reused, a changed one rehashed, edited entries not trusted ---
mkdir -p "$t/cachebin"; cp "$t/bin/prog" "$t/cachebin/prog"; cp "$victim" "$t/lib1/libvictim.so"
sleep 2 # older than the cache's racily-clean margin (1 s), so every file may be stored
rm -rf "$t/cache"
expect_rc 0 "cache: a cold lock" "$jager" lock --no-cache -o "$t/nc.lock" -- "$t/cachebin/prog"
nobj=$(grep -c '"sha256": "' "$t/nc.lock")
expect_rc 0 "cache: the first lock with the cache" "$jager" lock -o "$t/c1.lock" -- "$t/cachebin/prog"
has "cache: first lock hashes all" "0 files unchanged, $nobj hashed ($nobj stored, 0 too recent to store), 0 entries rejected" "$t/err"
if cmp -s "$t/nc.lock" "$t/c1.lock"; then ok "cache: the lock equals the uncached one"; else fail "cache: locks differ"; diff "$t/nc.lock" "$t/c1.lock"; fi
if [ "$(stat -c %a "$t/cache/supply-cache.json.key")" = 600 ]; then ok "cache: the key is mode 0600"; else fail "cache: key mode $(stat -c %a "$t/cache/supply-cache.json.key")"; fi
expect_rc 0 "cache: a warm lock" "$jager" lock -o "$t/c2.lock" -- "$t/cachebin/prog"
has "cache: warm lock reads nothing" "$nobj files unchanged, 0 hashed" "$t/err"
if cmp -s "$t/nc.lock" "$t/c2.lock"; then ok "cache: the warm lock equals the uncached one"; else fail "cache: warm lock differs"; fi
# the same size, the mtime put back: the ctime still moved, so it is rehashed
printf 'XXXX' | dd of="$t/lib1/libvictim.so" bs=1 seek=1000 conv=notrunc 2>/dev/null
touch -r "$t/cachebin/prog" "$t/lib1/libvictim.so"
want=$(sha256sum "$t/lib1/libvictim.so" | cut -d' ' -f1)
expect_rc 0 "cache: lock after a same-size change, mtime restored" "$jager" lock -o "$t/c3.lock" -- "$t/cachebin/prog"
has "cache: the changed file is rehashed" "$((nobj - 1)) files unchanged, 1 hashed" "$t/err"
has "cache: the lock has the changed file's sha256sum" "$want" "$t/c3.lock"
expect_rc 1 "cache: verify of the old lock catches the change" "$jager" verify "$t/c2.lock"
has "cache: verify names it modified" "$t/lib1/libvictim.so" "$t/out"
# an entry edited (another hash, its MAC kept) is not trusted
sleep 2
"$jager" lock -o "$t/c4.lock" -- "$t/cachebin/prog" 2> /dev/null # stores the changed file's entry
fake=0000000000000000000000000000000000000000000000000000000000000000
sed -i "s/\"$want\"/\"$fake\"/" "$t/cache/supply-cache.json"
if grep -q "$fake" "$t/cache/supply-cache.json"; then ok "cache: an entry edited"; else fail "cache: the entry to edit is not in the cache"; fi
expect_rc 0 "cache: lock with an edited entry" "$jager" lock -o "$t/c5.lock" -- "$t/cachebin/prog"
has "cache: the edited entry is rejected" "$((nobj - 1)) files unchanged, 1 hashed (1 stored, 0 too recent to store), 1 entry rejected" "$t/err"
has "cache: the lock has the real sha256" "$want" "$t/c5.lock"
hasnt "cache: not the forged one" "$fake" "$t/c5.lock"
# a key others can read is not used
chmod 644 "$t/cache/supply-cache.json.key"
expect_rc 0 "cache: lock with a readable key" "$jager" lock -o "$t/c6.lock" -- "$t/cachebin/prog"
has "cache: a readable key is refused" "not a key of this user's (32 bytes, mode 0600): cache not used" "$t/err"
if cmp -s "$t/c5.lock" "$t/c6.lock"; then ok "cache: without it the lock is the same"; else fail "cache: lock differs without the cache"; fi
# verify never uses it
rm -rf "$t/cache"; mkdir -p "$t/cache"; JAGER_SUPPLY_CACHE="$t/cache/supply-cache.json" "$jager" verify "$t/c5.lock" > /dev/null 2>&1 || true
if [ -z "$(ls -A "$t/cache")" ]; then ok "cache: verify neither reads nor writes it"; else fail "cache: verify touched the cache"; fi

# --- unreadable files and folders, as an unprivileged user (root reads anything) ---
. "$src/unpriv.sh" # sets $unpriv
if [ -n "$unpriv" ]; then
  u="$t/unread"; mkdir -p "$u/P/src/deep"
  printf 'a\n' > "$u/P/src/a.jl"; printf 'b\n' > "$u/P/src/b.jl"; printf 'c\n' > "$u/P/src/deep/c.jl"
  ha=$(sha256sum "$u/P/src/a.jl" | cut -d' ' -f1) hb=$(sha256sum "$u/P/src/b.jl" | cut -d' ' -f1) hc=$(sha256sum "$u/P/src/deep/c.jl" | cut -d' ' -f1)
  printf '{"format":"jager.lock","version":1,"julia":{"packages":[{"name":"P","uuid":"1","version":"","source":"%s","files":{"src/a.jl":"%s","src/b.jl":"%s","src/deep/c.jl":"%s"}}]}}\n' \
    "$u/P" "$ha" "$hb" "$hc" > "$u/p.lock"
  chmod 755 "$t"; chmod -R a+rX "$u"
  expect_rc 0 "unreadable: clean as the unprivileged user" $unpriv "$jager" verify --no-environment "$u/p.lock"
  chmod 000 "$u/P/src/b.jl" "$u/P/src/deep"
  expect_rc 1 "unreadable: a file and a folder the user cannot read ($unpriv)" $unpriv "$jager" verify --no-environment "$u/p.lock"
  has "unreadable: the file named" "unreadable  P        src/b.jl" "$t/out"
  has "unreadable: why" "Permission denied" "$t/out"
  has "unreadable: the folder named" "unreadable  P        src/deep       cannot open the folder: Permission denied" "$t/out"
  has "unreadable: a locked file in it is not called removed" "src/deep/c.jl  locked file not checked: the folder src/deep cannot be read" "$t/out"
  hasnt "unreadable: nothing removed" "removed" "$t/out"
  hasnt "unreadable: a file not read is not called modified" "modified" "$t/out"
  chmod 755 "$u/P/src/deep"; chmod 644 "$u/P/src/b.jl"; chmod 700 "$t"
else echo "skip unreadable files: running as root and neither setpriv nor runuser can drop to an unprivileged user"; fi

# --- bad lock files ---
head -c 200 "$t/prog.lock" > "$t/trunc.lock"
expect_rc 2 "truncated lock" "$jager" verify "$t/trunc.lock"
has "truncated: clear error" "malformed or truncated lock file" "$t/err"
printf '{"format": "jager.lock", "version": 1, "shared_objects": {}}\n' > "$t/bad.lock"
expect_rc 2 "malformed lock" "$jager" verify "$t/bad.lock"
has "malformed: clear error" '"shared_objects" is not an array' "$t/err"
printf '{"format": "jager.lock", "version": 2}\n' > "$t/future.lock"
expect_rc 2 "future lock" "$jager" verify "$t/future.lock"
has "future: clear error" "lock file version 2 is newer than this jager reads (1)" "$t/err"
printf '{"format": "other", "version": 1}\n' > "$t/other.lock"
expect_rc 2 "not a lock" "$jager" verify "$t/other.lock"
LD_LIBRARY_PATH="$t/lib2:$libdir" JAGER_LOCK="$t/trunc.lock" JAGER_STRICT=1 "$t/bin/prog" > "$t/out" 2>&1 || true
has "strict with an unreadable lock: refused" "init -14" "$t/out"

# --- the core links neither jansson nor libcrypto: the checker module is loaded only with
# JAGER_LOCK; a checker that cannot be loaded never passes a lock silently ---
if ldd "$libdir/libjager.so" | grep -qE 'libcrypto|libjansson'; then fail "libjager.so links the checker's libraries"; ldd "$libdir/libjager.so"
else ok "libjager.so links neither libcrypto nor jansson"; fi
expect_rc 3 "strict, the checker missing" env LD_LIBRARY_PATH="$t/lib2:$libdir" JAGER_SUPPLY_MODULE="$t/none/libjager-supply.so" JAGER_LOCK="$t/prog.lock" \
  JAGER_STRICT=1 JAGER_OUTPUT="$t/nomod.jgr" "$t/bin/prog"
has "strict, the checker missing: refused" "init -14 JAGER_E_SUPPLY_CHAIN" "$t/out"
expect_rc 0 "not strict, the checker missing" env LD_LIBRARY_PATH="$t/lib2:$libdir" JAGER_SUPPLY_MODULE="$t/none/libjager-supply.so" JAGER_LOCK="$t/prog.lock" \
  JAGER_OUTPUT="$t/nomod2.jgr" JAGER_QUIET=0 "$t/bin/prog"
has "not strict, the checker missing: says so" "not checked: the checker $t/none/libjager-supply.so cannot be loaded" "$t/err"
"$jager" dump "$t/nomod2.jgr" > "$t/nomod2.dump"
has "not strict, the checker missing: a security event" '"supply.kind":"unchecked"' "$t/nomod2.dump"
has "the lock holds the checker beside libjager" "libjager-supply.so" "$t/prog.lock"

# --- tree hash against git write-tree ---
mkdir -p "$t/repo/a/b" "$t/repo/empty/inner" "$t/repo/x"
printf 'one\n' > "$t/repo/a/b/f.txt"; printf 'two' > "$t/repo/top"; printf '#!/bin/sh\n' > "$t/repo/run.sh"
chmod +x "$t/repo/run.sh"; ln -s a/b/f.txt "$t/repo/link"; printf '' > "$t/repo/x/empty-file"
printf 'z\n' > "$t/repo/a.b"; printf 'y\n' > "$t/repo/a-"   # sort next to folder "a"
want=$(cd "$t/repo" && git init -q . && git add -A && git write-tree)
got=$("$treehash" "$t/repo")
if [ "$got" = "$want" ]; then ok "tree hash equals git write-tree ($got)"; else fail "tree hash $got, git $want"; fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
