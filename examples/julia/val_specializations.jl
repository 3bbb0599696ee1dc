# val_specializations.jl — a specialization explosion: `Val(i)` built from run-time data.
#
# Expected findings (dispatch plugin):
#   * `dispatch.specializations` for `hk(::Val{N}, x::Float64) where N` growing to ≥ 300 (one
#     MethodInstance per value of N; each was inferred and compiled at run time);
#   * `dispatch.compile` events for those 300 compiles;
#   * `dispatch.instability` for `sum_vals(::Int64)`, flags 1: `Val(i)` has a run-time
#     type parameter, so `hk(Val(i), 0.5)` is dispatched at run time.
# The fix is to keep the value a value (`hk(i, x)`), or to use Val only with constants.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=val.jgr julia --project=bindings/julia examples/julia/val_specializations.jl
using Jager

hk(::Val{N}, x::Float64) where {N} = N * x

function sum_vals(n::Int)
    s = 0.0
    for i in 1:n
        s += hk(Val(i), 0.5)::Float64
    end
    return s
end

function main()
    Jager.start()
    Jager.watch(hk)          # census of hk's specializations at every drain
    @jäger sum_vals(300)
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
