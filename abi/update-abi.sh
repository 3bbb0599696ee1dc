#!/bin/sh
# Regenerate abi/libjager.abi from a built libjager.so (built with debug info, the default
# RelWithDebInfo). Only after a reviewed, intended ABI change: the dump is the reference
# abi/check-abi.sh (ctest abi_check) holds every later build to.
#
#   abi/update-abi.sh path/to/libjager.so
set -eu
lib=${1:?usage: update-abi.sh path/to/libjager.so}
here=$(cd "$(dirname "$0")" && pwd)
# Types from the public headers only; no build paths, so the dump is the same on any machine.
abidw --no-corpus-path --no-comp-dir-path --drop-private-types --headers-dir "$here/../sdk/include" \
  --out-file "$here/libjager.abi" "$lib"
echo "wrote $here/libjager.abi ($(grep -c '<elf-symbol ' "$here/libjager.abi") symbols)"
