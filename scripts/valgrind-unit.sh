#!/usr/bin/env bash
# valgrind-unit.sh BUILD_DIR — run every test labelled `unit` of BUILD_DIR under valgrind
# memcheck: any memory error or definite leak fails. Prints "N passed, N failed".
#
# ctest lists each test's command, environment and working folder (json-v1); a command is
# run as ctest would run it, with valgrind in front. Tests whose command is not an ELF
# program (a shell or node script driving other programs) are listed as skipped: valgrind
# would only check the interpreter, not the code under test.
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
    if not cmd or not os.path.isfile(cmd[0]):
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
    print("not under valgrind (not an ELF program): " + " ".join(skipped))
if failed:
    print("valgrind failures: " + " ".join(failed))
print("%d passed, %d failed" % (passed, len(failed)))
sys.exit(1 if failed else 0)
' "$dir"
