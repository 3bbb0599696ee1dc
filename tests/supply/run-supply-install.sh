#!/usr/bin/env bash
# run-supply-install.sh BUILD_DIR CMAKE — the installed tree of the supply-chain scanner:
# `cmake --install` of this build into a temporary prefix, then the installed `jager` finds
# the installed Julia helper (share/jager/julia/supply_main.jl and the supply.jl it includes,
# not the source tree's: a JAGER_JULIA wrapper logs the script it is given), the installed
# checker module sits beside the installed libjager, and (with Julia) the installed tree
# locks and verifies a generated environment.
set -euo pipefail
build=$1 cmake=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d /tmp/jager-supply-inst.XXXXXX)
trap 'rm -rf "$t"' EXIT
export JAGER_SUPPLY_CACHE=off
unset JAGER_SUPPLY_JL
fails=0
ok()   { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
if ! "$cmake" --install "$build" --prefix "$t/p" > "$t/install.log" 2>&1; then
  echo "FAIL cmake --install"; cat "$t/install.log"; exit 1; fi
ok "cmake --install into $t/p"
for f in bin/jager share/jager/julia/supply_main.jl share/jager/julia/supply.jl; do
  if [ -f "$t/p/$f" ]; then ok "installed $f"; else fail "not installed: $f"; fi; done
lib=$(dirname "$(find "$t/p" -name 'libjager.so' | head -1)")
if [ -n "$lib" ] && [ -f "$lib/libjager-supply.so" ]; then ok "the checker is installed beside libjager ($lib)"
else fail "libjager-supply.so not beside the installed libjager"; fi
if cmp -s "$t/p/share/jager/julia/supply.jl" "$root/bindings/julia/src/supply.jl"; then ok "installed supply.jl is the source's"
else fail "installed supply.jl differs"; fi
# which script does the installed jager give julia?
printf '#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/args"\nexit 1\n' "$t" > "$t/fake-julia"; chmod +x "$t/fake-julia"
mkdir -p "$t/env"; : > "$t/env/Project.toml"
JAGER_JULIA="$t/fake-julia" "$t/p/bin/jager" lock --julia-project "$t/env" -o "$t/x.lock" > "$t/out" 2>&1 || true
if grep -qxF "$t/p/share/jager/julia/supply_main.jl" "$t/args" 2>/dev/null; then ok "installed jager runs the installed supply_main.jl"
else fail "installed jager ran: $(cat "$t/args" 2>/dev/null | tr '\n' ' ')"; cat "$t/out"; fi
JAGER_JULIA="$t/fake-julia" "$build/bin/jager" lock --julia-project "$t/env" -o "$t/x.lock" > "$t/out" 2>&1 || true
if grep -qxF "$root/bindings/julia/src/supply_main.jl" "$t/args"; then ok "build-tree jager runs the source tree's"
else fail "build-tree jager ran: $(tr '\n' ' ' < "$t/args")"; fi
# with Julia: the installed tree locks and verifies a generated environment
if julia=$("$root/scripts/install-julia.sh" --print 2>/dev/null) && [ -x "$julia" ]; then
  "$root/tests/supply/make-env.sh" "$t/e" "$julia" > /dev/null
  export JULIA_DEPOT_PATH="$t/e/depot" JAGER_JULIA="$julia"
  rc=0; "$t/p/bin/jager" lock --julia-project "$t/e/env" -o "$t/e/j.lock" > "$t/out" 2>&1 || rc=$?
  if [ "$rc" = 0 ] && grep -q '"src/helper.jl": "' "$t/e/j.lock"; then ok "installed jager locks a Julia environment"
  else fail "installed lock: exit $rc"; cat "$t/out"; fi
  rc=0; "$t/p/bin/jager" verify "$t/e/j.lock" > "$t/out" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then ok "installed jager verifies it clean (the environment compared by the installed script)"
  else fail "installed verify: exit $rc"; cat "$t/out"; fi
else echo "skip the Julia lock with the installed tree: Julia is not installed (scripts/install-julia.sh)"; fi
echo "$fails failure(s)"
[ "$fails" = 0 ]
