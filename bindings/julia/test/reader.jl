# reader.jl — the one .jgr reader of the Julia tests (runtests.jl, dispatch_tests.jl,
# gc_tests.jl, tests/sampler/sampler_julia.jl and the benchmarks: bench/gc/gc_bench.jl), over libjager's jager_reader_* functions
# (sdk/include/jager_reader.h). It returns plain Julia values, so the tests assert on what
# the file holds, not on what the binding believes it wrote: the core's events, the site
# table and its exact aggregates, the metadata, plugin events decoded by their
# self-described schema, the stacks those name (symbolized), and diagnostics.
#
# It does not need the binding: libjager is reached by its SONAME, so a test process that
# dlopened the library itself (gc_tests.jl's zero-code case) reads files too. The mirrors
# of the C structs come from the binding's abi.jl (abi_tests.jl checks them against C).
module JgrReader

const LIB = "libjager.so.1"
include(joinpath(@__DIR__, "..", "src", "abi.jl"))

# jager_event (32 bytes; abi_tests.jl checks the size)
const Event = JagerEvent

# jager_attr_view (48 bytes)
struct AttrView
    key::Ptr{UInt8}
    key_len::UInt32
    kind::UInt32
    i64::Int64
    f64::Float64
    str::Ptr{UInt8}
    str_len::UInt32
end

# jager_frame (24 bytes)
struct Frame
    func::Cstring
    file::Cstring
    line::UInt32
    inline_depth::UInt32
end

# Offsets of the record layouts of jager_plugin.h decoded below (abi_tests.jl compares
# them with offsetof from C) and of jager_reader_info.
const REC_SPAN = (start_ns = 8, end_ns = 16, span_id = 24, parent_id = 28, bytes = 32)
const REC_LOG = (time_ns = 8, span_id = 16, site = 20, trace_id = 24, ctx_span_id = 40, body_len = 48, nattrs = 52)
const REC_SPAN_ATTR = (span_id = 8, nattrs = 12, size = 16)
const REC_SPAN_ERROR = (time_ns = 8, span_id = 16, msg_len = 20, size = 24)
const INFO_SIZE, INFO_CLEAN_END = 80, 40

const EV_SPAN, EV_LOG, EV_DIAG, EV_SPAN_ATTR, EV_SPAN_ERROR = 1, 2, 6, 7, 8
const EV_MARK, EV_TASK = 4, 10
const FIRST_PLUGIN_TYPE = 256
# jager_field_kind values decoded (others stay raw UInt64: U64, times, durations, bytes,
# stack and site ids)
const FIELD_I64, FIELD_F64, FIELD_STRING, FIELD_STACK, FIELD_BOOL = 2, 3, 4, 5, 10

const FrameNT = NamedTuple{(:func, :file, :line, :depth),Tuple{String,String,Int,Int}}
const PluginEvent = NamedTuple{(:type, :time_ns, :thread, :fields),Tuple{String,UInt64,UInt32,Dict{String,Any}}}

ld(::Type{T}, p::Ptr{UInt8}, off::Integer) where {T} = unsafe_load(Ptr{T}(p + off))

# An interned string (kind 5, JAGER_ATTR_STR_ID) is read as its text from r's string table.
function decode_attrs(cur::Ptr{UInt8}, stop::Ptr{UInt8}, r::Ptr{Cvoid})
    out = Dict{String,Any}()
    c = Ref(cur)
    v = Ref{AttrView}()
    while true
        rc = ccall((:jager_attr_next, LIB), Cint, (Ref{Ptr{UInt8}}, Ptr{UInt8}, Ref{AttrView}), c, stop, v)
        rc == 0 && break
        rc < 0 && error("malformed attribute list")
        a = v[]
        key = unsafe_string(a.key, a.key_len)
        out[key] = a.kind == 1 ? a.i64 : a.kind == 2 ? a.f64 : a.kind == 4 ? (a.i64 != 0) :
                   a.kind == 5 ? interned_text(r, a.i64, key) : unsafe_string(a.str, a.str_len)
    end
    return out
end

# Every interned string id decoded, by attribute key (the tests check that a repeated value
# is one string-table entry).
const INTERNED = Dict{String,Set{Int64}}()
function interned_text(r::Ptr{Cvoid}, id::Int64, key::String = "")
    push!(get!(Set{Int64}, INTERNED, key), id)
    p = ccall((:jager_reader_string, LIB), Cstring, (Ptr{Cvoid}, UInt32), r, UInt32(id))
    return p == C_NULL ? (string_id = id,) : unsafe_string(p)
