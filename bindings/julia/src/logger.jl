# logger.jl — JagerLogger: Julia's logging into the core's rings.

"""
    JagerLogger(forward = nothing; min_level = Logging.Info)

A `Logging.AbstractLogger` that records every message at or above `min_level` with
`jager_log`: the OpenTelemetry severity number of its level, the message, its keyword
arguments as attributes (Bool, Int64-sized integers, floats and strings keep their type;
other values become `string(value)`; an `exception = (e, bt)` becomes its `showerror`
text), and `code.namespace`, `code.filepath`, `code.lineno`. The core attaches the
innermost open span of the thread and the current trace context. `maxlog = n` is honoured
per message id. Messages are also passed to `forward` (another logger), subject to its
own level and filters; `forward` may see levels below `min_level`.

Levels map to severity numbers: Debug (-1000) → 5, Info (0) → 9, Warn (1000) → 13,
Error (2000) → 17, each step of 250 between them one more (so a custom `LogLevel(500)` is
11); below Debug is TRACE (1–4), from 3000 up FATAL (21–24).

Thread safety: a JagerLogger may be used from any number of threads and tasks at once.
Its `maxlog` table is guarded by a lock; `jager_log` writes into the calling thread's
ring without locking; the forward logger must be thread-safe itself (Julia's loggers are).
When Jäger is not recording (or libjager is missing) nothing is recorded, and messages
are still forwarded.
"""
struct JagerLogger <: Logging.AbstractLogger
    min_level::Logging.LogLevel
    forward::Union{Nothing,Logging.AbstractLogger}
    message_limits::Dict{Any,Int}
    lock::ReentrantLock
    limited::Threads.Atomic{Bool}   # set once a maxlog was seen: shouldlog then consults the table
end
JagerLogger(forward::Union{Nothing,Logging.AbstractLogger} = nothing; min_level = Logging.Info) =
    JagerLogger(min_level, forward, Dict{Any,Int}(), ReentrantLock(), Threads.Atomic{Bool}(false))

"""
    Jager.severity(level) -> Int

The OpenTelemetry severity number (1–24) of a Julia log level (see [`JagerLogger`](@ref)).
"""
function severity(level::Logging.LogLevel)
    l = Int(level.level)
    band(base, lo) = base + clamp(div(l - lo, 250), 0, 3)
    l < -1000 && return 1 + clamp(div(l + 2000, 250), 0, 3)   # TRACE 1-4: [-2000, -1000)
    l < 0 && return band(5, -1000)                             # DEBUG 5-8
    l < 1000 && return band(9, 0)                              # INFO 9-12
    l < 2000 && return band(13, 1000)                          # WARN 13-16
    l < 3000 && return band(17, 2000)                          # ERROR 17-20
    return band(21, 3000)                                      # FATAL 21-24
end
severity(level::Integer) = severity(Logging.LogLevel(level))

function Logging.min_enabled_level(l::JagerLogger)
    l.forward === nothing && return l.min_level
    return min(l.min_level, Logging.min_enabled_level(l.forward))
end

function Logging.shouldlog(l::JagerLogger, level, _module, group, id)
    l.limited[] || return true
    lock(l.lock)
    try
        return get(l.message_limits, id, 1) > 0
    finally
        unlock(l.lock)
    end
end

Logging.catch_exceptions(l::JagerLogger) = true

function Logging.handle_message(l::JagerLogger, level::Logging.LogLevel, message, _module, group, id,
                                filepath, line; kwargs...)
    @nospecialize
    maxlog = get(kwargs, :maxlog, nothing)
    if maxlog isa Core.BuiltinInts
        lock(l.lock)
        remaining = try
            l.limited[] = true
            r = get!(l.message_limits, id, Int(maxlog))
            l.message_limits[id] = r - 1
            r
        finally
            unlock(l.lock)
        end
        remaining > 0 || return nothing
    end
    if level >= l.min_level && ENABLED[]
        record_log(level, message, _module, filepath, line, kwargs)
    end
    fwd = l.forward
    if fwd !== nothing && level >= Logging.min_enabled_level(fwd) &&
       Logging.shouldlog(fwd, level, _module, group, id)
        Logging.handle_message(fwd, level, message, _module, group, id, filepath, line; kwargs...)
    end
    return nothing
end

function log_value(k::Symbol, @nospecialize(v))
    if k === :exception
        if v isa Tuple && length(v) == 2 && v[1] isa Exception
            return sprint(showerror, v[1])
        elseif v isa Exception
            return sprint(showerror, v)
        end
    end
    return v
end

# Module names, computed once per module (string(m) costs a few hundred ns).
const MODULE_NAMES = IdDict{Module,String}()
const MODULE_NAMES_LOCK = Threads.SpinLock()
function module_name(m::Module)
    lock(MODULE_NAMES_LOCK)
    try
        return get!(() -> string(m), MODULE_NAMES, m)
    finally
        unlock(MODULE_NAMES_LOCK)
    end
end
module_name(@nospecialize(m)) = string(m)

const KEY_NAMESPACE = "code.namespace"
const KEY_FILEPATH = "code.filepath"
const KEY_LINENO = "code.lineno"

function record_log(level::Logging.LogLevel, @nospecialize(message), @nospecialize(_module),
                    @nospecialize(filepath), @nospecialize(line), kwargs)
    c = gc_counters()   # first: what the program had allocated when it logged
    note_task()
    body = cstr(message isa String ? message : string(message))
    keep = String[]
    attrs = Vector{JagerAttr}(undef, length(kwargs) + 8)
    n = 0
    TRACK_GC[] && (n = put_gc_attrs!(attrs, n, c))
    for (k, v) in kwargs
        k === :maxlog && continue
        attrs[n += 1] = attr_of(symbol_cstr(k), log_value(k, v), keep)
    end
    _module === nothing ||
        (attrs[n += 1] = attr_of(pointer(KEY_NAMESPACE), module_name(_module), keep))
    filepath === nothing ||
        (attrs[n += 1] = attr_of(pointer(KEY_FILEPATH), filepath isa String ? filepath : string(filepath), keep))
    line === nothing ||
        (attrs[n += 1] = attr_of(pointer(KEY_LINENO), line isa Integer ? Int64(line) : string(line), keep))
    # last: an interned string (kind 5), which a 1.0 reader stops at (docs/file-format.md)
    if METHOD_LOGS[]
        m = interned_method()
        m === nothing || (attrs[n += 1] = attr_of(pointer(KEY_METHOD), m, keep))
    end
    sev = Int32(severity(level))
    GC.@preserve body keep attrs KEY_NAMESPACE KEY_FILEPATH KEY_LINENO KEY_GC_BYTES KEY_GC_PAUSES KEY_GC_TIME KEY_GC_FULL KEY_METHOD begin
        ccall((:jager_log, LIB), Cvoid, (Cint, Ptr{UInt8}, Ptr{JagerAttr}, Csize_t), sev, pointer(body), attrs, n)
    end
    return nothing
end
