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

step "cmake --install of the plugin follows --prefix"
cmake --install "$work/cmake-build" --prefix "$work/plugin-prefix" > "$work/plugin-install.log"
[ -f "$work/plugin-prefix/lib/jager/plugins/libjager-example.so" ] || [ -f "$(find "$work/plugin-prefix" -name libjager-example.so | head -n 1)" ] || \
  { cat "$work/plugin-install.log"; echo "FAIL: the plugin was not installed under --prefix"; exit 1; }
case "$(find "$work/plugin-prefix" -name libjager-example.so | head -n 1)" in
  */jager/plugins/libjager-example.so) ;;
  *) echo "FAIL: the plugin was not installed into <prefix>/<libdir>/jager/plugins"; exit 1 ;;
esac

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

# Issue 10, defect 5: the installed library names no build folder and never searches the
# build tree's plugin folder, even for a plugin that is found nowhere else.
step "installed libjager names no build folder"
lib=$(find "$prefix" -name 'libjager.so.*' -type f | head -n 1)
[ -n "$lib" ] || { echo "FAIL: no installed libjager.so"; exit 1; }
objcopy -O binary --only-section=.rodata "$lib" "$work/rodata.bin"
if grep -qaF "$build" "$work/rodata.bin"; then echo "FAIL: the installed libjager's .rodata names the build folder $build"; exit 1; fi
[ ! -e "$(dirname "$lib")/jager-build-tree-plugins" ] || { echo "FAIL: the build-tree marker was installed"; exit 1; }
step "installed libjager never searches the build tree"
JAGER_PLUGINS=nosuchplugin "$work/example_host" "$work/run-nosuch.jgr" > "$work/nosuch.out" 2>&1 || true
grep -qF "libjager-nosuchplugin.so not found" "$work/nosuch.out" || { cat "$work/nosuch.out"; echo "FAIL: no not-found message"; exit 1; }
grep -qF "$(dirname "$lib")/jager/plugins" "$work/nosuch.out" || { cat "$work/nosuch.out"; echo "FAIL: the installed plugin folder (beside the library) was not searched"; exit 1; }
if grep -qF "$build/plugins" "$work/nosuch.out"; then cat "$work/nosuch.out"; echo "FAIL: the installed libjager searched the build tree"; exit 1; fi
step "ok"
