# sensor.jl — the dispatch sensor: feeds the dispatch plugin through "jager.dispatch/1".
#
# Active only while recording with the dispatch plugin loaded (its extension found at
# start). What it does and when:
#   new signature at a @jäger site  (slow path, once per site and signature)
#       tell the plugin (first-sight event) and queue the signature for a verdict;
#   drain (Jager.stop, Jager.drain where the binding runs FLUSH_HOOKS, or Jager.dispatch_drain)
#       verdicts for queued signatures → dispatch.instability;
#       exact per-signature call counts → the plugin's summary;
#       compile dump + inference times → dispatch.compile;
#       census of tracked methods → dispatch.specializations.
# A call site pays nothing beyond the binding's own signature check: the sensor adds no
# work to spans, only to the first call of each signature.

const EXTENSION_ID = "jager.dispatch/1"
const N_FUNCTIONS = 8 # functions of jager_dispatch_api 1.0 (jager_dispatch.h)

mutable struct Sensor
    active::Bool
    ext::Ptr{Cvoid}
    signature_seen::Ptr{Cvoid}
    signature_count::Ptr{Cvoid}
    compile::Ptr{Cvoid}
    specializations::Ptr{Cvoid}
    instability::Ptr{Cvoid}
    said::Set{Symbol}               # problems reported once
end
const SENSOR = Sensor(false, C_NULL, C_NULL, C_NULL, C_NULL, C_NULL, C_NULL, Set{Symbol}())

"Guards everything below (hooks may run on several threads)."
const LOCK = ReentrantLock()
const PENDING = Tuple{UInt32,Any}[]          # (site, signature) awaiting a verdict
const SITES = UInt32[]                       # sites that saw a signature this recording (a Set{UInt32}: 0.1 s to compile)
const METHODS = IdDict{Method,Nothing}()     # methods reached from site signatures
const WATCHED = IdDict{Any,Nothing}()        # functions registered with watch()
const COMPILED = IdDict{Method,Nothing}()    # methods inferred during the recording (compile events)
const SIG_TEXT = IdDict{Any,String}()        # signature → its text, made once
const VERDICTS = IdDict{Any,Union{Verdict,Nothing}}() # signature → verdict (this recording)
const FLAGGED = Tuple{UInt32,Any,Verdict}[]  # (site, signature, verdict) sent as unstable

"""
    @locked expr

`expr` under `LOCK`, as `lock(LOCK); try expr finally unlock(LOCK) end`: no closure, so no
`lock(f, …)` specialization to compile per call site and no boxed captured variables.
"""
macro locked(ex)
    return quote
        lock(LOCK)
        try
            $(esc(ex))
        finally
            unlock(LOCK)
        end
    end
end

# Rare paths, called through `invokelatest`: inference of the hooks that call them then
# stops at the call, so a recording never infers the logging macro and `showerror` for the
# sensor's error messages (≈ 0.1 s of a site's first call on Julia 1.5; issue 9 item 10).
say_once(key::Symbol, msg::String) = (Base.invokelatest(say_once_now, key, msg); nothing)
function say_once_now(key::Symbol, msg::String)
    key in SENSOR.said && return
    push!(SENSOR.said, key)
    @warn "Jager dispatch sensor: $msg"
end
say_error(key::Symbol, what::String, @nospecialize(e)) = (Base.invokelatest(say_error_now, key, what, e); nothing)
say_error_now(key::Symbol, what::String, @nospecialize(e)) = say_once_now(key, string(what, ": ", sprint(showerror, e)))

sig_text(@nospecialize(sig)) = get!(() -> string(sig), SIG_TEXT, sig)

fnptr(p::Ptr{Cvoid}, i::Int) = unsafe_load(Ptr{Ptr{Cvoid}}(p + 8 + 8 * i))

