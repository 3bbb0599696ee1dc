# supply_main.jl — what `jager lock --julia-project` and `jager verify` run:
#   julia supply_main.jl lock|environment PROJECT OUTPUT
# writes the environment at PROJECT as a lock-format JSON file (environment: without the
# per-file hashes, which the jager command recomputes itself).
include(joinpath(@__DIR__, "supply.jl"))
mode, project, output = ARGS[1], ARGS[2], ARGS[3]
mode in ("lock", "environment") || error("supply_main.jl: unknown mode $mode")
Supply.lock(project; output=output, files=(mode == "lock"))
