#!/bin/sh
# docs/example-plugin, built out of tree against the *installed* SDK, then loaded.
#
#   example-plugin-test.sh BUILD_DIR SOURCE_DIR WORK_DIR
#
# 1. `cmake --install` the built SDK into WORK_DIR/prefix;
# 2. build the example with CMake and find_package(jager) (CMAKE_PREFIX_PATH=prefix);
# 3. build it again with only `pkg-config --cflags jager` and the compiler;
# 4. build tests/abi/example_host.c with `pkg-config --cflags --libs jager`, and run it with
#    each plugin build via JAGER_PLUGINS=example JAGER_PLUGIN_PATH=...: it checks the
#    plugin's example.site_calls events in the recording (exact per-site counts, the
#    min_calls option applied).
set -eu
build=${1:?usage: example-plugin-test.sh BUILD_DIR SOURCE_DIR WORK_DIR}
src=${2:?}
work=${3:?}
cc=${CC:-cc}
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

step() { echo "== $*"; }

step "install the SDK into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
pc=$(find "$prefix" -name jager.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: the install has no jager.pc"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
# The install may be relocated (--prefix differs from CMAKE_INSTALL_PREFIX): derive the
# prefix from the .pc file's location.
PKG="pkg-config --define-prefix"
incdir=$($PKG --variable=includedir jager)
[ -f "$incdir/jager_plugin.h" ] || { echo "FAIL: pkg-config includedir '$incdir' has no jager_plugin.h (jager.pc not relocatable?)"; exit 1; }

step "find_package(jager) build"
cmake -S "$src/docs/example-plugin" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-Werror > "$work/cmake-configure.log"
cmake --build "$work/cmake-build" > "$work/cmake-build.log"
[ -f "$work/cmake-build/libjager-example.so" ] || { echo "FAIL: no libjager-example.so from the CMake build"; exit 1; }

step "pkg-config build"
mkdir -p "$work/pc-build"
# shellcheck disable=SC2046
$cc -std=gnu11 -Wall -Wextra -Werror -O2 -fPIC -shared -fvisibility=hidden $($PKG --cflags jager) \
  -Wl,--version-script="$src/docs/example-plugin/example.version" -Wl,-z,defs \
  -o "$work/pc-build/libjager-example.so" "$src/docs/example-plugin/example.c" -pthread
exports=$(nm -D --defined-only "$work/pc-build/libjager-example.so" | awk '$2 != "A" {print $3}')
[ "$exports" = "jager_plugin_entry" ] || { echo "FAIL: the plugin exports more than its entry: $exports"; exit 1; }

step "host program against the installed SDK"
libdir=$($PKG --variable=libdir jager)
# shellcheck disable=SC2046
$cc -std=gnu11 -Wall -Wextra -Werror -O2 $($PKG --cflags jager) -o "$work/example_host" \
  "$src/tests/abi/example_host.c" $($PKG --libs jager) -Wl,-rpath,"$libdir" -pthread

for dir in "$work/cmake-build" "$work/pc-build"; do
  step "load $dir/libjager-example.so"
  JAGER_PLUGINS=example JAGER_PLUGIN_PATH="$dir" JAGER_EXAMPLE_MIN_CALLS=2 JAGER_QUIET=1 \
    "$work/example_host" "$work/run.jgr"
done
step "ok"
