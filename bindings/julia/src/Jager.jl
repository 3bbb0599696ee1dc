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

export @jäger, @jäger_block, @jaeger, @jaeger_block, JagerLogger, JagerError

include("lib.jl")
include("own.jl")
include("abi.jl")
include("attrs.jl")
include("typed_ir.jl")
include("nothrow.jl")
include("sites.jl")
include("macros.jl")
include("lifecycle.jl")
include("summary.jl")
include("context.jl")
include("logger.jl")
include("symbolize.jl")

# The dispatch sensor (compile events, specialization census, stability verdicts) is
# optional: it extends NEW_SIGNATURE_HOOKS and STOP_HOOKS when present.
if isfile(joinpath(@__DIR__, "dispatch.jl"))
    include("dispatch.jl")
end

# Compiled into the package image, so that a site's first call, first new signature,
# first error and first log record do not pay inference at run time.
precompile(register!, (Site,))
precompile(new_slots, (Int,))
precompile(signature_slow!, (Site, Any, Int, Bool))
precompile(nothrow_world, (Type,))
precompile(nothrow, (Type,))
precompile(_on_new_signature, (UInt32, Type))
precompile(_fail, (Site, JagerSpan, Int64, Any, Any))
precompile(start, ())
precompile(attach_env!, ())
precompile(stop, ())
precompile(drain, ())
precompile(symbolize!, ())
precompile(print_timings, (Base.TTY,))
precompile(print_timings, (Base.GenericIOBuffer{Array{UInt8,1}},))
precompile(timing_tree, (String,))
precompile(tree_rows!, (Vector{Vector{String}}, TimingNode, Int, Float64))

function __init__()
    ENABLED[] = false
    find_tls_world!()
    load_library!()
    attach_external!()
    attach_env!()
    return nothing
end

end # module
