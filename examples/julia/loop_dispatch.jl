# loop_dispatch.jl — dynamic calls in a 1,000-iteration loop of an expensive kernel, called
# from two sites.
#
# Expected finding (dispatch plugin): exactly one `type_instability` for `smooth`, reached
# from 2 sites, costed by the problem itself: `HALF` is a non-constant global, so
# `u[k] * HALF` and the `+` into the accumulator are dynamic calls; the verdict counts 2001
# runs per call (two per iteration of the `for k in 1:1000` loop, and the sum after it),
# the binding times one dynamic call at stop (metadata julia.dynamic_call_ns), and the
# cost is 2001 × calls × that price — a small fraction of `smooth`'s own time, which is
# spent in its stable first loop over 2 million elements. (A union accumulator here,
# `acc = 0` then Float64s, would be split by the compiler into typed branches: no dynamic
# call, a note with no cost.)
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=ld.jgr julia --project=bindings/julia examples/julia/loop_dispatch.jl
using Jager

HALF = 0.5

@noinline function smooth(u::Vector{Float64})
    s = 0.0
    @inbounds for i in eachindex(u)       # the kernel's work: stable, and most of its time
        s += sqrt(abs(u[i])) * 0.5
    end
    acc = 0.0
    for k in 1:1000
        acc += u[k] * HALF                # a non-constant global: two dynamic calls per iteration
    end
    return s + acc
end

function phase_a(u)
    s = 0.0
    for _ in 1:2
        s += @jäger smooth(u)
    end
    return s
end

phase_b(u) = @jäger smooth(u)

function main()
    u = rand(2_000_000)
    s = 0.0
    for _ in 1:10
        s += phase_a(u) + phase_b(u)
    end
    return s
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