end

reader_error(r) = unsafe_string(ccall((:jager_reader_error, LIB), Cstring, (Ptr{Cvoid},), r))

# jager_type_desc: name at 8, nfields at 16, fields at 24; jager_field_desc: 16 bytes
# (name pointer, u32 kind).
function describe(r::Ptr{Cvoid}, type::UInt16)
    d = ccall((:jager_reader_type, LIB), Ptr{UInt8}, (Ptr{Cvoid}, UInt16), r, type)
    d == C_NULL && error("event type $type has no description")
    name = unsafe_string(ld(Cstring, d, 8))
    n = Int(ld(UInt32, d, 16))
    fp = ld(Ptr{UInt8}, d, 24)
    return name, [(unsafe_string(ld(Cstring, fp, 16i)), ld(UInt32, fp, 16i + 8)) for i in 0:n-1]
end

function decode_field(r, kind::UInt32, raw::UInt64)
    if kind == FIELD_STRING
        raw == 0 && return ""
        p = ccall((:jager_reader_string, LIB), Cstring, (Ptr{Cvoid}, UInt32), r, UInt32(raw))
        return p == C_NULL ? "" : unsafe_string(p)
    end
    kind == FIELD_I64 && return reinterpret(Int64, raw)
    kind == FIELD_F64 && return reinterpret(Float64, raw)
    kind == FIELD_BOOL && return raw != 0
    return raw
end

function symbolize(r, ip::UInt64, frames::Vector{Frame})
    n = ccall((:jager_reader_symbolize, LIB), UInt32, (Ptr{Cvoid}, UInt64, Ptr{Frame}, UInt32),
              r, ip, frames, length(frames))
    return FrameNT[(func = unsafe_string(fr.func), file = unsafe_string(fr.file), line = Int(fr.line),
                    depth = Int(fr.inline_depth)) for fr in frames[1:n]]
end

"Everything the tests look at in one recording."
struct Recording
    events::Vector{NamedTuple}         # core events (spans, logs, span attributes and errors)
    plugin::Vector{PluginEvent}        # plugin events: (type = "gc.pause", time_ns, thread, fields)
    sites::Dict{UInt32,NamedTuple{(:name, :file, :line),Tuple{String,String,Int}}}
    meta::Dict{String,String}
    stats::Dict{UInt32,JagerSiteStat}
    symbols::Dict{UInt64,Vector{FrameNT}}   # the `ips` asked for => their frames
    stacks::Dict{UInt64,Vector{NamedTuple{(:ip, :frames),Tuple{UInt64,Vector{FrameNT}}}}} # stack fields' ids
    diags::Vector{Tuple{String,String}}     # (source, text)
    clean_end::Bool
end

