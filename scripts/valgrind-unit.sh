#!/usr/bin/env bash
# valgrind-unit.sh BUILD_DIR — run every test labelled `unit` of BUILD_DIR under valgrind
# memcheck: any memory error or definite leak fails. Prints "N passed, N failed".
#
# ctest lists each test's command, environment and working folder (json-v1); a command is
# run as ctest would run it, with valgrind in front. Only the project's own programs (ELF
# files in the build folder) are checked; a test run by an interpreter (sh, node, cmake)
# would only check the interpreter, and a WILL_FAIL test expects a failure: both are listed
# as skipped.
set -uo pipefail
dir=$1
ctest --test-dir "$dir" -L unit --show-only=json-v1 | python3 -c '
import json, os, subprocess, sys

build = sys.argv[1]
tests = json.load(sys.stdin)["tests"]
passed, failed, skipped = 0, [], []
for t in tests:
    cmd = t.get("command") or []
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    own = cmd and os.path.isfile(cmd[0]) and os.path.realpath(cmd[0]).startswith(os.path.realpath(build) + os.sep)
    if not own or props.get("WILL_FAIL"):
        skipped.append(t["name"]); continue
    with open(cmd[0], "rb") as f:
        if f.read(4) != b"\x7fELF":
            skipped.append(t["name"]); continue
    env = dict(os.environ, JAGER_UNDER_VALGRIND="1")
    for kv in props.get("ENVIRONMENT", []):
        k, _, v = kv.partition("=")
        env[k] = v
    log = os.path.join(build, "valgrind-%s.log" % t["name"])
    vg = ["valgrind", "--quiet", "--error-exitcode=97", "--leak-check=full", "--errors-for-leak-kinds=definite",
          "--show-leak-kinds=definite", "--track-origins=no", "--gen-suppressions=no"]
    with open(log, "wb") as out:
        rc = subprocess.call(vg + cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             cwd=props.get("WORKING_DIRECTORY") or None)
    if rc == 0:
        passed += 1
    else:
        failed.append(t["name"])
        with open(log, "rb") as f:
            sys.stdout.write(b"".join(f.readlines()[-40:]).decode("utf-8", "replace"))
if skipped:
    print("not under valgrind (not the project\x27s own program, or WILL_FAIL): " + " ".join(skipped))
if failed:
    print("valgrind failures: " + " ".join(failed))
print("%d passed, %d failed" % (passed, len(failed)))
sys.exit(1 if failed else 0)
' "$dir"
