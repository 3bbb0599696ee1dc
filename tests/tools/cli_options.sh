#!/bin/sh
# Every `jager` command parses its options with the one table-driven parser (tools/cli/args.c):
# for each command, `--help` prints its usage (exit 0), an option it takes is accepted as
# `--opt=value` and as `--opt value`, and `--` ends the options (a name starting with '-' after
# it is a positional: the command gets as far as opening it, and says so, instead of refusing
# an unknown option).
#   cli_options.sh JAGER_CLI
jager=${1:?usage: cli_options.sh JAGER_CLI}
case $jager in /*) ;; *) jager=$(pwd)/$jager ;; esac
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
name=-jgtest-missing
bad() { echo "FAIL: $*"; sed 's/^/  | /' out; fail=1; }

# check CMD... : the command ran past the parser and named $name (a positional after --)
check() {
    "$@" > out 2>&1 < /dev/null
    rc=$?
    if grep -q -e "unknown option" -e "needs a value" -e "^usage:" out; then bad "$* (parser refused, rc $rc)"; return; fi
    grep -q -e "$name" out || bad "$* (rc $rc: '$name' not taken as a positional)"
}

# command | option | value | positionals after -- (two for compare)
cat > table <<TABLE
summary|--depth|3|$name.jgr
dump|--limit|5|$name.jgr
hunt|--min-pct|1|$name.jgr
report|--title|t|$name.jgr
export|--format|chrome|$name.jgr
info|||$name.jgr
merge|--output|m.jgr|$name.jgr
compare|--threshold|0.05|$name-a.json $name-b.json
plugin-check|--timeout-ms|500|$name.so
verify|--threads|2|$name.lock
lock|--output|l.json|$name
bench run|--output|b.json|$name
bench store|||$name-r.json $name-b.json
plugins|--path|/nonexistent|$name
TABLE
# every command `jager --help` lists is in the table
"$jager" --help | sed -n 's/^  \([a-z-]*\) .*/\1/p' > listed
[ -s listed ] || { echo "FAIL: jager --help lists no commands"; fail=1; }
while read -r c; do grep -q "^$c[ |]" table || { echo "FAIL: command '$c' is not checked here"; fail=1; }; done < listed

while IFS='|' read -r cmd opt val pos; do
    [ -n "$cmd" ] || continue
    # shellcheck disable=SC2086 # cmd ("bench run") and pos are word lists
    "$jager" $cmd --help > out 2>&1 < /dev/null && grep -q "usage" out || bad "$cmd --help (rc $?)"
    if [ -z "$opt" ]; then
        # shellcheck disable=SC2086
        check "$jager" $cmd -- $pos
    else
        # shellcheck disable=SC2086
        check "$jager" $cmd "$opt=$val" -- $pos
        # shellcheck disable=SC2086
        check "$jager" $cmd "$opt" "$val" -- $pos
    fi
done < table
[ $fail = 0 ] && echo "cli options: every command as expected"
exit $fail
