# nonconst_global.jl — a kernel reading a non-constant global.
#
# Expected finding (dispatch plugin): `dispatch.instability` for
# `scaled_sum(::Vector{Float64})`, flags 1|8 (runtime dispatch + non-concrete return):
# `scale` is a non-constant global, so its type is unknown at compile time, `scale * x` is
# dispatched at run time and the result is `Any`. The reason names `*(::Any, ::Float64)`
# and "non-constant global scale". The fix: `const scale = 2.0` or pass it as an
# argument; `scaled_sum_arg` is that fix and must NOT be flagged.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=global.jgr julia --project=bindings/julia examples/julia/nonconst_global.jl
using Jager

scale = 2.0

function scaled_sum(xs::Vector{Float64})
    s = 0.0
    for x in xs
        s += scale * x
    end
    return s
end

function scaled_sum_arg(xs::Vector{Float64}, k::Float64)
    s = 0.0
    for x in xs
        s += k * x
    end
    return s
end

function main()
    Jager.start()
    xs = rand(10_000)
    for _ in 1:100
        @jäger scaled_sum(xs)
        @jäger scaled_sum_arg(xs, 2.0)
    end
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
