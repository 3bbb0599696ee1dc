# gc_loop.jl — a benchmark harness that calls GC.gc() between timings, inside its region.
#
# Expected findings (gc plugin): `requested_collections` at `bench` (explicit GC.gc()
# pauses, most of its time) — not `gc_pressure` and not `allocation_hotspot`: the kernel
# allocates almost nothing; the collections are the ones the program asked for.
#
#   JAGER_PLUGINS=gc JAGER_OUTPUT=gcl.jgr julia --project=bindings/julia examples/julia/gc_loop.jl
using Jager

function kernel(x::Vector{Float64})
    s = 0.0
    @inbounds for i in eachindex(x)
        s += sqrt(x[i])
    end
    return s
end

function bench(x, reps)
    t = 0.0
    for _ in 1:reps
        GC.gc()                      # the harness: a clean heap before each timing
        t += @elapsed kernel(x)
    end
    return t
end

function main()
    keep = [rand(100) for _ in 1:20_000]  # a live heap, so each full collection takes time
    x = rand(10_000)
    @jäger bench(x, 20)
    return length(keep)
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
