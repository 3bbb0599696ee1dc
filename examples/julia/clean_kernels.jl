# clean_kernels.jl — type-stable kernels: none of them may be flagged.
#
# Expected findings (dispatch plugin): no `dispatch.instability` event at all. These are
# the false-positive guards of the stability rule: `axpy!` (only intrinsics once inlined),
# loops over ranges, `eachindex`, `enumerate` and a Dict — whose iteration protocol's
# `Union{Nothing, Tuple}` must not count as a non-concrete value. Each site sees exactly
# one signature per argument type used.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=clean.jgr julia --project=bindings/julia examples/julia/clean_kernels.jl
using Jager

function axpy!(a::Float64, x::Vector{Float64}, y::Vector{Float64})
    @inbounds for i in eachindex(x, y)
        y[i] += a * x[i]
    end
    return y
end

function triangle_sum(n::Int)
    s = 0
    for i in 1:n, j in 1:i
        s += i * j
    end
    return s
end

function weighted_index_sum(xs::Vector{Float64})
    s = 0.0
    for (i, x) in enumerate(xs)
        s += i * x
    end
    return s
end

function dict_dot(d::Dict{Int,Float64})
    s = 0.0
    for (k, v) in d
        s += k * v
    end
    return s
end

function main()
    Jager.start()
    x = rand(10_000); y = zeros(10_000)
    d = Dict(i => rand() for i in 1:1000)
    for _ in 1:100
        @jäger axpy!(2.0, x, y)
        @jäger triangle_sum(100)
        @jäger weighted_index_sum(x)
        @jäger dict_dot(d)
    end
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
