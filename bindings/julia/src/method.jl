# method.jl — the MethodInstance of the innermost Julia frame at an event, as the
# attribute `code.method` (its signature, `Tuple{typeof(f), argtypes…}`).
#
# `JAGER_JULIA_METHOD`: unset or `1` — on for log records and span errors (the default),
# `0` — off, `all` — also on every span (at its begin; costly: a backtrace per span).
# The frame is found from a short unwind (libunwind's `unw_backtrace`, which libjulia links,
# into a per-thread buffer: 32 frames, no allocation; where it is missing, `backtrace()`,
# which walks the whole stack and costs tens of µs); each address is looked up once per process
# (StackTraces.lookup is slow: µs, ms for some sysimage frames) and its answer cached —
# the signature text of the first frame that is neither the binding's nor the logging
# machinery's, or "skip".

const METHOD_LOGS = Ref(true)
const METHOD_SPANS = Ref(false)
const KEY_METHOD = "code.method"

const UNW_BACKTRACE = Ref{Ptr{Cvoid}}(C_NULL)
const UNW_FRAMES = 32
const UNW_BUFS = Vector{Vector{Ptr{Cvoid}}}()

function method_config!()
    v = lowercase(strip(get(ENV, "JAGER_JULIA_METHOD", "1")))
    METHOD_LOGS[] = v != "0" && v != "off" && v != "false"
    METHOD_SPANS[] = v == "all"
    # RTLD_DEFAULT (NULL on glibc): libunwind as loaded with libjulia, if it is
    UNW_BACKTRACE[] = ccall(:dlsym, Ptr{Cvoid}, (Ptr{Cvoid}, Cstring), C_NULL, "unw_backtrace")
    while length(UNW_BUFS) < max_thread_slots()
        push!(UNW_BUFS, Vector{Ptr{Cvoid}}(undef, UNW_FRAMES))
    end
    return nothing
end

# The return addresses of the calling stack, innermost first (a view of a per-thread buffer,
# valid until this thread's next call), or `backtrace()`.
function short_backtrace()
    f = UNW_BACKTRACE[]
    tid = Threads.threadid()
    if f != C_NULL && tid <= length(UNW_BUFS)
        buf = UNW_BUFS[tid]
        n = ccall(f, Cint, (Ptr{Ptr{Cvoid}}, Cint), buf, UNW_FRAMES)
        return view(buf, 1:max(Int(n), 0))
    end
    return backtrace()
end

const SKIP = ""
# From 1.12 a frame's `linfo` may be the CodeInstance; its `def` is the MethodInstance.
const HAS_CODE_INSTANCE = isdefined(Core, :CodeInstance)
const METHOD_CACHE = Dict{UInt64,String}()
const METHOD_LOCK = ReentrantLock()

# Frames that are never "the event's" method: the binding's and the logging machinery's.
function skipped_module(m::Module)
    own_module(m) && return true
    m === Base.CoreLogging && return true
    return nameof(m) === :Logging && parentmodule(m) === m
end

function method_of_ip(ip::UInt64)
    lock(METHOD_LOCK)
    try
        return get!(METHOD_CACHE, ip) do
            for fr in Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1))   # innermost (inlined) first
                fr.from_c && return SKIP
                mi = fr.linfo
                if HAS_CODE_INSTANCE && mi isa Core.CodeInstance && isdefined(mi, :def)
                    mi = getfield(mi, :def)
                end
                if mi isa Core.MethodInstance
                    def = mi.def
                    mod = def isa Method ? def.module : def
                    mod isa Module && skipped_module(mod) && return SKIP
                    return string(mi.specTypes)
                end
            end
            return SKIP
        end
    finally
        unlock(METHOD_LOCK)
    end
end

"""
    Jager.innermost_method(bt = a backtrace from here) -> String or nothing

The signature of the MethodInstance of the innermost Julia frame of `bt` that is neither
the binding's nor the logging machinery's (frames inlined into a caller have none: their
caller's is taken), or `nothing`.
"""
function innermost_method(bt::AbstractVector = short_backtrace())
    for p in bt
        ip = p isa Ptr ? UInt64(UInt(p)) : p isa Base.InterpreterIP ? continue : UInt64(p)
        s = method_of_ip(ip)
        s === SKIP || return s
    end
    return nothing
end

# The innermost method as an interned string (one string-table entry per distinct method in
# the recording, a 4-byte id on each event), or nothing. Interned once per signature text
# object (each cached text is one object: an identity lookup).
const METHOD_IDS = IdDict{String,UInt32}()
function interned_method(bt::AbstractVector = short_backtrace())
    m = innermost_method(bt)
    m === nothing && return nothing
    lock(METHOD_LOCK)
    id = try
        get!(METHOD_IDS, m) do
            ccall((:jager_string_intern, LIB), UInt32, (Cstring,), cstr(m))
        end
    finally
        unlock(METHOD_LOCK)
    end
    return id == 0 ? m : InternedString(id)
end

# JAGER_JULIA_METHOD=all: the method running the span's site, as a span attribute.
function span_method(sp::JagerSpan)
    sp.site == 0 && return nothing
    own_pause(+1)
    try
        m = interned_method()
        m === nothing || with_attrs((KEY_METHOD => m,)) do a, n
            ccall((:jager_span_set_attrs, LIB), Cvoid, (JagerSpan, Ptr{JagerAttr}, Csize_t), sp, a, n)
        end
    catch
    finally
        own_pause(-1)
    end
    return nothing
end
@noinline span_method_latest(sp::JagerSpan) = (Base.invokelatest(span_method, sp); nothing)
