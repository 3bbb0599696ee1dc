# dispatch.jl — the dispatch sensor, included by Jager.jl.
#
# With `JAGER_PLUGINS=dispatch`, the sensor feeds the dispatch plugin (plugins/dispatch,
# extension "jager.dispatch/1") with what only the Julia side can see: the argument
# signatures of @jäger call sites, compile events (codegen and inference time per root),
# the specializations of the methods reached, and a type-stability verdict per new
# signature. Without the plugin it stays inactive; `Jager.specializations` and
# `Jager.stability` work either way. See dispatch/sensor.jl for what runs when.

module DispatchSensor

using Libdl
import ..Jager

# The sensor runs off the hot path (drains, verdicts): its code needs little optimisation,
# and LLVM's time on it is what Jager.stop() waits for at its first drain.
@static if isdefined(Base, :Experimental) && isdefined(Base.Experimental, Symbol("@optlevel"))
    Base.Experimental.@optlevel 0
end
using ..Jager: LIB, available, NEW_SIGNATURE_HOOKS, START_HOOKS, STOP_HOOKS, signature_counts
using ..Jager: CONST_TYPE, typed_ir, widen, resolve, callee_value, arg_type, method_matches

include("dispatch/verdict.jl")
include("dispatch/census.jl")
include("dispatch/compile.jl")
include("dispatch/sensor.jl")

end # module DispatchSensor

"""
    Jager.watch(f) -> f

Add every method of `f` to the dispatch sensor's specialization census, so that the
recording shows how its specialization count grows (methods called through @jäger sites
are counted without this).
"""
watch(@nospecialize(f)) = DispatchSensor.watch(f)

"""
    Jager.specializations(f) -> Int

The number of specializations (MethodInstances) Julia holds for all methods of `f`.
"""
specializations(@nospecialize(f)) = DispatchSensor.specializations(f)

"""
    Jager.stability(f, argtypes::Type{<:Tuple}) -> Union{Jager.DispatchSensor.Verdict,Nothing}

The dispatch sensor's type-stability verdict for calling `f` with arguments of types
`argtypes`: `flags` (1 runtime dispatch, 2 non-concrete union value, 4 `Core.Box`, 8
non-concrete return), `reason`, `chain`. `nothing` when inference cannot say.
"""
function stability(@nospecialize(f), @nospecialize(argtypes::Type{<:Tuple}))
    return DispatchSensor.verdict(Tuple{Core.Typeof(f), argtypes.parameters...})
end

"""
    Jager.dispatch_drain()

Send the dispatch sensor's pending work to the plugin now (verdicts, counts, compile
events, census) instead of at `Jager.stop()`. A no-op when the sensor is inactive.
"""
dispatch_drain() = DispatchSensor.drain_now()
