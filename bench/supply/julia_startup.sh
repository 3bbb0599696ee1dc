#!/usr/bin/env bash
# bench/supply/julia_startup.sh LIBJAGER JAGER — the start-up cost of JAGER_LOCK for a Julia
# program: an environment of the standard libraries a numerical program uses (LinearAlgebra,
# SparseArrays, Statistics, Random, Printf, Dates, Serialization, DelimitedFiles, Distributed,
# Sockets, SHA, … — real code, their files hashed), locked, then
#   julia -e 'using Jager; Jager.start(); Jager.stop()'
# run without JAGER_LOCK, with it (not strict: the check on its own task, waited for at stop),
# and strict (checked before recording). Best and median of 5 wall times each, and each as a ratio
# to the run without a lock, side by side (noisy on a loaded machine); Supply.verify timed
# inside one session (first call compiles it) beside the C `jager verify` of the same lock.
# Asserts nothing.
set -euo pipefail
lib=${1:?usage: julia_startup.sh LIBJAGER JAGER} jager=${2:?usage: julia_startup.sh LIBJAGER JAGER}
root=$(cd "$(dirname "$0")/../.." && pwd)
julia=$("$root/scripts/install-julia.sh" --print)
t=$(mktemp -d /tmp/jager-bench-jl.XXXXXX)
trap 'rm -rf "$t"' EXIT
export JAGER_SUPPLY_CACHE="$t/cache/supply-cache.json" # the lock step's cache: this run's own
# The environment: every stdlib these pull in, written as Pkg would (stdlib entries carry no version).
"$julia" --startup-file=no -e '
  import Pkg
  want = ["LinearAlgebra", "SparseArrays", "Statistics", "Random", "Printf", "Dates", "Serialization",
          "DelimitedFiles", "Distributed", "Sockets", "SHA", "Markdown", "Test", "InteractiveUtils"]
  uu = Dict{String,String}(); deps = Dict{String,Vector{String}}()
  todo = copy(want)
  while !isempty(todo)
      n = pop!(todo); haskey(uu, n) && continue
      p = Pkg.TOML.parsefile(joinpath(Sys.STDLIB, n, "Project.toml"))
      uu[n] = p["uuid"]; deps[n] = collect(keys(get(p, "deps", Dict())))
      append!(todo, deps[n])
  end
  open(ARGS[1] * "/Project.toml", "w") do io
      println(io, "[deps]"); for n in sort(want); println(io, n, " = \"", uu[n], "\""); end
  end
  open(ARGS[1] * "/Manifest.toml", "w") do io
      for n in sort(collect(keys(uu)))
          println(io, "[[", n, "]]"); isempty(deps[n]) || println(io, "deps = ", repr(sort(deps[n])))
          println(io, "uuid = \"", uu[n], "\"\n")
      end
  end' "$t"
JAGER_JULIA="$julia" "$jager" lock --julia-project "$t" -o "$t/jager.lock"
export JAGER_LIB="$lib" JAGER_QUIET=1
prog="push!(LOAD_PATH, \"$root/bindings/julia\"); using Jager; Jager.start(output=\"$t/run.jgr\"); Jager.stop()"
# runs() ENV…: 5 wall times (ms) of the program under ENV, one per line
runs() { for i in 1 2 3 4 5; do local s e; s=$(date +%s%N); env "$@" "$julia" --startup-file=no --project="$t" -e "$prog" > /dev/null 2>&1 || true
  e=$(date +%s%N); echo $(( (e - s) / 1000000 )); done; }
best_of() { sort -n | head -1; }
median_of() { sort -n | sed -n 3p; }
runs X=1 > "$t/base"; runs JAGER_LOCK="$t/jager.lock" > "$t/nons"; runs JAGER_LOCK="$t/jager.lock" JAGER_STRICT=1 > "$t/strict"
nfiles=$(grep -c '": "[0-9a-f]\{64\}"' "$t/jager.lock" || true)
inproc=$("$julia" --startup-file=no --project="$t" -e "push!(LOAD_PATH, \"$root/bindings/julia\"); using Jager
  a = @elapsed Jager.Supply.verify(\"$t/jager.lock\"); b = @elapsed Jager.Supply.verify(\"$t/jager.lock\")
  print(round(Int, 1000a), \" \", round(Int, 1000b))")
cverify=$(for i in 1 2 3; do s=$(date +%s%N); "$jager" verify --no-environment "$t/jager.lock" > /dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); done | best_of)
b0=$(best_of < "$t/base") m0=$(median_of < "$t/base")
ratio() { awk "BEGIN{printf \"%.2f\", $1/$2}"; }
echo "environment: $(grep -c '"uuid"' "$t/jager.lock") stdlib packages, $nfiles files"
echo "julia + using Jager + start/stop (5 runs each)   best ms  median ms  best/no-lock  median/no-lock"
row() { local b m; b=$(best_of < "$2") m=$(median_of < "$2"); printf '  %-46s %7d  %9d  %12s  %14s\n' "$1" "$b" "$m" "$(ratio "$b" "$b0")" "$(ratio "$m" "$m0")"; }
row "no lock" "$t/base"
row "JAGER_LOCK (not strict, waited at stop)" "$t/nons"
row "JAGER_LOCK + JAGER_STRICT=1" "$t/strict"
echo "the check alone, same lock:"
echo "  Jager.Supply.verify in one session: first call ${inproc% *} ms (compiles it), second ${inproc#* } ms"
echo "  jager verify --no-environment (C, files and tree hashes only): ${cverify} ms"
