# loop_union.jl — a union in a 1,000-iteration loop of an expensive kernel, called from two sites.
#
# Expected finding (dispatch plugin): exactly one `type_instability` for `smooth`, reached
# from 2 sites, costed by the problem itself: the verdict counts 1001 runs per call of the
# unstable accumulator (the `for k in 1:1000` loop, and the sum after it), the binding
# times one dynamic call at stop (metadata julia.dynamic_call_ns), and the cost is
# 1001 × calls × that price — a small fraction of `smooth`'s own time, which is spent in
# its stable first loop over 2 million elements.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=lu.jgr julia --project=bindings/julia examples/julia/loop_union.jl
using Jager

@noinline function smooth(u::Vector{Float64})
    s = 0.0
    @inbounds for i in eachindex(u)       # the kernel's work: stable, and most of its time
        s += sqrt(abs(u[i])) * 0.5
    end
    acc = 0                               # an Int that becomes a Float64: a union in the loop
    for k in 1:1000
        acc += u[k] * 0.5
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
