# error_path.jl — kernels whose only dynamic dispatch is on their error paths: the message
# built behind a shape check (string interpolation goes through `print(::IO, ::Any)`) and
# LinearAlgebra's factorizations, whose failure paths format messages dynamically.
#
# Expected findings (dispatch plugin): none. The stability verdict skips the blocks that
# end in a throw (and those leading only to one), as JET does, and Base/stdlib callees
# the program calls with concrete types. `checked_dot` runs 40 times, `solve_spd` 20.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=err.jgr julia --project=bindings/julia examples/julia/error_path.jl
using Jager
using LinearAlgebra

function checked_dot(x::Vector{Float64}, y::Vector{Float64})
    length(x) == length(y) ||
        throw(DimensionMismatch("x has $(length(x)) elements of $(eltype(x)), y has $(length(y)): $(summary(y))"))
    s = 0.0
    @inbounds for i in eachindex(x)
        s += x[i] * y[i]
    end
    return s
end

function solve_spd(A::Matrix{Float64}, b::Vector{Float64})
    F = cholesky(Symmetric(A))
    return F \ b
end

function main()
    x = rand(100_000); y = rand(100_000)
    n = 60
    B = rand(n, n); A = B' * B + n * I; b = rand(n)
    s = 0.0
    for _ in 1:40
        s += @jäger checked_dot(x, y)
    end
    for _ in 1:20
        s += sum(@jäger solve_spd(A, b))
    end
    return s
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