"""
    read(path; ips = UInt64[]) -> Recording

Read every event of `path`; `ips` are addresses whose symbolized frames to collect.
The stacks named by plugin events' stack fields are read and symbolized too.
"""
function read(path::AbstractString; ips = UInt64[])
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    st = ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp)
    st == 0 || error("jager_reader_open($path): ", unsafe_string(ccall((:jager_last_error, LIB), Cstring, ())))
    r = rp[]
    try
        st = ccall((:jager_reader_load_tables, LIB), Int32, (Ptr{Cvoid},), r)
        st == 0 || error("load_tables: ", unsafe_string(ccall((:jager_reader_error, LIB), Cstring, (Ptr{Cvoid},), r)))
        events = NamedTuple[]
        plugin = PluginEvent[]
        diags = Tuple{String,String}[]
        schema = Dict{UInt16,Tuple{String,Vector{Tuple{String,UInt32}}}}()
        stackids = Set{UInt64}()
        ev = Ref{Event}()
        task = Dict{UInt32,UInt64}()   # thread → its current task (task records)
        while true
            rc = ccall((:jager_reader_next, LIB), Cint, (Ptr{Cvoid}, Ref{Event}), r, ev)
            rc == 0 && break
            rc < 0 && error("reader: ", unsafe_string(ccall((:jager_reader_error, LIB), Cstring, (Ptr{Cvoid},), r)))
            e = ev[]
            p = e.rec
            words = ld(UInt16, p, 2)
            aux = ld(UInt32, p, 4)
            stop = p + 8 * Int(words)
            if e.type == EV_SPAN
                o = REC_SPAN
                push!(events, (kind = :span, thread = e.thread, task = get(task, e.thread, UInt64(0)), site = aux, start_ns = ld(UInt64, p, o.start_ns),
                               end_ns = ld(UInt64, p, o.end_ns), span_id = ld(UInt32, p, o.span_id),
                               parent_id = ld(UInt32, p, o.parent_id), bytes = ld(UInt64, p, o.bytes)))
            elseif e.type == EV_LOG
                body = Ref{Ptr{UInt8}}(C_NULL); blen = Ref{UInt32}(0)
                a0 = Ref{Ptr{UInt8}}(C_NULL); a1 = Ref{Ptr{UInt8}}(C_NULL)
                st = ccall((:jager_log_body, LIB), Int32,
                           (Ptr{UInt8}, Ref{Ptr{UInt8}}, Ref{UInt32}, Ref{Ptr{UInt8}}, Ref{Ptr{UInt8}}),
                           p, body, blen, a0, a1)
                st == 0 || error("jager_log_body failed")
                o = REC_LOG
                push!(events, (kind = :log, thread = e.thread, task = get(task, e.thread, UInt64(0)), time_ns = e.time_ns,
                               severity = Int(aux & 0xff), truncated = (aux & 0x100) != 0,
                               span_id = ld(UInt32, p, o.span_id), site = ld(UInt32, p, o.site),
                               trace_id = [ld(UInt8, p, o.trace_id + i) for i in 0:15],
                               ctx_span_id = [ld(UInt8, p, o.ctx_span_id + i) for i in 0:7],
                               body = unsafe_string(body[], blen[]), attrs = decode_attrs(a0[], a1[], r)))
            elseif e.type == EV_TASK
                task[e.thread] = ld(UInt64, p, 16)
                push!(events, (kind = :task, thread = e.thread, task = ld(UInt64, p, 16)))
            elseif e.type == EV_MARK
                nm = ccall((:jager_reader_string, LIB), Cstring, (Ptr{Cvoid}, UInt32), r, aux)
                push!(events, (kind = :mark, thread = e.thread, task = get(task, e.thread, UInt64(0)),
                               time_ns = e.time_ns, name = nm == C_NULL ? "" : unsafe_string(nm),
                               attrs = 8 * Int(words) >= 24 ? decode_attrs(p + 24, stop, r) : Dict{String,Any}()))
            elseif e.type == EV_SPAN_ATTR
                push!(events, (kind = :span_attr, thread = e.thread, site = aux,
                               span_id = ld(UInt32, p, REC_SPAN_ATTR.span_id),
                               attrs = decode_attrs(p + REC_SPAN_ATTR.size, stop, r)))
            elseif e.type == EV_SPAN_ERROR
                o = REC_SPAN_ERROR
                len = ld(UInt32, p, o.msg_len)
                push!(events, (kind = :span_error, thread = e.thread, site = aux, span_id = ld(UInt32, p, o.span_id),
                               message = unsafe_string(p + o.size, min(len, UInt32(stop - (p + o.size))))))
            elseif e.type == EV_DIAG # time, source string id, text_len, text
                src = ccall((:jager_reader_string, LIB), Cstring, (Ptr{Cvoid}, UInt32), r, ld(UInt32, p, 16))
                push!(diags, (src == C_NULL ? "" : unsafe_string(src), unsafe_string(p + 24, ld(UInt32, p, 20))))
            elseif e.type >= FIRST_PLUGIN_TYPE
                name, fields = get!(() -> describe(r, e.type), schema, e.type)
                vals = Dict{String,Any}()
                for (i, (fname, kind)) in enumerate(fields)
                    off = 16 + 8 * (i - 1)
                    off + 8 <= 8 * Int(words) || break # a record from an older plugin: fewer fields
                    raw = ld(UInt64, p, off)
                    vals[fname] = decode_field(r, kind, raw)
                    kind == FIELD_STACK && raw != 0 && push!(stackids, raw)
                end
                push!(plugin, (type = name, time_ns = ld(UInt64, p, 8), thread = e.thread, fields = vals))
            else
                push!(events, (kind = :other, type = e.type, thread = e.thread))
            end
        end
        sites = Dict{UInt32,NamedTuple{(:name, :file, :line),Tuple{String,String,Int}}}()
        stats = Dict{UInt32,JagerSiteStat}()
        nsites = ccall((:jager_reader_site_count, LIB), UInt32, (Ptr{Cvoid},), r)
        for id in UInt32(1):nsites
            n = Ref{Cstring}(C_NULL); f = Ref{Cstring}(C_NULL); l = Ref{UInt32}(0)
            st = ccall((:jager_reader_site, LIB), Int32, (Ptr{Cvoid}, UInt32, Ref{Cstring}, Ref{Cstring}, Ref{UInt32}),
                       r, id, n, f, l)
            st == 0 || continue
            sites[id] = (name = unsafe_string(n[]), file = f[] == C_NULL ? "" : unsafe_string(f[]), line = Int(l[]))
            s = sized(JagerSiteStat)
            ccall((:jager_reader_site_stats, LIB), Int32, (Ptr{Cvoid}, UInt32, Ptr{JagerSiteStat}), r, id, s) == 0 &&
                (stats[id] = s[])
        end
        meta = Dict{String,String}()
        nm = ccall((:jager_reader_meta_count, LIB), Csize_t, (Ptr{Cvoid},), r)
        for i in 0:Int(nm)-1
            k = Ref{Cstring}(C_NULL); v = Ref{Cstring}(C_NULL)
            ccall((:jager_reader_meta_at, LIB), Int32, (Ptr{Cvoid}, Csize_t, Ref{Cstring}, Ref{Cstring}), r, i, k, v) == 0 &&
                (meta[unsafe_string(k[])] = unsafe_string(v[]))
        end
        frames = Vector{Frame}(undef, 32)
        symbols = Dict{UInt64,Vector{FrameNT}}(UInt64(ip) => symbolize(r, UInt64(ip), frames) for ip in ips)
        stacks = Dict{UInt64,Vector{NamedTuple{(:ip, :frames),Tuple{UInt64,Vector{FrameNT}}}}}()
        for id in stackids
            sp = Ref{Ptr{UInt64}}(C_NULL)
            n = Ref{UInt32}(0)
            st = ccall((:jager_reader_stack, LIB), Int32, (Ptr{Cvoid}, UInt64, Ref{Ptr{UInt64}}, Ref{UInt32}), r, id, sp, n)
            st == 0 || error("stack $id missing from the file")
            stacks[id] = [(ip = ip, frames = symbolize(r, ip, frames)) for ip in (unsafe_load(sp[], k) for k in 1:n[])]
        end
        # jager_reader_info: 80 bytes, clean_end at offset 40 (checked by abi_tests.jl)
        info = zeros(UInt8, INFO_SIZE)
        unsafe_store!(Ptr{UInt32}(pointer(info)), UInt32(INFO_SIZE))
        ccall((:jager_reader_get_info, LIB), Int32, (Ptr{Cvoid}, Ptr{UInt8}), r, info)
        clean = unsafe_load(Ptr{UInt32}(pointer(info) + INFO_CLEAN_END)) == 1
        return Recording(events, plugin, sites, meta, stats, symbols, stacks, diags, clean)
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
end

"The ids of the sites named `name`."
site_ids(rec::Recording, name::AbstractString) = sort!([id for (id, s) in rec.sites if s.name == name])

"The one site named `name` (the test fails if there are several or none)."
function site_id(rec::Recording, name::AbstractString)
    ids = site_ids(rec, name)
    length(ids) == 1 || error("expected one site named $name, found $(length(ids))")
    return ids[1]
end

spans(rec::Recording) = [e for e in rec.events if e.kind === :span]
spans(rec::Recording, site::Integer) = [e for e in rec.events if e.kind === :span && e.site == site]
logs(rec::Recording) = [e for e in rec.events if e.kind === :log]

"The plugin events of `rec` (or of the file `path`) whose type name starts with `prefix`."
plugin_events(rec::Recording; prefix::AbstractString = "dispatch.") = [e for e in rec.plugin if startswith(e.type, prefix)]
plugin_events(path::AbstractString; prefix::AbstractString = "dispatch.") = plugin_events(read(path); prefix = prefix)

"The events of `type` (e.g. \"dispatch.compile\")."
of_type(evs, type::AbstractString) = [e for e in evs if e.type == type]

end # module
