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
const SITES = Set{UInt32}()                  # sites that saw a signature this recording
const METHODS = IdDict{Method,Nothing}()     # methods reached from site signatures
const WATCHED = IdDict{Any,Nothing}()        # functions registered with watch()
const SIG_TEXT = IdDict{Any,String}()        # signature → its text, made once
const VERDICTS = IdDict{Any,Union{Verdict,Nothing}}() # signature → verdict (this recording)
const FLAGGED = Tuple{UInt32,Any,Verdict}[]  # (site, signature, verdict) sent as unstable

function say_once(key::Symbol, msg::String)
    key in SENSOR.said && return
    push!(SENSOR.said, key)
    @warn "Jager dispatch sensor: $msg"
end

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
        empty!(SIG_TEXT)
        empty!(VERDICTS)
    finally
        unlock(LOCK)
    end
    return nothing
end

# ---- hooks ---------------------------------------------------------------------------

"START_HOOKS: activate when the dispatch plugin is loaded."
on_start() = (activate!(); nothing)

# Each hook is a thin shell: the work runs through `invokelatest` with compile capture
# paused, so the sensor's own first-use compilation never shows up as the program's
# compile events (and the shells are compiled before capture starts, see warm_up).

"""
NEW_SIGNATURE_HOOKS: a @jäger site saw a new signature. Records the first sight and queues
the verdict; costs a string and one ccall, once per (site, signature). Never throws.
"""
function on_new_signature(site::UInt32, @nospecialize(sig::Type))
    SENSOR.active || activate!() || return nothing
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
            push!(SITES, site)
            ccall(SENSOR.signature_seen, Int32, (UInt32, Cstring), site, text)
        finally
            unlock(LOCK)
        end
    catch e
        say_once(:hook, "new-signature hook failed: $(sprint(showerror, e))")
    end
    return nothing
end

"STOP_HOOKS: the final drain, then step aside."
function on_stop()
    SENSOR.active || return nothing
    without_capture() do
        Base.invokelatest(guarded_drain, true)
        deactivate!()
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
    SENSOR.active || return drain!()
    return without_capture() do
        Base.invokelatest(drain!, false)
    end
end

function guarded_drain(final::Bool = false)
    try
        drain!(final)
    catch e
        say_once(:drain, "drain failed: $(sprint(showerror, e))")
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
function drain!(final::Bool = false)
    SENSOR.active || return (verdicts = 0, unstable = 0, counts = 0, compiles = 0, methods = 0)
    # Compiles up to now are the program's; what the drain compiles for itself is not.
    ncompiles = without_capture() do
        drain_compiles!(final) do t, codegen, inference, sig
            ccall(SENSOR.compile, Int32, (UInt64, UInt64, UInt64, Cstring), t, codegen, inference, cstring_safe(sig))
        end
    end
    return without_capture() do
        drain_rest!(ncompiles)
    end
end

function drain_rest!(ncompiles::Int)
    lock(LOCK)
    pending, sites = try
        (splice!(PENDING, 1:length(PENDING)), collect(SITES))
    finally
        unlock(LOCK)
    end
    nunstable = 0
    for (site, sig) in pending
        v = lock(() -> get(VERDICTS, sig, missing), LOCK)
        if v === missing
            v = verdict(sig)
            lock(() -> (VERDICTS[sig] = v), LOCK)
        end
        track_methods!(sig)
        if v !== nothing && unstable(v)
            text = lock(() -> sig_text(sig), LOCK)
            ccall(SENSOR.instability, Int32, (UInt32, Cstring, UInt64, Cstring, Cstring),
                  site, text, v.flags, cstring_safe(v.reason), cstring_safe(v.chain))
            lock(() -> push!(FLAGGED, (site, sig, v)), LOCK)
            nunstable += 1
        end
    end
    ncounts = 0
    for site in sites
        for (sig, n) in signature_counts(site)
            text = lock(() -> sig_text(sig), LOCK)
            ccall(SENSOR.signature_count, Int32, (UInt32, Cstring, UInt64), site, text, UInt64(n))
            ncounts += 1
        end
    end
    nmethods = census!()
    return (verdicts = length(pending), unstable = nunstable, counts = ncounts, compiles = ncompiles,
            methods = nmethods)
end

cstring_safe(s::AbstractString) = replace(String(s), '\0' => "\\0")

function track_methods!(@nospecialize(sig))
    for (m, _, _) in method_matches(sig)
        lock(() -> (METHODS[m] = nothing), LOCK)
    end
end

function census!()
    ms = lock(LOCK) do
        out = collect(Method, keys(METHODS))
        for f in keys(WATCHED)
            append!(out, methods_of(f))
        end
        unique!(out)
    end
    for m in ms
        file = string(m.file)
        ccall(SENSOR.specializations, Int32, (Cstring, Cstring, UInt32, UInt64),
              cstring_safe(string(m)), cstring_safe(file), UInt32(clamp(m.line, 0, typemax(UInt32))),
              UInt64(count_specializations(m)))
    end
    return length(ms)
end

"Register `f` for the specialization census (kept across recordings)."
function watch(@nospecialize(f))
    without_capture() do
        lock(() -> (WATCHED[f] = nothing), LOCK)
    end
    return f
end

"Verdicts sent as unstable in this recording: (site, signature, Verdict) tuples."
flagged() = lock(() -> copy(FLAGGED), LOCK)

function __init__()
    # Hooks are registered at load time (not during precompilation, whose pushes would be
    # serialised); each only once.
    in(on_new_signature, NEW_SIGNATURE_HOOKS) || push!(NEW_SIGNATURE_HOOKS, on_new_signature)
    in(on_start, START_HOOKS) || push!(START_HOOKS, on_start)
    in(on_stop, STOP_HOOKS) || push!(STOP_HOOKS, on_stop)
    isdefined(Jager, :OWN_PAUSE) && (Jager.OWN_PAUSE[] = pause_capture!)
    if isdefined(Jager, :FLUSH_HOOKS) # a binding that drains plugins at Jager.drain()
        hooks = getfield(Jager, :FLUSH_HOOKS)
        in(on_flush, hooks) || push!(hooks, on_flush)
    end
end

# Inferred during package precompilation (cached in the .ji): what is left at run time is
# code generation, so the first drain of a session costs less.
precompile(new_signature, (UInt32, Type))
precompile(guarded_drain, (Bool,))
precompile(drain!, (Bool,))
precompile(drain_rest!, (Int,))
precompile(verdict, (Type,))
precompile(verdict_unsafe, (Type,))
precompile(scan, (Core.CodeInfo, Any))
precompile(typed_ir, (Type,))
precompile(census!, ())
precompile(track_methods!, (Type,))
precompile(sig_text, (Type,))
precompile(read_dump_lines!, ())
precompile(static_show, (IOStream, Type))
precompile(activate!, ())
