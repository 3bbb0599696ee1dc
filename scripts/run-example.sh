#!/usr/bin/env bash
# run-example.sh — the main job on a bundled example: install what is needed, build, run the
# multi-threaded stencil under Jäger, then summarise, hunt and report on its recording.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${JAGER_BUILD_DIR:-$root/build}
out=${JAGER_EXAMPLE_OUT:-$root/out}
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target stencil jager_cli >/dev/null
mkdir -p "$out"
JAGER_OUTPUT="$out/stencil.jgr" "$build/bin/stencil" 768 120 2
"$build/bin/jager" summary "$out/stencil.jgr"
"$build/bin/jager" hunt "$out/stencil.jgr" || true
"$build/bin/jager" report "$out/stencil.jgr" -o "$out/stencil.html" && echo "report: $out/stencil.html"
