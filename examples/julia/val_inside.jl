# val_inside.jl — a `Val(n)` callee inside an instrumented region, not at a site.
#
# Expected finding (dispatch plugin): a `specialization_explosion` of `vk` (≥ 200
# specializations, one per value of N), though no @jäger site calls it and nothing
# registers it with `Jager.watch`: the census covers every method of the program's
# modules. `powers` is the region; it also gets a type_instability (the dynamic call).
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=vin.jgr julia --project=bindings/julia examples/julia/val_inside.jl
using Jager

vk(::Val{N}, x::Float64) where {N} = x^N

function powers(n::Int, x::Float64)
    s = 0.0
    for i in 1:n
        s += vk(Val(i), x)::Float64
    end
    return s
end

main() = @jäger powers(200, 1.0001)

abspath(PROGRAM_FILE) == (@__FILE__) && main()
