#!/bin/sh
# run_launch_mpi.sh LIBJAGER LIBJAGER_MPI JAGER MPIEXEC PROG — mpiexec -n 4 in front of an
# MPI program, LD_PRELOAD and JAGER_OUTPUT=DIR/job.jgr set outside mpiexec (so mpiexec and
# hydra_pmi_proxy have them too): the ranks record, each its own part DIR/job.jgr.<rank>
# (rank from PMI_RANK before MPI_Init), the launchers nothing. With the mpi plugin the parts
# are gathered into DIR/job.jgr at MPI_Finalize (the plugin's aggregation).
set -u
lib=$(readlink -f "${1:?usage: run_launch_mpi.sh LIBJAGER LIBJAGER_MPI JAGER MPIEXEC PROG}")
libmpi=$(readlink -f "${2:?}")
jager=$(readlink -f "${3:?}")
mpiexec=${4:?}
prog=$(readlink -f "${5:?}")
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
info() { "$jager" info "$1" 2>/dev/null | sed -n "s/^$2: //p; s/^  \"$2\": \"\\(.*\\)\"\$/\\1/p" | head -1; }
calls() { "$jager" summary "$1" 2>/dev/null | awk -v s="$2" '$1 == s { print $2; exit }'; }

for variant in core plugin; do
  d="$top/$variant"
  mkdir -p "$d"
  if [ $variant = core ]; then pre=$lib plugins=; else pre="$lib:$libmpi" plugins=mpi; fi
  (cd "$d" && LD_PRELOAD="$pre" JAGER_PLUGINS="$plugins" JAGER_OUTPUT="$d/job.jgr" timeout 120 "$mpiexec" -n 4 "$prog" 2>"$top/stderr.$variant")
  rc=$?
  [ $rc -eq 0 ] || fail "$variant: mpiexec exit $rc: $(cat "$top/stderr.$variant")"
  files=$(cd "$d" && ls -A | tr '\n' ' ')
  if [ $variant = plugin ]; then
    # With the mpi plugin the ranks' parts are gathered into the one job file at
    # MPI_Finalize (JAGER_MPI_AGGREGATE, on by default): each rank's part in it, exact.
    if [ "$files" != "job.jgr " ]; then
      fail "$variant: files '$files' (want the one aggregated job.jgr)"
      continue
    fi
    s=$("$jager" summary "$d/job.jgr" 2>/dev/null)
    for r in 0 1 2 3; do
      want=$((100 * (r + 1)))
      c=$(printf '%s\n' "$s" | awk -v r="$r" '/^== rank / { cur = $3; sub(":", "", cur) } $1 == "launch.mpi.work" && cur == r { print $2; exit }')
      [ "$c" = $want ] || { fail "$variant rank $r in job.jgr: launch.mpi.work calls '$c' (want $want)"; continue 2; }
    done
    echo "ok   $variant: one aggregated job.jgr, each rank's part exact"
    continue
  fi
  if [ "$files" != "job.jgr.0 job.jgr.1 job.jgr.2 job.jgr.3 " ]; then
    fail "$variant: files '$files' (want job.jgr.0 … job.jgr.3 and nothing else)"
    continue
  fi
  good=0
  for r in 0 1 2 3; do
    f="$d/job.jgr.$r"
    want=$((100 * (r + 1)))
    st=$(info "$f" status) c=$(calls "$f" launch.mpi.work) x=$(info "$f" process.executable)
    mr=$(info "$f" mpi.rank)
    if [ "$st" != complete ] || [ "$c" != $want ] || [ "$x" != "$prog" ]; then
      fail "$variant rank $r: status '$st', launch.mpi.work calls '$c' (want $want), by '$x'"
    elif [ $variant = plugin ] && [ "$mr" != $r ]; then
      fail "$variant rank $r: mpi.rank '$mr'"
    else
      good=$((good + 1))
    fi
  done
  if grep -q jager "$top/stderr.$variant"; then fail "$variant: stderr says $(cat "$top/stderr.$variant")"; fi
  [ $good = 4 ] && echo "ok   $variant: 4 ranks, job.jgr.<rank> each complete with 100 × (rank + 1) spans, no launcher file"
  # the job's files as a set and as a folder (issue 17 item 3): one section per rank, in order
  for input in set folder; do
    if [ $input = set ]; then s=$("$jager" summary "$d"/job.jgr.* 2>&1); else s=$("$jager" summary "$d" 2>&1); fi
    got=$(printf '%s\n' "$s" | awk '/^== rank / { cur = $3; sub(":", "", cur) } $1 == "launch.mpi.work" { printf "%s=%s ", cur, $2 }')
    if [ "$got" = "0=100 1=200 2=300 3=400 " ]; then echo "ok   $variant: jager summary of the $input: the 4 ranks in order, exact"
    else fail "$variant: jager summary of the $input: '$got'"; fi
  done
done
if [ $fails -ne 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all checks passed"
