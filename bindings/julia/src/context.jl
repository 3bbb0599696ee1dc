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

"Set (or with `nothing` clear) the calling thread's current trace context."
function set_context!(ctx::Union{Nothing,TraceContext})
    require_lib()
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
