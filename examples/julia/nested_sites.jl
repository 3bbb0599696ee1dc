# nested_sites.jl — the normal way to instrument: a phase recorded at its call, the kernels
# inside it recorded at theirs. Everything here is type-stable.
#
# Expected findings (dispatch plugin): none. In particular nothing that names Jäger's own
# code — the span machinery of the inner sites is inlined into `phase` and `@jäger`-defined
# methods, and the verdicts, compile events and stacks must not report it (the binding's
# `_on_new_signature`, `signature_slow!`, `Jager.stop` are not the program's).
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=nested.jgr julia --project=bindings/julia examples/julia/nested_sites.jl
using Jager

function kernel!(y::Vector{Float64}, x::Vector{Float64}, a::Float64)
    @inbounds for i in eachindex(x, y)
        y[i] = a * x[i] + y[i]
    end
    return y
end

@jäger function smooth!(y::Vector{Float64})
    @inbounds for i in 2:length(y)-1
        y[i] = (y[i-1] + y[i] + y[i+1]) / 3
    end
    return y
end

function phase(x::Vector{Float64}, y::Vector{Float64}, steps::Int)
    for s in 1:steps
        @jäger kernel!(y, x, 0.5)
        smooth!(y)
    end
    return sum(y)
end

function main(steps::Int = 20)
    x = collect(range(0.0, 1.0; length = 1000)); y = zeros(1000)
    for _ in 1:5
        @jäger phase(x, y, steps)
    end
    return y
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