"Look up the extension and start capturing; true when the sensor is (now) active."
function activate!()
    SENSOR.active && return true
    available() || return false
    lock(LOCK)
    try
        SENSOR.active && return true
        ccall((:jager_is_enabled, LIB), Cint, ()) == 1 || return false
        p = ccall((:jager_extension_get, LIB), Ptr{Cvoid}, (Cstring,), EXTENSION_ID)
        p == C_NULL && return false # the dispatch plugin is not loaded: stay out of the way
        size = unsafe_load(Ptr{UInt32}(p))
        if size < 8 + 8 * N_FUNCTIONS
            say_once(:size, "the dispatch plugin's table is too small ($size bytes); sensor off")
            return false
        end
        SENSOR.ext = p
        SENSOR.signature_seen = fnptr(p, 0)
        SENSOR.signature_count = fnptr(p, 1)
        SENSOR.compile = fnptr(p, 2)
        SENSOR.specializations = fnptr(p, 3)
        SENSOR.instability = fnptr(p, 4)
        empty!(FLAGGED)
        warm_up()
        start_compile_capture!() || say_once(:compile, "jl_dump_compiles is unavailable; no compile events")
        SENSOR.active = true
        return true
    finally
        unlock(LOCK)
    end
end

# Compile the sensor's own entry points before capture starts, so that the recording's
# compile events are the program's, not the sensor's.
function warm_up()
    precompile(on_new_signature, (UInt32, Type))
    precompile(on_stop, ())
    precompile(on_flush, ())
    precompile(without_capture, (Function,))
    precompile(pause_capture!, (Int,))
    precompile(drain_now, ())
    precompile(watch, (Function,))
    return nothing
end



"Deactivate after a final drain; the table dies with jager_shutdown."
function deactivate!()
    lock(LOCK)
    try
        stop_compile_capture!()
        SENSOR.active = false
        SENSOR.ext = C_NULL
        empty!(PENDING)
        empty!(SITES)
        empty!(METHODS)
        empty!(COMPILED)
        empty!(SIG_TEXT)
        empty!(VERDICTS)
    finally
        unlock(LOCK)
    end
    return nothing
end

# ---- hooks ---------------------------------------------------------------------------

"True when the core is recording with the dispatch plugin's extension registered."
plugin_present() = available() && ccall((:jager_is_enabled, LIB), Cint, ()) == 1 &&
                   ccall((:jager_extension_get, LIB), Ptr{Cvoid}, (Cstring,), EXTENSION_ID) != C_NULL

# activate! (capture, the inference hook, warm-up) is compiled only when the plugin is
# loaded: a recording without it pays one ccall at start and at each new signature.
"START_HOOKS: activate when the dispatch plugin is loaded."
on_start() = (plugin_present() && Base.invokelatest(activate!); nothing)

# Each hook is a thin shell: the work runs through `invokelatest` with compile capture
# paused, so the sensor's own first-use compilation never shows up as the program's
# compile events (and the shells are compiled before capture starts, see warm_up).

"""
NEW_SIGNATURE_HOOKS: a @jäger site saw a new signature. Records the first sight and queues
the verdict; costs a string and one ccall, once per (site, signature). Never throws.
"""
function on_new_signature(site::UInt32, @nospecialize(sig::Type))
    SENSOR.active || (plugin_present() && Base.invokelatest(activate!)::Bool) || return nothing
    without_capture() do
        Base.invokelatest(new_signature, site, sig)
    end
    return nothing
end

function new_signature(site::UInt32, @nospecialize(sig::Type))
    try
        # The ccall stays under the lock: deactivate! (before jager_shutdown unloads the
        # plugin) takes it too, so no thread can call into an unloaded table.
        lock(LOCK)
        try
            SENSOR.active || return nothing
            text = sig_text(sig)
            push!(PENDING, (site, sig))
            site in SITES || push!(SITES, site)
            ccall(SENSOR.signature_seen, Int32, (UInt32, Cstring), site, text)
        finally
            unlock(LOCK)
        end
    catch e
        say_error(:hook, "new-signature hook failed", e)
    end
    return nothing
end

"STOP_HOOKS: the final drain, then step aside."
function on_stop()
    SENSOR.active || return nothing
    without_capture() do
        Base.invokelatest(guarded_drain, true)
        # The price of a dynamic call, for the hunt's cost of the instabilities just sent.
        isempty(FLAGGED) || Base.invokelatest(guarded_call_cost)
        deactivate!()
    end
    return nothing
