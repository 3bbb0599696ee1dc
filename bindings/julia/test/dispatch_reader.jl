# dispatch_reader.jl — plugin events of a .jgr file, decoded by their self-described
# schema through libjager's reader (jager_reader_type): each event becomes
# (type = "dispatch.signature", time_ns, thread, fields = Dict(field name => value)),
# STRING fields resolved to their text. Used by dispatch_tests.jl and the benchmark.
module DispatchReader

import ..Jager: LIB

const FIRST_PLUGIN_TYPE = 256
const FIELD_I64, FIELD_F64, FIELD_STRING, FIELD_BOOL = 2, 3, 4, 10

include("reader_abi.jl")

reader_error(r) = unsafe_string(ccall((:jager_reader_error, LIB), Cstring, (Ptr{Cvoid},), r))

# jager_type_desc: name at 8, nfields at 16, fields at 24; jager_field_desc: 16 bytes
# (name pointer, u32 kind).
function describe(r::Ptr{Cvoid}, type::UInt16)
    d = ccall((:jager_reader_type, LIB), Ptr{UInt8}, (Ptr{Cvoid}, UInt16), r, type)
    d == C_NULL && error("type $type has no description")
    name = unsafe_string(unsafe_load(Ptr{Cstring}(d + 8)))
    n = Int(unsafe_load(Ptr{UInt32}(d + 16)))
    fp = unsafe_load(Ptr{Ptr{UInt8}}(d + 24))
    fields = [(unsafe_string(unsafe_load(Ptr{Cstring}(fp + 16i))), unsafe_load(Ptr{UInt32}(fp + 16i + 8)))
              for i in 0:n-1]
    return name, fields
end

function decode(r, kind::UInt32, raw::UInt64)
    if kind == FIELD_STRING
        raw == 0 && return ""
        p = ccall((:jager_reader_string, LIB), Cstring, (Ptr{Cvoid}, UInt32), r, UInt32(raw))
        return p == C_NULL ? "" : unsafe_string(p)
    elseif kind == FIELD_I64
        return reinterpret(Int64, raw)
    elseif kind == FIELD_F64
        return reinterpret(Float64, raw)
    elseif kind == FIELD_BOOL
        return raw != 0
    end
    return raw
end

"""
    plugin_events(path; prefix = "dispatch.") -> Vector{NamedTuple}

Every plugin event of `path` whose type name starts with `prefix`, in file order.
"""
function plugin_events(path::AbstractString; prefix::AbstractString = "dispatch.")
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    st = ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp)
    st == 0 || error("jager_reader_open($path): ", unsafe_string(ccall((:jager_last_error, LIB), Cstring, ())))
    r = rp[]
    out = NamedTuple{(:type, :time_ns, :thread, :fields),Tuple{String,UInt64,UInt32,Dict{String,Any}}}[]
    try
        schema = Dict{UInt16,Tuple{String,Vector{Tuple{String,UInt32}}}}()
        ev = Ref{Event}()
        while true
            rc = ccall((:jager_reader_next, LIB), Cint, (Ptr{Cvoid}, Ref{Event}), r, ev)
            rc == 0 && break
            rc < 0 && error("reader: ", reader_error(r))
            e = ev[]
            e.type >= FIRST_PLUGIN_TYPE || continue
            name, fields = get!(() -> describe(r, e.type), schema, e.type)
            startswith(name, prefix) || continue
            words = Int(unsafe_load(Ptr{UInt16}(e.rec + 2)))
            vals = Dict{String,Any}()
            for (i, (fname, kind)) in enumerate(fields)
                off = 16 + 8 * (i - 1)
                off + 8 <= 8 * words || break # a record from an older plugin: fewer fields
                vals[fname] = decode(r, kind, unsafe_load(Ptr{UInt64}(e.rec + off)))
            end
            push!(out, (type = name, time_ns = unsafe_load(Ptr{UInt64}(e.rec + 8)), thread = e.thread, fields = vals))
        end
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
    return out
end

"The events of `type` (e.g. \"dispatch.compile\")."
of_type(evs, type::AbstractString) = [e for e in evs if e.type == type]

end # module
