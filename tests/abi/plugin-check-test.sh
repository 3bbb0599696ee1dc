#!/bin/sh
# `jager plugin-check`: clean on a good plugin, every broken rule named on bad ones.
#   plugin-check-test.sh JAGER_CLI TEST_PLUGIN_DIR
set -u
jager=${1:?usage: plugin-check-test.sh JAGER_CLI TEST_PLUGIN_DIR}
dir=${2:?}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect FILE TEXT: fixed-string match
  grep -qF -- "$2" "$1" || { echo "FAIL: $1 lacks: $2"; cat "$1"; fail=1; }
}
expect_rc() { # expect_rc WANT GOT WHAT
  [ "$1" = "$2" ] || { echo "FAIL: $3 exited $2, expected $1"; fail=1; }
}
"$jager" plugin-check "$dir/libjager-good.so" > "$tmp/good" 2>&1; expect_rc 0 $? good
expect "$tmp/good" "ok: 0 rules broken"
expect "$tmp/good" "ok    nothing emitted after stop"

"$jager" plugin-check "$dir/libjager-bademit.so" > "$tmp/bad" 2>&1; expect_rc 2 $? bademit
expect "$tmp/bad" "FAIL  every emit matches its registered type: 2 refused"
expect "$tmp/bad" "bademit.tick has 2 fields, got 1"
expect "$tmp/bad" "FAIL  event types named <plugin>.<snake_case>, fields snake_case and unique"
expect "$tmp/bad" "register_type \"bademit.Bad Name\": a type is named <plugin>.<event>"
expect "$tmp/bad" "FAIL: 2 rules broken"

"$jager" plugin-check "$dir/libjager-orphan.so" > "$tmp/orphan" 2>&1; expect_rc 2 $? orphan
expect "$tmp/orphan" "FAIL  nothing emitted after stop"
expect "$tmp/orphan" "FAIL  no thread outlives shutdown: 1 thread still running after shutdown"
expect "$tmp/orphan" "orphan.tick emitted after the plugins' stop returned"
expect "$tmp/orphan" "ok    does not crash"
expect "$tmp/orphan" "FAIL: 2 rules broken"

"$jager" plugin-check "$dir/libjager-late.so" > "$tmp/late" 2>&1; expect_rc 2 $? late
expect "$tmp/late" "FAIL  nothing emitted after stop"
expect "$tmp/late" "ok    no thread outlives shutdown"
expect "$tmp/late" "FAIL: 1 rule broken"

"$jager" plugin-check --timeout-ms 1500 "$dir/libjager-hang.so" > "$tmp/hang" 2>&1; expect_rc 2 $? hang
expect "$tmp/hang" "FAIL  no callback hangs: the scratch process did not finish within 1500 ms"
expect "$tmp/hang" "skip  the other rules: not reached (the scratch process was killed during recording 1)"
expect "$tmp/hang" "FAIL: 1 rule broken"

"$jager" plugin-check "$dir/libjager-major.so" > "$tmp/major" 2>&1; expect_rc 2 $? major
expect "$tmp/major" "FAIL  loads, initialises and starts in both recordings"
expect "$tmp/major" "built for plugin ABI 2.3"
expect "$tmp/major" "FAIL: 1 rule broken"

"$jager" plugin-check "$dir/libjager-unsupported.so" > "$tmp/aside" 2>&1; expect_rc 3 $? unsupported
expect "$tmp/aside" "skip  loads, initialises and starts: it stepped aside"
expect "$tmp/aside" "not a Julia process"

"$jager" plugin-check "$tmp/not-a-plugin.so" > "$tmp/usage" 2>&1; expect_rc 1 $? "bad file name"
[ $fail = 0 ] && echo "plugin-check: all cases as expected"
exit $fail