end

function guarded_call_cost()
    try
        Jager.record_dynamic_call_cost!()
    catch e
        say_error(:drain, "timing a dynamic call failed", e)
    end
    return nothing
end

"FLUSH_HOOKS: an intermediate drain."
function on_flush()
    SENSOR.active || return nothing
    without_capture() do
        Base.invokelatest(guarded_drain)
    end
    return nothing
end

"Jager.dispatch_drain(): a drain now, outside compile capture like the hooks."
function drain_now()
    # Not `drain!()` here: a static call would make this thin shell's warm-up (at start)
    # infer the whole drain, verdicts included (0.8 s on 1.5).
    SENSOR.active || return NOTHING_SENT
    return without_capture() do
        Base.invokelatest(drain!, false)
    end
end

function guarded_drain(final::Bool = false)
    try
        drain!(final)
    catch e
        say_error(:drain, "drain failed", e)
    end
    return nothing
end

# ---- the drain -----------------------------------------------------------------------

"""
    drain!(final = false) -> NamedTuple

Send what accumulated since the last drain: verdicts of new signatures, exact
per-signature counts, compile events, the specialization census. Runs on the calling
task; inference for the verdicts costs about a millisecond per method.
Returns counts of what was sent.
"""
const NOTHING_SENT = (verdicts = 0, unstable = 0, counts = 0, compiles = 0, methods = 0)

"""
Process CPU nanoseconds (`clock()`: a loaded machine disturbs it less than wall time) the
last drain spent in each of its phases (the first drain of a process
includes compiling the sensor's own code): `compiles` (reading the compile dump),
`verdicts` (type-stability verdicts of new signatures), `counts` (per-signature call
counts), `census` (specialization census). bench/julia/kernels.jl prints them.
"""
mutable struct DrainTimes
    compiles::UInt64
    verdicts::UInt64
    counts::UInt64
    census::UInt64
end
const DRAIN_NS = DrainTimes(0, 0, 0, 0)   # not a Dict{Symbol,UInt64}: 0.1 s to compile
cpu_ns() = UInt64(max(ccall(:clock, Clong, ()), 0)) * UInt64(1000)   # CLOCKS_PER_SEC is 10^6 on POSIX

function drain!(final::Bool = false)
    SENSOR.active || return NOTHING_SENT
    # Compiles up to now are the program's; what the drain compiles for itself is not.
    t0 = cpu_ns()
    ncompiles = without_capture() do
        drain_compiles!(final) do t, codegen, inference, sig
            ccall(SENSOR.compile, Int32, (UInt64, UInt64, UInt64, Cstring), t, codegen, inference, cstring_safe(sig))
        end
    end
    DRAIN_NS.compiles = cpu_ns() - t0
    return without_capture() do
        drain_rest!(ncompiles)
    end
end

function drain_rest!(ncompiles::Int)
    lock(LOCK)
    pending, sites = try
        (splice!(PENDING, 1:length(PENDING)), copy(SITES))
    finally
        unlock(LOCK)
    end
    nunstable = 0
    t0 = cpu_ns()
    for (site, sig) in pending
        v = @locked get(VERDICTS, sig, missing)
        if v === missing
            v = verdict(sig)
            @locked VERDICTS[sig] = v
        end
        track_methods!(sig)
        if v !== nothing && unstable(v)
            text = @locked sig_text(sig)
            ccall(SENSOR.instability, Int32, (UInt32, Cstring, UInt64, Cstring, Cstring),
                  site, text, v.flags, cstring_safe(v.reason), cstring_safe(v.chain))
            @locked push!(FLAGGED, (site, sig, v))
            nunstable += 1
        end
    end
    t1 = cpu_ns()
    DRAIN_NS.verdicts = t1 - t0
    ncounts = 0
    for site in sites
        for (sig, n) in signature_counts(site)
            text = @locked sig_text(sig)
            ccall(SENSOR.signature_count, Int32, (UInt32, Cstring, UInt64), site, text, UInt64(n))
            ncounts += 1
        end
    end
    t2 = cpu_ns()
    DRAIN_NS.counts = t2 - t1
    nmethods = census!()
    DRAIN_NS.census = cpu_ns() - t2
    return (verdicts = length(pending), unstable = nunstable, counts = ncounts, compiles = ncompiles,
            methods = nmethods)
