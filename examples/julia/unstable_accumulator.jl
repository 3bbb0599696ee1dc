# unstable_accumulator.jl — a type-unstable accumulator.
#
# Expected finding (dispatch plugin): `dispatch.instability` for
# `unstable_sum(::Vector{Float64})`, flags 2|8 (bad union + non-concrete return): `s`
# starts as the Int 0 and becomes a Float64 in the loop, so the accumulator is a
# `Union{Float64, Int64}` and so is the return type. The fix: `s = zero(eltype(xs))`;
# `stable_sum` is that fix and must NOT be flagged.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=acc.jgr julia --project=bindings/julia examples/julia/unstable_accumulator.jl
using Jager

function unstable_sum(xs)
    s = 0
    for x in xs
        s += x
    end
    return s
end

function stable_sum(xs)
    s = zero(eltype(xs))
    for x in xs
        s += x
    end
    return s
end

function main()
    Jager.start()
    xs = rand(10_000)
    for _ in 1:100
        @jäger unstable_sum(xs)
        @jäger stable_sum(xs)
    end
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
