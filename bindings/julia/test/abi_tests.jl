# The Julia mirrors of jager.h's structs have the C sizes and offsets. The reference is
# printed by tests/julia/abi_sizes.c (ctest passes its path in JAGER_ABI_SIZES); without
# it, the program is compiled here with cc, else the LP64 values below are used (the
# same output, recorded from that program on x86-64).
const ABI_LP64 = """
jager_config 80 struct_size:0 disable:4 output:8 plugins:16 plugin_path:24 filter:32 ring_bytes:40 ring_mode:48 flush_interval_ms:52 sample_mode:56 sample_n:60 sample_interval_ns:64 max_threads:72 quiet:76
jager_span 16 start_ns:0 site:8 id:12
jager_attr 24 key:0 kind:8 reserved:12 value:16
jager_site_stat 1632 struct_size:0 site:4 calls:8 total_ns:16 min_ns:24 max_ns:32 bytes:40 errors:48 p50_ns:56 p90_ns:64 p99_ns:72 hist:80 thinned:1616 dropped:1624
jager_stat 160 struct_size:0 threads:4 events_emitted:8 events_recorded:16 events_dropped:24 dropped:32 events_written:96 spans_total:104 span_cost_ns_x1000:112 ring_bytes:120 events_pending:128 drop_reports:136 spans_cross_thread:144 sinks:152 reserved0:156
jager_trace_context 32 trace_id:0 span_id:16 flags:24 version:25 reserved:26
jager_event 32 rec:0 thread:8 type:12 reserved:14 time_ns:16 end_ns:24
jager_attr_view 48 key:0 key_len:8 kind:12 i64:16 f64:24 str:32 str_len:40
jager_frame 24 func:0 file:8 line:16 inline_depth:20
jager_reader_info 80 struct_size:0 clean_end:40
jager_rec_span 40 start_ns:8 end_ns:16 span_id:24 parent_id:28 bytes:32
jager_rec_log 56 time_ns:8 span_id:16 site:20 trace_id:24 ctx_span_id:40 body_len:48 nattrs:52
jager_rec_span_attr 16 span_id:8 nattrs:12
jager_rec_span_error 24 time_ns:8 span_id:16 msg_len:20
"""

function abi_reference()
    exe = get(ENV, "JAGER_ABI_SIZES", "")
    isempty(exe) || return read(`$exe`, String), "tests/julia/abi_sizes.c ($exe)"
    cc = Sys.which("cc")
    repo = normpath(joinpath(PKGDIR, "..", ".."))
    src = joinpath(repo, "tests", "julia", "abi_sizes.c")
    if cc !== nothing && isfile(src)
        out = joinpath(TMP, "abi_sizes")
        run(`$cc -I$(joinpath(repo, "sdk", "include")) $src -o $out`)
        return read(`$out`, String), "abi_sizes.c compiled with $cc"
    end
    return ABI_LP64, "recorded LP64 values"
end

function parse_abi(text)
    d = Dict{String,Tuple{Int,Dict{Symbol,Int}}}()
    for l in split(strip(text), '\n')
        w = split(l)
        d[w[1]] = (parse(Int, w[2]), Dict(Symbol(split(f, ':')[1]) => parse(Int, split(f, ':')[2]) for f in w[3:end]))
    end
    return d
end

@testset "ABI mirrors match C ($(abi_reference()[2]))" begin
    ref = parse_abi(abi_reference()[1])
    mirrors = Dict("jager_config" => Jager.JagerConfig, "jager_span" => Jager.JagerSpan,
                   "jager_attr" => Jager.JagerAttr, "jager_site_stat" => Jager.JagerSiteStat,
                   "jager_stat" => Jager.JagerStat, "jager_trace_context" => Jager.TraceContext,
                   "jager_event" => JgrReader.Event, "jager_attr_view" => JgrReader.AttrView,
                   "jager_frame" => JgrReader.Frame)
    for (cname, T) in mirrors
        size, offs = ref[cname]
        @test (cname, sizeof(T)) == (cname, size)
        names = fieldnames(T)
        @test Set(names) == Set(keys(offs))
        for (i, n) in enumerate(names)
            @test (cname, n, Int(fieldoffset(T, i))) == (cname, n, offs[n])
        end
    end
    # Records and the reader info decoded by offset in reader.jl.
    for (cname, nt) in (("jager_rec_span", JgrReader.REC_SPAN), ("jager_rec_log", JgrReader.REC_LOG),
                        ("jager_rec_span_attr", JgrReader.REC_SPAN_ATTR), ("jager_rec_span_error", JgrReader.REC_SPAN_ERROR))
        size, offs = ref[cname]
        for (k, v) in pairs(nt)
            k === :size ? (@test (cname, v) == (cname, size)) : (@test (cname, k, v) == (cname, k, offs[k]))
        end
    end
    @test ref["jager_reader_info"][1] == JgrReader.INFO_SIZE
    @test ref["jager_reader_info"][2][:clean_end] == JgrReader.INFO_CLEAN_END
    @test Jager.HIST_BUCKETS == (ref["jager_site_stat"][2][:thinned] - ref["jager_site_stat"][2][:hist]) ÷ 8
end
