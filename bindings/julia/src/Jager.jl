"""
    Jager

Julia bindings of Jäger, a performance recorder for numerical programs: `@jäger` and
`@jäger_block` spans recorded by the C core (libjager) with their durations, allocated
bytes, errors and argument signatures; `JagerLogger` for Julia's logging; W3C trace
context helpers; and a symbolizer for the Julia frames of recorded stacks.

```julia
using Jager
Jager.start(output = "run.jgr")          # or JAGER_OUTPUT=run.jgr
for i in 1:100
    @jäger solve!(u)                     # a span per call, named "solve!"
end
Jager.print_timings(); Jager.stop()
```

libjager is found through `JAGER_LIB`, then the repository's build folders, then the
install prefix and the system library path. `using Jager` never fails when it is missing:
the functions then throw a message saying how to point at it.
"""
module Jager

using Libdl
using Logging
using Printf

# The binding's code is compiled at -O1 in every process (Julia 1.5 keeps no machine code):
# it runs once or rarely, and LLVM's full pipeline on it cost more than it saves. The
# span's hot path is compiled at Julia's own level (hot.jl).
@static if isdefined(Base, :Experimental) && isdefined(Base.Experimental, Symbol("@optlevel"))
    Base.Experimental.@optlevel 1
end

export @jäger, @jäger_block, @jaeger, @jaeger_block, JagerLogger, JagerError, SupplyChainError

include("lib.jl")
include("own.jl")
include("abi.jl")
include("attrs.jl")
include("typed_ir.jl")
include("nothrow.jl")
include("tasks.jl")
include("gcstate.jl")
include("valueattrs.jl")
include("method.jl")
include("sites.jl")
include("hot.jl")
include("macros.jl")
include("lifecycle.jl")
include("summary.jl")
include("context.jl")
include("logger.jl")
include("symcache.jl")
include("symbolize.jl")
include("selfcost.jl")
include("callcost.jl")
include("supply.jl") # Jager.Supply: lock files of environments (docs/supply-chain.md)
include("supply_run.jl") # JAGER_LOCK at Jager.start

# The dispatch sensor (compile events, specialization census, stability verdicts) is
# optional: it extends NEW_SIGNATURE_HOOKS and STOP_HOOKS when present.
if isfile(joinpath(@__DIR__, "dispatch.jl"))
    include("dispatch.jl")
end

# Few `precompile` directives: Julia 1.5 caches inferred code but no machine code, and the
# directives for the slow paths (start, the dispatch sensor's drain, with the Base
# specializations they pull in) were measured to cost more at every `using` (0.03 s → 0.20 s;
# again in issue 9 item 10: +0.1–0.15 s per `using` to save 0.4–0.8 s of a gc,dispatch
# stop) than they save. What keeps the first call cheap instead is that rare paths are
# compiled only when they run (report_error in lib.jl, invokelatest in supply_run.jl).

# The directives kept: what every @jäger expansion calls (`_enter`, `_leave`, hot.jl) and
# what they inline. Their inferred code is cached with the package, so a process's first
# @jäger site does not infer them; they pull in no Base specializations, so `using` does
# not pay for them (measured on 1.5: `using` unchanged within noise). `decide_nothrow!`'s
# would cost +0.06 s per `using` (measured): its proof waits for a signature's 1000th call.
if ccall(:jl_generating_output, Cint, ()) == 1
    precompile(_enter, (Site,))
    precompile(_enter, (Site, Any))
    precompile(_enter_kw, (Site, Any))
    precompile(_leave, (JagerSpan, Int64))
    precompile(count_signature!, (Site, Any, Bool))
    precompile(signature_slow!, (Site, Any, Int, Bool))
    precompile(note_task, ())
    precompile(_on_new_signature, (UInt32, Type))
    if isdefined(Jager, :DispatchSensor)
        precompile(DispatchSensor.on_new_signature, (UInt32, Type))
        precompile(DispatchSensor.new_signature, (UInt32, Type))
    end
end

function __init__()
    ENABLED[] = false
    find_tls_world!()
    load_library!()
    attach_external!()
    attach_env!()
    return nothing
end

end # module
