# context.jl — W3C trace context helpers over the core's parser, formatter and the
# calling thread's current context. The core keeps the context per OS thread; on Julia
# versions whose tasks migrate between threads, set and use it without yielding between.

"""
    Jager.parse_traceparent(s) -> TraceContext

Parse a `traceparent` header value strictly (W3C Trace Context level 1). Throws an
`ArgumentError` naming the value when it is malformed.
"""
function parse_traceparent(s::AbstractString)
    require_lib()
    str = String(s)
    r = Ref(TraceContext())
    st = ccall((:jager_traceparent_parse, LIB), Int32, (Ptr{UInt8}, Csize_t, Ref{TraceContext}),
               str, sizeof(str), r)
    st == OK || throw(ArgumentError("Jager: invalid traceparent $(repr(str)): expected " *
                                    "\"00-<32 hex trace id>-<16 hex span id>-<2 hex flags>\", lowercase, " *
                                    "non-zero ids ($(status_message(st)))"))
    return r[]
end

"""
    Jager.format_traceparent(ctx::TraceContext) -> String

`"00-<trace id>-<span id>-<flags>"`. Throws an `ArgumentError` for an invalid context.
"""
function format_traceparent(ctx::TraceContext)
    require_lib()
    buf = Vector{UInt8}(undef, TRACEPARENT_LEN + 1)
    st = ccall((:jager_traceparent_format, LIB), Int32, (Ref{TraceContext}, Ptr{UInt8}, Csize_t),
               ctx, buf, length(buf))
    st == OK || throw(ArgumentError("Jager: cannot format an invalid trace context ($(status_message(st)))"))
    return String(buf[1:TRACEPARENT_LEN])
end

"A new trace context: random trace and span ids, sampled."
function new_trace_context()
    require_lib()
    r = Ref(TraceContext())
    st = ccall((:jager_trace_context_new, LIB), Int32, (Ref{TraceContext},), r)
    st == OK || jager_throw(st, "Jager.new_trace_context")
    return r[]
end

"The calling thread's current trace context, or `nothing`."
function current_context()
    require_lib()
    r = Ref(TraceContext())
    st = ccall((:jager_context_current, LIB), Int32, (Ref{TraceContext},), r)
    return st == OK ? r[] : nothing
end

"""
Set (or with `nothing` clear) the current trace context: the calling thread's, and — while
recording with task ids — the current task's own, which the thread takes again whenever
the task runs (so interleaved tasks keep their own traces).
"""
function set_context!(ctx::Union{Nothing,TraceContext})
    require_lib()
    own_context!(ctx)
    if ctx === nothing
        ccall((:jager_context_set, LIB), Cvoid, (Ptr{TraceContext},), C_NULL)
    else
        ccall((:jager_context_set, LIB), Cvoid, (Ref{TraceContext},), ctx)
    end
    return nothing
end

"""
    Jager.traceparent() -> String or nothing

The calling thread's current context as a `traceparent` header value (to pass to a
subprocess, an HTTP request, another MPI rank), or `nothing` when none is set.
"""
function traceparent()
    ctx = current_context()
    return ctx === nothing ? nothing : format_traceparent(ctx)
end

"""
    Jager.with_traceparent(f, s)

Run `f()` with the trace context parsed from the `traceparent` value `s` as the current
context (so spans and logs inside belong to that trace), then restore the previous one.
An invalid `s` throws an `ArgumentError` before `f` runs.
"""
function with_traceparent(f, s::AbstractString)
    ctx = parse_traceparent(s)
    prev = current_context()
    set_context!(ctx)
    try
        return f()
    finally
        set_context!(prev)
    end
end

# ---- propagation over a key/value carrier -------------------------------------------------

const TRACEPARENT = "traceparent"

# The carrier's value of `traceparent`, matched without regard to case (HTTP header names).
function carrier_get(headers::AbstractDict)
    v = get(headers, TRACEPARENT, nothing)
    v === nothing || return v
    for (k, x) in headers
        k isa AbstractString && lowercase(k) == TRACEPARENT && return x
    end
    return nothing
end
function carrier_get(headers::AbstractVector)
    for p in headers
        p isa Pair && p.first isa AbstractString && lowercase(p.first) == TRACEPARENT && return p.second
    end
    return nothing
end

carrier_set!(headers::AbstractDict, v::String) = (headers[TRACEPARENT] = v; nothing)
function carrier_set!(headers::AbstractVector, v::String)
    i = findfirst(p -> p isa Pair && p.first isa AbstractString && lowercase(p.first) == TRACEPARENT, headers)
    i === nothing ? push!(headers, TRACEPARENT => v) : (headers[i] = TRACEPARENT => v)
    return nothing
end

"""
    Jager.inject(headers) -> String or nothing

Write the current trace context into `headers` as `"traceparent" => "00-…"` and return the
value (a Dict-like carrier, or a vector of `name => value` pairs such as HTTP headers).
Where no context is current, one is started first (a new trace, made current on this
thread), so that the receiver's spans and the sender's belong to one trace. `nothing` while
not recording or without libjager (then `headers` is left as it is).
"""
function inject(headers)
    ENABLED[] || return nothing
    ctx = current_context()
    if ctx === nothing
        ctx = new_trace_context()
        set_context!(ctx)
    end
    v = format_traceparent(ctx)
    carrier_set!(headers, v)
    return v
end

"""
    Jager.extract(headers) -> TraceContext or nothing

Read `traceparent` from `headers` (case-insensitive name) and make it the current trace
context of this thread: the spans and logs that follow belong to the sender's trace (the
otel plugin exports them as children of the sender's span). Returns the context, or
`nothing` when the carrier has none, its value is malformed (the current context is then
left unchanged) or nothing is recorded.
"""
function extract(headers)
    ENABLED[] || return nothing
    v = carrier_get(headers)
    v isa AbstractString || return nothing
    r = Ref(TraceContext())
    s = String(v)
    st = ccall((:jager_traceparent_parse, LIB), Int32, (Ptr{UInt8}, Csize_t, Ref{TraceContext}), s, sizeof(s), r)
    st == OK || return nothing
    set_context!(r[])
    return r[]
end
