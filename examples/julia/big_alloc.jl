# big_alloc.jl — an allocating inner loop in a function called only 3 times.
#
# Expected findings (gc plugin): an `allocation_hotspot` at `relax_all` — about 1.1 GiB in
# 3 calls (a fresh 8 MB temporary per inner step); `relax_inplace`, the same work written
# in place, allocates nothing and is not flagged. The "largest allocators" table of
# `jager hunt` lists `relax_all` first.
#
#   JAGER_PLUGINS=gc JAGER_OUTPUT=big.jgr julia --project=bindings/julia examples/julia/big_alloc.jl
using Jager

function relax_all(u::Vector{Float64}, steps::Int)
    for _ in 1:steps
        u = 0.5 .* (u .+ reverse(u))   # two new 8 MB arrays per step
    end
    return u
end

function relax_inplace(u::Vector{Float64}, v::Vector{Float64}, steps::Int)
    n = length(u)
    for _ in 1:steps
        @inbounds for i in 1:n
            v[i] = 0.5 * (u[i] + u[n + 1 - i])
        end
        u, v = v, u
    end
    return u
end

function main()
    u = rand(1_000_000)
    v = similar(u)
    for _ in 1:3
        @jäger relax_all(u, 24)      # 3 × 24 × 2 × 8 MB ≈ 1.1 GiB
        @jäger relax_inplace(u, v, 24)
    end
    return u
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
