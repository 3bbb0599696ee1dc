#!/bin/sh
# The public headers under every compiler and standard a user may pick, warnings as errors:
#   headers-test.sh INCLUDE_DIR LIBDIR PROBE.c
# GCC and Clang × C99/C11/C17 and C++98/11/17/20, -Wall -Wextra -pedantic -Werror; each
# build is linked and run (two JAGER_SPANs in one scope count 4 calls each). Must-fail:
# JAGER_SPAN with a variable name does not compile.
set -u
inc=$1 lib=$2 probe=$3
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
flags="-Wall -Wextra -pedantic -Werror -I$inc"
try() { # try COMPILER STD LANG
  n=$((n + 1))
  if ! "$1" -std="$2" -x "$3" $flags "$probe" -x none -L"$lib" -Wl,-rpath,"$lib" -ljager -o "$tmp/p" 2> "$tmp/err"; then
    echo "FAIL: $1 -std=$2 -pedantic -Werror:"; head -5 "$tmp/err"; fail=1; return
  fi
  "$tmp/p" || { echo "FAIL: $1 -std=$2: the probe's counts"; fail=1; }
}
for cc in gcc clang; do
  command -v $cc > /dev/null || { echo "FAIL: $cc not found"; fail=1; continue; }
  for std in c99 c11 c17; do try $cc $std c; done
done
for cxx in g++ clang++; do
  command -v $cxx > /dev/null || { echo "FAIL: $cxx not found"; fail=1; continue; }
  for std in c++98 c++11 c++17 c++20; do try $cxx $std c++; done
done
printf '#include "jager.h"\nvoid g(const char *name) { JAGER_SPAN(name); }\n' > "$tmp/bad.c"
if gcc -fsyntax-only -I"$inc" "$tmp/bad.c" 2> /dev/null; then echo "FAIL: JAGER_SPAN(variable) compiled"; fail=1; fi
if clang -fsyntax-only -I"$inc" "$tmp/bad.c" 2> /dev/null; then echo "FAIL: JAGER_SPAN(variable) compiled (clang)"; fail=1; fi
printf '#define JAGER_NO_INSTRUMENTATION\n#include "jager.h"\nvoid g(const char *name) { JAGER_SPAN(name); }\n' > "$tmp/bad2.c"
if gcc -fsyntax-only -I"$inc" "$tmp/bad2.c" 2> /dev/null; then echo "FAIL: JAGER_SPAN(variable) compiled without instrumentation"; fail=1; fi
[ $fail -eq 0 ] && echo "$n header builds passed; non-literal names refused"
exit $fail
