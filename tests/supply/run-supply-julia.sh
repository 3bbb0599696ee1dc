#!/usr/bin/env bash
# run-supply-julia.sh JAGER TREE_HASH LIBJAGER — a generated Julia environment (tests/supply/make-env.sh:
# a dev'd path package and a package of a hand-made local registry, in a throw-away depot)
# locked with `jager lock --julia-project`, then tampered with case by case; each must be
# detected by `jager verify` (exit 1) with the package and file named; untouched verifies
# clean. Also the scanner's tree hash against Pkg's own for a standard library folder.
set -euo pipefail
jager=$1 treehash=$2 lib=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! julia=$("$root/scripts/install-julia.sh" --print); then
  echo "run-supply-julia: Julia could not be installed (scripts/install-julia.sh failed)" >&2
  exit 1
fi
export JAGER_JULIA="$julia" JAGER_SUPPLY_JL="$root/bindings/julia/src/supply_main.jl"
t=$(mktemp -d /tmp/jager-supply-jl.XXXXXX)
trap 'chmod -R u+rwX "$t" 2>/dev/null; rm -rf "$t"' EXIT
export JAGER_SUPPLY_CACHE="$t/cache/supply-cache.json" # the lock step's cache: this test's own
fails=0
ok()   { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else fail "$1: '$2' not in $3"; cat "$3"; fi; }
# fresh ENV; lock; apply a tamper; verify must exit 1 naming KIND, PACKAGE and FILE
fresh() { "$root/tests/supply/make-env.sh" "$t/e" "$julia"; export JULIA_DEPOT_PATH="$t/e/depot";
  "$jager" lock --julia-project "$t/e/env" -o "$t/e/j.lock" 2> "$t/lock.err"; }
verify() { local rc=0; "$jager" verify "$t/e/j.lock" > "$t/out" 2> "$t/err" || rc=$?; echo $rc; }
case_() { # name kind package file
  local rc; rc=$(verify)
  if [ "$rc" = 1 ]; then ok "$1: exit 1"; else fail "$1: exit $rc"; cat "$t/out" "$t/err"; fi
  has "$1: kind $2" "$2" "$t/out"; has "$1: package $3" "$3" "$t/out"; [ -z "$4" ] || has "$1: file $4" "$4" "$t/out"
}

fresh
has "lock has both packages" '"name": "Bar"' "$t/e/j.lock"
has "lock has the registry's tree hash" "\"tree_hash\": \"$(cat "$t/e/bar-tree")\"" "$t/e/j.lock"
has "lock has file hashes" '"src/helper.jl": "' "$t/e/j.lock"
has "lock has the Julia version" '"version": "1.5.3"' "$t/e/j.lock"
rc=$(verify); if [ "$rc" = 0 ]; then ok "untouched environment verifies clean"; else fail "untouched: exit $rc"; cat "$t/out"; fi
# Jager.Supply.lock() from Julia writes a lock the jager command reads and verifies clean
"$julia" --startup-file=no -e "include(\"$root/bindings/julia/src/supply.jl\"); Supply.lock(\"$t/e/env\"; output=\"$t/e/jl.lock\")"
rc=0; "$jager" verify "$t/e/jl.lock" > "$t/out" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then ok "Supply.lock() from Julia verifies clean"; else fail "Supply.lock(): verify exit $rc"; cat "$t/out"; fi
has "Supply.lock() names Foo's files" '"src/helper.jl": "' "$t/e/jl.lock"
# `jager lock` hashes the files itself (C, the lock step's cache): the same files and tree hashes as Julia's
grep -E '"(src/[^"]*|Project.toml|tree_hash)": ' "$t/e/j.lock" > "$t/c.hashes"; grep -E '"(src/[^"]*|Project.toml|tree_hash)": ' "$t/e/jl.lock" > "$t/j.hashes"
if [ -s "$t/c.hashes" ] && cmp -s "$t/c.hashes" "$t/j.hashes"; then ok "jager lock and Supply.lock() hash the same ($(wc -l < "$t/c.hashes") lines)"
else fail "jager lock and Supply.lock() differ"; diff "$t/c.hashes" "$t/j.hashes"; fi
# Pkg's tree hash and the C one agree on the lock's Foo and on a standard library folder
stdlib=$("$julia" --startup-file=no -e 'print(joinpath(Sys.STDLIB, "Printf"))')
pkg=$("$julia" --startup-file=no -e "import Pkg; print(bytes2hex(Pkg.GitTools.tree_hash(\"$stdlib\")))")
got=$("$treehash" "$stdlib")
if [ "$got" = "$pkg" ]; then ok "tree hash equals Pkg's for stdlib Printf ($got)"; else fail "tree hash $got, Pkg $pkg"; fi

