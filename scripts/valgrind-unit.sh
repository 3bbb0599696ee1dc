#!/usr/bin/env bash
# valgrind-unit.sh BUILD_DIR — run every test labelled `unit` of BUILD_DIR under valgrind
# memcheck: any memory error or definite leak fails. Prints "N passed, N failed".
set -uo pipefail
dir=$1
pass=0; fail=0; failed=()
# ctest lists the commands; each unit test is a plain executable with its environment.
mapfile -t tests < <(ctest --test-dir "$dir" -L unit --show-only=json-v1 | python3 -c '
import json,sys
d=json.load(sys.stdin)
for t in d["tests"]:
    env=[p["value"] for p in t.get("properties",[]) if p["name"]=="ENVIRONMENT"]
    env=env[0] if env else []
    print(t["name"]+"\t"+" ".join(env)+"\t"+"\x1f".join(t["command"]))
')
for line in "${tests[@]}"; do
  IFS=$'\t' read -r name env cmd <<<"$line"
  IFS=$'\x1f' read -r -a argv <<<"$cmd"
  log="$dir/valgrind-$name.log"
  if env $env JAGER_UNDER_VALGRIND=1 valgrind --quiet --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite --track-origins=no --gen-suppressions=no "${argv[@]}" >"$log" 2>&1; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); failed+=("$name"); tail -40 "$log"
  fi
done
[ ${#failed[@]} -gt 0 ] && echo "valgrind failures: ${failed[*]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
