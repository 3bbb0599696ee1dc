# abstract_field_loop.jl — a loop that dispatches on an abstract field.
#
# Expected finding (dispatch plugin): `dispatch.instability` for
# `moments!(::Vector{Float64}, ::Vector{Body})`, flags 1 (runtime dispatch): `b.mass` is
# declared `::Real`, so `b.mass * b.x` is dispatched at run time on every iteration —
# although the function's return type (`Vector{Float64}`) is concrete, so a check of the
# return type alone would miss it. The reason names `*(::Real, ::Float64)` at this file's
# line of the multiplication. `moments_typed!` (a concrete `mass::Float64`) must NOT be flagged.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=field.jgr julia --project=bindings/julia examples/julia/abstract_field_loop.jl
using Jager

struct Body
    mass::Real      # abstract: the bug
    x::Float64
end

struct TypedBody
    mass::Float64
    x::Float64
end

function moments!(out::Vector{Float64}, bs::Vector{Body})
    for i in eachindex(bs, out)
        b = bs[i]
        out[i] = b.mass * b.x
    end
    return out
end

function moments_typed!(out::Vector{Float64}, bs::Vector{TypedBody})
    for i in eachindex(bs, out)
        b = bs[i]
        out[i] = b.mass * b.x
    end
    return out
end

function main()
    Jager.start()
    n = 10_000
    bs = [Body(isodd(i) ? 1.0 : 2, i / n) for i in 1:n]  # Float64 and Int masses
    ts = [TypedBody(1.0, i / n) for i in 1:n]
    out = zeros(n)
    for _ in 1:50
        @jäger moments!(out, bs)
        @jäger moments_typed!(out, ts)
    end
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
