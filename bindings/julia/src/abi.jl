# abi.jl — Julia mirrors of the C structs of jager.h, in one place.
#
# Each mirror has exactly the C layout on x86-64/aarch64 (LP64): same field order, same
# widths, natural alignment. test/abi_tests.jl compares sizeof and every field offset
# with values printed by a C program compiled against the headers (tests/julia/abi_sizes.c).
# The C structs only ever grow at the end, and their first field says the caller's size,
# so these mirrors stay valid against newer libraries.

"`jager_config` (80 bytes). Mutable so that `Ref`-free ccalls can fill it in place."
mutable struct JagerConfig
    struct_size::UInt32
    disable::UInt32
    output::Ptr{UInt8}
    plugins::Ptr{UInt8}
    plugin_path::Ptr{UInt8}
    filter::Ptr{UInt8}
    ring_bytes::UInt64
    ring_mode::UInt32
    flush_interval_ms::UInt32
    sample_mode::UInt32
    sample_n::UInt32
    sample_interval_ns::UInt64
    max_threads::UInt32
    quiet::UInt32
end
JagerConfig() = JagerConfig(0, 0, C_NULL, C_NULL, C_NULL, C_NULL, 0, 0, 0, 0, 0, 0, 0, 0)

"`jager_span`: an open span, returned by value (two registers)."
struct JagerSpan
    start_ns::UInt64
    site::UInt32
    id::UInt32
end
"An inert span (site 0): ending it is a no-op in the core."
const INERT_SPAN = JagerSpan(0, 0, 0)

"`jager_attr` (24 bytes): the union is carried as its 8 raw bytes."
struct JagerAttr
    key::Ptr{UInt8}
    kind::UInt32
    reserved::UInt32
    value::UInt64
end

const ATTR_I64 = UInt32(1)
const ATTR_F64 = UInt32(2)
const ATTR_STR = UInt32(3)
const ATTR_BOOL = UInt32(4)
const ATTR_STR_ID = UInt32(5)   # jager_string_intern()'s id in the value (core 1.1)

"Number of buckets of `jager_site_stat.hist` (JAGER_HIST_BUCKETS)."
const HIST_BUCKETS = 192

"`jager_site_stat` (1632 bytes; 1616 in 1.0, before `thinned` and `dropped`)."
struct JagerSiteStat
    struct_size::UInt32
    site::UInt32
    calls::UInt64
    total_ns::UInt64
    min_ns::UInt64
    max_ns::UInt64
    bytes::UInt64
    errors::UInt64
    p50_ns::UInt64
    p90_ns::UInt64
    p99_ns::UInt64
    hist::NTuple{HIST_BUCKETS,UInt64}
    thinned::UInt64
    dropped::UInt64
end

"`jager_event` (32 bytes): one event as libjager's reader returns it."
struct JagerEvent
    rec::Ptr{UInt8}
    thread::UInt32
    type::UInt16
    reserved::UInt16
    time_ns::UInt64
    end_ns::UInt64
end

"`jager_stat` (160 bytes): the core's counters (docs/configuration.md, \"Accounting\")."
struct JagerStat
    struct_size::UInt32
    threads::UInt32
    events_emitted::UInt64
    events_recorded::UInt64
    events_dropped::UInt64
    dropped::NTuple{8,UInt64}
    events_written::UInt64
    spans_total::UInt64
    span_cost_ns_x1000::UInt64
    ring_bytes::UInt64
    events_pending::UInt64
    drop_reports::UInt64
    spans_cross_thread::UInt64
    sinks::UInt32
    reserved0::UInt32
end

"`jager_trace_context` (32 bytes): a W3C trace context."
struct TraceContext
    trace_id::NTuple{16,UInt8}
    span_id::NTuple{8,UInt8}
    flags::UInt8
    version::UInt8
    reserved::NTuple{6,UInt8}
end
TraceContext() = TraceContext(ntuple(_ -> 0x00, 16), ntuple(_ -> 0x00, 8), 0x00, 0x00, ntuple(_ -> 0x00, 6))

"Length of a version-00 traceparent (JAGER_TRACEPARENT_LEN)."
const TRACEPARENT_LEN = 55

# A zero-filled instance of an isbits mirror whose first field is struct_size, ready to
# be passed by Ref to a function that fills it.
function sized(::Type{T}) where {T}
    r = Ref{T}()
    GC.@preserve r begin
        p = Ptr{UInt8}(Base.unsafe_convert(Ptr{T}, r))
        ccall(:memset, Ptr{Cvoid}, (Ptr{UInt8}, Cint, Csize_t), p, 0, sizeof(T))
        unsafe_store!(Ptr{UInt32}(p), UInt32(sizeof(T)))
    end
    return r
end

# Status codes used here (jager.h's JAGER_STATUS_MAP).
const OK = Int32(0)
const E_STATE = Int32(-3)
const E_DISABLED = Int32(-8)
const E_NOTFOUND = Int32(-7)
const E_FORMAT = Int32(-5)
const E_IO = Int32(-4)

"The names of jager.h's status codes (JAGER_STATUS_MAP), by value."
const STATUS_NAMES = Dict{Int32,String}(0 => "JAGER_OK", -1 => "JAGER_E_INVALID", -2 => "JAGER_E_NOMEM",
    -3 => "JAGER_E_STATE", -4 => "JAGER_E_IO", -5 => "JAGER_E_FORMAT", -6 => "JAGER_E_ABI",
    -7 => "JAGER_E_NOTFOUND", -8 => "JAGER_E_DISABLED", -9 => "JAGER_E_FULL", -10 => "JAGER_E_TRUNCATED",
    -11 => "JAGER_E_CHECKSUM", -12 => "JAGER_E_UNSUPPORTED", -13 => "JAGER_E_PLUGIN", -14 => "JAGER_E_SUPPLY_CHAIN")

"""
    Jager.JagerError(status, message)

The exception every Jäger function throws when the core refuses or fails: `status` is the
core's `jager_status` (negative, e.g. `Jager.E_STATE`; see `Jager.STATUS_NAMES`) and
`message` says what was called and why (the core's `jager_strerror` and `jager_last_error`).
A missing libjager is `JagerError(E_NOTFOUND, …)`. Bad arguments given to the binding
itself are `ArgumentError`s.
"""
struct JagerError <: Exception
    status::Int32
    message::String
end
JagerError(status::Integer, message::AbstractString) = JagerError(Int32(status), String(message))
Base.showerror(io::IO, e::JagerError) =
    print(io, "JagerError(", get(STATUS_NAMES, e.status, string(e.status)), "): ", e.message)

"Throw `JagerError(status, string(what..., \": \", status_message(status)))`."
@noinline jager_throw(status::Integer, what...) = throw(JagerError(status, string(what..., ": ", status_message(status))))

"`jager_strerror(status)` plus the thread's `jager_last_error()` when it has one."
function status_message(status::Integer)
    require_lib()
    s = unsafe_string(ccall((:jager_strerror, LIB), Cstring, (Int32,), status))
    p = ccall((:jager_last_error, LIB), Cstring, ())
    last = p == C_NULL ? "" : unsafe_string(p)
    return isempty(last) ? s : string(s, ": ", last)
end