end

cstring_safe(s::AbstractString) = replace(String(s), '\0' => "\\0")

function track_methods!(@nospecialize(sig))
    for (m, _, _) in method_matches(sig)
        @locked METHODS[m] = nothing
    end
end

# The census covers the methods seen at sites, the watched functions, and every method
# of the program's modules (those of the sites' methods and of the methods compiled
# during the recording, Base/Core/stdlib and Jäger left out): a `Val(n)` callee inside a
# region is counted though no site calls it. Methods beyond the sites' are sent from 2
# specializations on (one is every method's normal state).
function census!()
    ms, extra = @locked begin
        out = collect(Method, keys(METHODS))
        seen = IdDict{Method,Nothing}()   # not unique!: its Set{Method} costs 0.04 s to compile
        for m in out
            seen[m] = nothing
        end
        for f in keys(WATCHED)
            for m in methods_of(f)
                haskey(seen, m) && continue
                seen[m] = nothing
                push!(out, m)
            end
        end
        mods = IdDict{Module,Nothing}()
        for m in out
            program_method(m) && (mods[m.module] = nothing)
        end
        for m in keys(COMPILED)
            program_method(m) && (mods[m.module] = nothing)
        end
        more = IdDict{Method,Nothing}()
        for m in keys(COMPILED)
            program_method(m) && (more[m] = nothing)
        end
        for mod in keys(mods)
            for m in module_methods(mod)
                more[m] = nothing
            end
        end
        for m in out
            delete!(more, m)
        end
        (out, collect(Method, keys(more)))
    end
    n = 0
    for (list, least) in ((ms, 0), (extra, 2))
        for m in list
            c = count_specializations(m)
            c >= least || continue
            ccall(SENSOR.specializations, Int32, (Cstring, Cstring, UInt32, UInt64),
                  cstring_safe(string(m)), cstring_safe(string(m.file)), UInt32(clamp(m.line, 0, typemax(UInt32))),
                  UInt64(c))
            n += 1
        end
    end
    return n
end

"A method of the program: not Base, Core, a standard library or Jäger."
program_method(m::Method) = !library_method(m) && !Jager.own_module(m.module)

# Every method defined in module `mod` (its functions' methods whose module is `mod`).
function module_methods(mod::Module)
    out = Method[]
    for name in names(mod; all = true)
        isdefined(mod, name) || continue
        f = try
            getfield(mod, name)
        catch
            continue
        end
        f isa Function || continue
        for m in methods_of(f)
            m.module === mod && push!(out, m)
        end
    end
    return out
end

"Register `f` for the specialization census (kept across recordings)."
function watch(@nospecialize(f))
    without_capture() do
        @locked WATCHED[f] = nothing
    end
    return f
end

"Verdicts sent as unstable in this recording: (site, signature, Verdict) tuples."
flagged() = @locked copy(FLAGGED)

function __init__()
    # Hooks are registered at load time (not during precompilation, whose pushes would be
    # serialised); each only once.
    in(on_new_signature, NEW_SIGNATURE_HOOKS) || push!(NEW_SIGNATURE_HOOKS, on_new_signature)
    in(on_start, START_HOOKS) || push!(START_HOOKS, on_start)
    in(on_stop, STOP_HOOKS) || push!(STOP_HOOKS, on_stop)
    if isdefined(Jager, :FLUSH_HOOKS) # a binding that drains plugins at Jager.drain()
        hooks = getfield(Jager, :FLUSH_HOOKS)
        in(on_flush, hooks) || push!(hooks, on_flush)
    end
end

# No `precompile` directives here: on Julia 1.5 their cached inference (with the Base
# specializations it pulls in) cost ≈ 0.1 s at every `using Jager`, recording or not, to
# save part of the inference of a drain that only recordings with the dispatch plugin run.
