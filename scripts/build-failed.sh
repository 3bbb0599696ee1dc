#!/usr/bin/env bash
# build-failed.sh LOG — what a failed build said, in full: every line of LOG but the
# progress lines ("[ 42%] Building C object …", "Built target …"), so each warning and
# error appears with its context; then the log's path. Exit status 1.
log=${1:?usage: build-failed.sh BUILD_LOG}
grep -Ev '^\[ *[0-9]+%\] (Building|Linking|Built target|Generating|Copying)|^(Consolidate compiler generated dependencies|Scanning dependencies) ' "$log"
echo "build FAILED (full log: $log)"
exit 1
