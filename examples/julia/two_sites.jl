# two_sites.jl — one unstable method called from two instrumented sites: one problem.
#
# Expected finding (dispatch plugin): exactly one `type_instability`, reached from 2 sites,
# whose cost is the sum of both sites' time (`smooth_a` and `smooth_b` each call
# `relax`, which multiplies by the non-constant global `W` at line 16: a dynamic call per
# element. A union accumulator, `acc = 0` then Float64s, would be split by the compiler —
# no dynamic call, only a note).
# `clean_relax` next to it is the fix and is not flagged.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=two.jgr julia --project=bindings/julia examples/julia/two_sites.jl
using Jager
W = 0.5
@noinline function relax(u::Vector{Float64})
    acc = 0.0
    for i in eachindex(u)
        acc += u[i] * W
    end
    return acc
end

@noinline function clean_relax(u::Vector{Float64})
    acc = 0.0
    for i in eachindex(u)
        acc += u[i] * 0.5
    end
    return acc
end

SCALE = 0.5 # a non-constant global, read once per call of scale!

@noinline function scale!(u::Vector{Float64})
    a = convert(Float64, SCALE)::Float64
    @inbounds for i in eachindex(u)
        u[i] *= a
    end
    return u
end

function smooth_a(u) # two phases calling the same kernel
    s = 0.0
    for _ in 1:3
        s += @jäger relax(u)
    end
    return s
end

function smooth_b(u)
    s = 0.0
    for _ in 1:2
        s += @jäger relax(u)
    end
    return s + @jäger clean_relax(u)
end

function main()
    u = rand(200_000)
    s = 0.0
    for _ in 1:20
        s += smooth_a(u) + smooth_b(u)
        @jäger scale!(u)
        u .*= 2.0
    end
    return s
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
