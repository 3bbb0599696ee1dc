#!/usr/bin/env bash
# Installs what the build and the tests need: Debian packages listed in scripts/deps/apt-*.txt,
# the npm peers of tests/peers, and Julia (scripts/install-julia.sh). Idempotent and quiet:
# a second run installs nothing and takes a second or two.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

want=$(cat "$root"/scripts/deps/apt-*.txt | sed 's/#.*//' | tr -s ' \n' '\n' | sed '/^$/d' | sort -u)
missing=()
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node.js 20 and npm come with the machine image (Debian's npm package conflicts with it);
# fall back to Debian's nodejs when there is none.
if ! command -v node >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi

# Every test folder with a package.json has its own npm peers (tests/peers, tests/compare, …).
for pkg in "$root"/tests/*/package.json; do
  d=$(dirname "$pkg")
  if [ ! -d "$d/node_modules" ] || [ "$pkg" -nt "$d/node_modules/.installed" ]; then
    echo "install-deps: npm install (${d#$root/})"
    (cd "$d" && npm install --no-audit --no-fund --loglevel=error >/dev/null && touch node_modules/.installed)
  fi
done

if [ -x "$root/scripts/install-julia.sh" ]; then
  "$root/scripts/install-julia.sh" >/dev/null
fi
