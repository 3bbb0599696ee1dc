# own.jl — what is Jäger's own code, so that no finding names it.
#
# The sensors see the binding's code next to the program's: its functions are inlined into
# every @jäger site, compiled at the first call, and on the stack when a GC or an inference
# runs inside them. They stop at this module: the stability verdict neither reports a
# statement of the binding nor walks into its methods, compile events of its methods are
# not recorded, and its frames in recorded stacks are named `jager_jl:<function>` — the
# `jager_` prefix is the one the tools already treat as Jäger's (like the C core's
# `jager_*` functions), so a GC trigger or any other frame pick passes over them.

"The binding's source folder, with a trailing separator (paths in line tables start with it)."
const OWN_SRC = joinpath(@__DIR__, "")

"The prefix given to the names of the binding's frames in recorded stacks."
const OWN_FRAME_PREFIX = "jager_jl:"

"True for Jager and its submodules (DispatchSensor)."
function own_module(m::Module)
    while true
        m === (@__MODULE__) && return true
        p = parentmodule(m)
        p === m && return false
        m = p
    end
end

"True for a source file of the binding."
own_file(@nospecialize(file)) = startswith(string(file), OWN_SRC)

"True when `f` (a function, type or method) belongs to the binding."
function own_callee(@nospecialize(f))
    f isa Method && return own_module(f.module)
    f isa Core.MethodInstance && return f.def isa Method && own_module(f.def.module)
    f isa Function && return own_module(parentmodule(f))
    return false
end

# `Tuple{typeof(Jager.stop)}`, `Tuple{Jager.var"#kw", …}`, `Tuple{getfield(Jager, …)…}`:
# the text jl_dump_compiles writes for a root compile of the binding's own code.
const OWN_SIG_PREFIXES = ("Tuple{typeof(Jager.", "Tuple{Jager.", "Tuple{getfield(Jager,",
                          "Tuple{Core.kwftype(typeof(Jager.", "Tuple{Type{Jager.")
# A root compile of the binding's function, or of a Base method specialized on one of its
# types or closures (`lock(Jager.var"#15#17", …)`).
own_signature_text(s::AbstractString) = any(p -> startswith(s, p), OWN_SIG_PREFIXES) || own_signature_text_any(s)
own_signature_text_any(s::AbstractString) = occursin(r"(^|[^A-Za-z0-9_.])Jager\.", s)

"""
Set by the dispatch sensor to its `pause_capture!(delta)`: the binding's slow paths (a site's
registration, a new signature and its hooks, the nothrow proof, recording an exception)
run with compile capture paused, so that what they compile and infer — Base methods
specialized on the binding's closures, the proof's inference of the user's signature — is
not reported as the program's compile time.
"""
const OWN_PAUSE = Ref{Any}(nothing)

@inline function own_pause(delta::Int)
    h = OWN_PAUSE[]
    h === nothing || h(delta)
    return nothing
end