fresh; printf 'X' | dd of="$t/e/env/Foo/src/Foo.jl" bs=1 seek=3 conv=notrunc 2>/dev/null
case_ "one byte changed" modified Foo src/Foo.jl
fresh; echo "# more" >> "$t/e/env/Foo/src/helper.jl"
case_ "a file appended" modified Foo src/helper.jl
fresh; rm "$t/e/env/Foo/src/helper.jl"
case_ "a file deleted" removed Foo src/helper.jl
fresh; echo 'x' > "$t/e/env/Foo/src/new.jl"
case_ "a file added" added Foo src/new.jl
fresh; sed -i 's/version = "0.1.0"/version = "0.2.0"/' "$t/e/env/Manifest.toml"
case_ "a version changed in the Manifest" version-drift Foo ""
has "version drift shows both" "version 0.1.0 locked, 0.2.0 in the Manifest" "$t/out"
fresh; sed -i 's/11111111-2222-3333-4444-555555555555/11111111-2222-3333-4444-999999999999/' "$t/e/env/Manifest.toml"
case_ "a UUID changed in the Manifest" uuid-drift Foo ""
fresh; bar=$(cat "$t/e/bar-dir"); rm -rf "$bar"; mkdir -p "$bar/src"; printf 'module Bar\ng() = 666\nend\n' > "$bar/src/Bar.jl"
cp "$t/e/bar-src/Project.toml" "$bar/"
case_ "a package directory swapped" modified Bar src/Bar.jl
has "swapped: tree hash against the Manifest" "tree-hash " "$t/out"
fresh; sed -i "s/git-tree-sha1 = \".*\"/git-tree-sha1 = \"0000000000000000000000000000000000000001\"/" \
  "$t/e/depot/registries/Local/B/Bar/Versions.toml"
"$jager" lock --julia-project "$t/e/env" -o "$t/e/j.lock" 2> /dev/null  # locked with the registry's (wrong) hash
case_ "a tree hash that no longer matches the registry" tree-hash-registry Bar ""
has "registry named" "registry Local lists 0000000000000000000000000000000000000001" "$t/out"
fresh; ln -s /etc/passwd "$t/e/env/Foo/src/evil.jl"
case_ "a symlink escaping the package" symlink-escape Foo src/evil.jl
fresh; ln -s ../../../../outside "$t/e/env/Foo/src/up"
case_ "a relative symlink escaping the package" symlink-escape Foo src/up
fresh; printf '[[Baz]]\npath = "Foo"\nuuid = "44444444-3333-4444-5555-666666666666"\nversion = "0.0.1"\n' >> "$t/e/env/Manifest.toml"
case_ "a package added to the Manifest" not-locked Baz ""
# an unreadable file: as an unprivileged user (root reads anything), files only
. "$root/tests/supply/unpriv.sh" # sets $unpriv
if [ -n "$unpriv" ]; then
  fresh; chmod 755 "$t"; chmod -R a+rX "$t/e"; chmod 000 "$t/e/env/Foo/src/helper.jl"
  rc=0; $unpriv "$jager" verify --no-environment "$t/e/j.lock" > "$t/out" 2> "$t/err" || rc=$?
  if [ "$rc" = 1 ]; then ok "an unreadable file: exit 1 ($unpriv)"; else fail "an unreadable file: exit $rc"; cat "$t/out" "$t/err"; fi
  has "an unreadable file: named" "unreadable  Foo" "$t/out"; has "an unreadable file: the file" "src/helper.jl" "$t/out"
  has "an unreadable file: why" "Permission denied" "$t/out"
  chmod 644 "$t/e/env/Foo/src/helper.jl"; chmod 700 "$t"
else echo "skip unreadable file: running as root and neither setpriv nor runuser can drop to an unprivileged user"; fi
# a hostile file name: control bytes escaped in the table
fresh; touch "$t/e/env/Foo/src/$(printf 'bad\033[31mname')"
case_ "a file with control bytes added" added Foo 'bad\x1b[31mname'

