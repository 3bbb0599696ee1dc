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

if [ -f "$root/tests/peers/package.json" ]; then
  if [ ! -d "$root/tests/peers/node_modules" ] || [ "$root/tests/peers/package.json" -nt "$root/tests/peers/node_modules/.installed" ]; then
    echo "install-deps: npm install (tests/peers)"
    (cd "$root/tests/peers" && npm install --no-audit --no-fund --loglevel=error >/dev/null && touch node_modules/.installed)
  fi
fi

if [ -x "$root/scripts/install-julia.sh" ]; then
  "$root/scripts/install-julia.sh" >/dev/null
fi