# ---- in Julia: Jager.start with JAGER_LOCK (non-strict events, strict throws, abort exits) ----
export JAGER_LIB="$lib"
jl() { local rc=0; "$julia" --startup-file=no --project="$t/e/env" -e "push!(LOAD_PATH, \"$root/bindings/julia\"); $1" > "$t/out" 2> "$t/err" || rc=$?; echo $rc; }
run_prog='using Jager; try; Jager.start(output=ENV["OUT"]); println("work"); Jager.stop(); catch e; e isa Jager.SupplyChainError ? println("threw SupplyChainError ", length(e.problems), " ", e.problems[1].kind, " ", e.problems[1].package, " ", e.problems[1].file) : rethrow(); end'
fresh
rc=$(OUT="$t/clean.jgr" JAGER_LOCK="$t/e/j.lock" JAGER_STRICT=1 jl "$run_prog")
if [ "$rc" = 0 ] && grep -q '^work' "$t/out"; then ok "Julia: untouched, strict: records"; else fail "Julia clean strict: exit $rc"; cat "$t/out" "$t/err"; fi
"$jager" dump "$t/clean.jgr" > "$t/clean.dump" 2>&1 || true
if grep -q '"security"' "$t/clean.dump"; then fail "Julia clean run has security events"; else ok "Julia clean run: no security event"; fi
printf 'X' | dd of="$t/e/env/Foo/src/Foo.jl" bs=1 seek=3 conv=notrunc 2>/dev/null
rc=$(OUT="$t/mod.jgr" JAGER_LOCK="$t/e/j.lock" jl "$run_prog")
has "Julia non-strict: the run goes on" "work" "$t/out"
"$jager" dump "$t/mod.jgr" > "$t/mod.dump" 2>&1 || true
has "Julia non-strict: security event in the .jgr" '"security":true' "$t/mod.dump"
has "Julia non-strict: names the file" '"supply.file":"src/Foo.jl"' "$t/mod.dump"
has "Julia non-strict: names the package" '"supply.package":"Foo"' "$t/mod.dump"
"$jager" hunt "$t/mod.jgr" > "$t/hunt" 2>&1 || true
has "Julia: hunt ranks supply_chain first" "1. [supply_chain]" "$t/hunt"
rc=$(OUT="$t/strict.jgr" JAGER_LOCK="$t/e/j.lock" JAGER_STRICT=1 jl "$run_prog")
has "Julia strict: throws SupplyChainError naming package and file" "threw SupplyChainError" "$t/out"
has "Julia strict: first problem" "modified Foo src/Foo.jl" "$t/out"
if grep -q '^work' "$t/out"; then fail "Julia strict: work ran"; else ok "Julia strict: no work"; fi
if [ -e "$t/strict.jgr" ]; then fail "Julia strict: a recording was started"; else ok "Julia strict: nothing recorded"; fi
rc=$(OUT="$t/abort.jgr" JAGER_LOCK="$t/e/j.lock" JAGER_STRICT=abort jl "$run_prog")
if [ "$rc" = 78 ]; then ok "Julia abort: exit 78"; else fail "Julia abort: exit $rc"; cat "$t/err"; fi
has "Julia abort: clear message" "JAGER_STRICT=abort: exiting before the program runs" "$t/err"
if grep -q '^work' "$t/out"; then fail "Julia abort: work ran"; else ok "Julia abort: no work"; fi
# `using Jager` with JAGER_OUTPUT set: the recording it starts carries the events too
rc=$(JAGER_OUTPUT="$t/env.jgr" JAGER_LOCK="$t/e/j.lock" jl 'using Jager; println("work")')
"$jager" dump "$t/env.jgr" > "$t/env.dump" 2>&1 || true
has "using Jager + JAGER_OUTPUT: security event" '"supply.kind":"modified"' "$t/env.dump"
# a truncated lock: strict refuses with a clear error, Supply.verify throws LockFormatError
head -c 300 "$t/e/j.lock" > "$t/trunc.lock"
rc=$(OUT="$t/t.jgr" JAGER_LOCK="$t/trunc.lock" JAGER_STRICT=1 jl "$run_prog")
has "Julia strict, truncated lock: refused" "threw SupplyChainError 1 lock-unreadable" "$t/out"
rc=$(jl "using Jager; try; Jager.Supply.verify(\"$t/trunc.lock\"); catch e; println(sprint(showerror, e)); end")
has "Supply.verify: truncated lock, clear error" "malformed or truncated lock file" "$t/out"
# a package loaded in the session but not in the lock
fresh
rc=$(jl "using Jager, Bar; S = Jager.Supply; d = S.read_lock(\"$t/e/j.lock\"); filter!(p -> p[\"name\"] != \"Bar\", d[\"julia\"][\"packages\"]); open(io -> S.json_out(io, d), \"$t/nobar.lock\", \"w\"); for p in S.verify(\"$t/nobar.lock\"); println(p.kind, \" \", p.package); end")
has "Supply.verify: loaded but not locked" "loaded-not-locked Bar" "$t/out"
has "Supply.verify: in the Manifest but not locked" "not-locked Bar" "$t/out"

echo "$fails failure(s)"
[ "$fails" = 0 ]
