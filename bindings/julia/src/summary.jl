# summary.jl — Jager.print_timings: a nested, TimerOutputs-style table of the recording.
#
# The tree is the recording's call paths: a site called from two places has two rows, and
# two sites with the same name are told apart by their location (file:line). Calls, total
# time and bytes of each path are the core's exact per-call-path aggregates, written into
# the .jgr file (PATHS blocks, format 1.1) and read back through libjager's reader: they
# count every span, whatever the ring dropped or JAGER_SAMPLE thinned. Span errors per path
# come from the file's events. A file without paths (older core) gives the tree of its span
# events instead, which lacks dropped spans (the table then says so). Without a file (no
# `output`) the table is flat, from the core's exact per-site aggregates.

function fmt_time(ns::Real)
    ns < 1e3 && return @sprintf("%.0fns", ns)
    ns < 1e6 && return @sprintf("%.1fμs", ns / 1e3)
    ns < 1e9 && return @sprintf("%.1fms", ns / 1e6)
    return @sprintf("%.2fs", ns / 1e9)
end

function fmt_bytes(b::Real)
    b < 1024 && return @sprintf("%.0fB", b)
    b < 1024^2 && return @sprintf("%.1fKiB", b / 1024)
    b < 1024^3 && return @sprintf("%.1fMiB", b / 1024^2)
    return @sprintf("%.2fGiB", b / 1024^3)
end

# The per-site rows: live aggregates while recording, else the snapshot the last stop() took.
function summary_rows()
    ENABLED[] && return live_site_rows(), Float64(time_ns() - SESSION.start_ns)
    return copy(SESSION.stats), Float64(SESSION.stop_ns - SESSION.start_ns)
end

"One call path of the timing tree: a site reached through its parents' sites."
mutable struct TimingNode
    site::UInt32
    name::String
    location::String          # "file.jl:42"
    calls::Int
    total_ns::UInt64
    bytes::UInt64
    errors::Int
    children::Vector{TimingNode}
end
TimingNode(site, name, location) = TimingNode(site, name, location, 0, 0, 0, 0, TimingNode[])

function child!(n::TimingNode, site::UInt32, sites)
    for c in n.children
        c.site == site && return c
    end
    name, loc = get(sites, site, ("site $site", ""))
    c = TimingNode(site, name, loc)
    push!(n.children, c)
    return c
end

site_location(file::AbstractString, line::Integer) = isempty(file) ? "" : string(basename(file), ":", line)

# Spans and span errors of the file at `path`: (thread, span id) => (site, parent, ns, bytes).
function read_spans(path::AbstractString)
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    st = ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp)
    st == OK || return nothing
    r = rp[]
    spans = SpanTable()
    errors = Set{Tuple{UInt32,UInt32}}()
    sites = Dict{UInt32,Tuple{String,String}}()
    try
        ev = Ref{JagerEvent}()
        while ccall((:jager_reader_next, LIB), Cint, (Ptr{Cvoid}, Ref{JagerEvent}), r, ev) > 0
            e = ev[]
            p = e.rec
            if e.type == 1 || e.type == 11
                # jager_rec_span: site in aux; start 8, end 16, id 24, parent 28, bytes 32;
                # jager_rec_span_x (a task moved between threads, format 1.2) adds the thread
                # that began it at 40 and its parent's at 44: it is keyed by those
                site = unsafe_load(Ptr{UInt32}(p + 4))
                t0, t1 = unsafe_load(Ptr{UInt64}(p + 8)), unsafe_load(Ptr{UInt64}(p + 16))
                th, pth = e.type == 11 ? (unsafe_load(Ptr{UInt32}(p + 40)), unsafe_load(Ptr{UInt32}(p + 44))) :
                          (e.thread, e.thread)
                spans[(th, unsafe_load(Ptr{UInt32}(p + 24)))] =
                    (site, pth, unsafe_load(Ptr{UInt32}(p + 28)), t1 - t0, unsafe_load(Ptr{UInt64}(p + 32)))
            elseif e.type == 8  # jager_rec_span_error: span id at 16; aux names a moved span's thread
                aux = unsafe_load(Ptr{UInt32}(p + 4))
                th = aux & SPAN_REF_MOVED != 0 ? (aux >> 22) & 0x1ff : e.thread
                push!(errors, (UInt32(th), unsafe_load(Ptr{UInt32}(p + 16))))
            end
        end
        for id in UInt32(1):ccall((:jager_reader_site_count, LIB), UInt32, (Ptr{Cvoid},), r)
            n = Ref{Cstring}(C_NULL); f = Ref{Cstring}(C_NULL); l = Ref{UInt32}(0)
            ccall((:jager_reader_site, LIB), Int32, (Ptr{Cvoid}, UInt32, Ref{Cstring}, Ref{Cstring}, Ref{UInt32}),
                  r, id, n, f, l) == OK || continue
            sites[id] = (unsafe_string(n[]), site_location(f[] == C_NULL ? "" : unsafe_string(f[]), l[]))
        end
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
    return spans, errors, sites
end

# (thread, span id) => (site, parent's thread, parent id, ns, bytes)
const SpanTable = Dict{Tuple{UInt32,UInt32},Tuple{UInt32,UInt32,UInt32,UInt64,UInt64}}
const SPAN_REF_MOVED = 0x80000000 # JAGER_SPAN_REF_MOVED (jager_record.h)

"Mirror of jager_path_stat (jager_reader.h, format 1.1): one call path of one thread."
struct JagerPathStat
    struct_size::UInt32
    thread::UInt32
    parent::UInt32      # index of the enclosing path, or typemax(UInt32) at the top level
    site::UInt32        # 0: the thread's overflow bucket
    calls::UInt64
    total_ns::UInt64
    self_ns::UInt64
    bytes::UInt64
end

# The exact call paths of the file at `path` (the last PATHS set), or nothing when it has none.
function read_paths(path::AbstractString)
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp) == OK || return nothing
    r = rp[]
    try
        # PATHS blocks follow the events they cover: one pass over the tables finds the last set.
        ccall((:jager_reader_load_tables, LIB), Int32, (Ptr{Cvoid},), r)
        n = ccall((:jager_reader_path_count, LIB), Csize_t, (Ptr{Cvoid},), r)
        n == 0 && return nothing
        out = Vector{JagerPathStat}(undef, n)
        for i in 1:n
            ps = Ref(JagerPathStat(UInt32(sizeof(JagerPathStat)), 0, 0, 0, 0, 0, 0, 0))
            ccall((:jager_reader_path, LIB), Int32, (Ptr{Cvoid}, Csize_t, Ref{JagerPathStat}), r, i - 1, ps) == OK ||
                return nothing
            out[i] = ps[]
        end
        return out
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
end

# The tree from exact paths; threads merge by path. Errors come from the event tree `ev`.
function paths_tree(paths::Vector{JagerPathStat}, sites, ev::TimingNode)
    root = TimingNode(UInt32(0), "", "")
    nodes = Vector{TimingNode}(undef, length(paths))
    for (i, p) in enumerate(paths)
        up = p.parent == typemax(UInt32) || p.parent >= i - 1 ? root : nodes[p.parent+1]
        n = p.site == 0 ? child!(up, typemax(UInt32), Dict(typemax(UInt32) => ("(other paths)", ""))) :
            child!(up, p.site, sites)
        n.calls += Int(p.calls)
        n.total_ns += p.total_ns
        n.bytes += p.bytes
        nodes[i] = n
    end
    copy_errors!(root, ev)
    return prune!(root)
end

# A span still open at the end has a path with no call but children: keep it, drop empty leaves.
function prune!(n::TimingNode)
    foreach(prune!, n.children)
    filter!(c -> c.calls > 0 || !isempty(c.children), n.children)
    return n
end

function copy_errors!(dst::TimingNode, src::TimingNode)
    for c in src.children
        d = nothing
        for x in dst.children
            x.site == c.site && (d = x; break)
        end
        d === nothing && continue
        d.errors = c.errors
        copy_errors!(d, c)
    end
end

# The tree node of span `key` (thread, span id): its site under its parent span's node.
function node_of!(memo::Dict{Tuple{UInt32,UInt32},TimingNode}, root::TimingNode, spans::SpanTable,
                  sites::Dict{UInt32,Tuple{String,String}}, key::Tuple{UInt32,UInt32})
    n = get(memo, key, nothing)
    n === nothing || return n
    site, pthread, parent = spans[key][1], spans[key][2], spans[key][3]
    pkey = (pthread, parent)
    up = parent != 0 && haskey(spans, pkey) ? node_of!(memo, root, spans, sites, pkey) : root
    n = child!(up, site, sites)
    memo[key] = n
    return n
end

"""
    Jager.timing_tree(path; exact = true) -> TimingNode

The call-path tree of the recording at `path`: the root's children are the outermost
sites. Each node's `calls`, `total_ns` and `bytes` are the core's exact aggregates of that
path (the file's PATHS blocks: every span, dropped or sampled out or not), `errors` the
span errors recorded on it. With `exact = false`, or for a file without paths, the numbers
are summed over the file's span events instead. `nothing` when the file cannot be read.
"""
function timing_tree(path::AbstractString; exact::Bool = true)
    got = read_spans(path)
    got === nothing && return nothing
    spans, errors, sites = got
    ev = events_tree(spans, errors, sites)
    paths = exact ? read_paths(path) : nothing
    return paths === nothing ? ev : paths_tree(paths, sites, ev)
end

"""
    Jager.timing_run_ns(path) -> Int

The run length of the cleanly closed recording at `path` as every tool reads it: from
`jager_init()` (the file's clock.start_ns) to the END block's time, in ns; 0 when the file
has no END block (still recording, or cut).
"""
function timing_run_ns(path::AbstractString)
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp) == OK || return 0
    r = rp[]
    try
        ccall((:jager_reader_load_tables, LIB), Int32, (Ptr{Cvoid},), r)
        info = zeros(UInt8, 80) # jager_reader_info 1.0: clean_end at 40, start_ns at 56, end_ns at 72
        unsafe_store!(Ptr{UInt32}(pointer(info)), UInt32(80))
        GC.@preserve info begin
            ccall((:jager_reader_get_info, LIB), Int32, (Ptr{Cvoid}, Ptr{UInt8}), r, info) == OK || return 0
            p = pointer(info)
            clean = unsafe_load(Ptr{UInt32}(p + 40))
            t0, t1 = unsafe_load(Ptr{UInt64}(p + 56)), unsafe_load(Ptr{UInt64}(p + 72))
            return clean == 1 && t1 > t0 ? Int(t1 - t0) : 0
        end
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
end

"""
    Jager.timing_program_ns(path) -> Int

The program's part of the recording in `path`: from the end of `Jager.start()` to the call
of `Jager.stop()` (metadata `julia.program_start_ns` / `julia.program_end_ns`), in ns, as
`jager summary` takes the main thread's time; the whole run (`timing_run_ns`) when the
file lacks them (a recording started outside Julia), 0 when unreadable.
"""
function timing_program_ns(path::AbstractString)
    run = timing_run_ns(path)
    run == 0 && return 0
    rp = Ref{Ptr{Cvoid}}(C_NULL)
    ccall((:jager_reader_open, LIB), Int32, (Cstring, Ref{Ptr{Cvoid}}), path, rp) == OK || return run
    r = rp[]
    try
        ccall((:jager_reader_load_tables, LIB), Int32, (Ptr{Cvoid},), r)
        meta(k) = (p = ccall((:jager_reader_meta, LIB), Cstring, (Ptr{Cvoid}, Cstring), r, k);
                   p == C_NULL ? nothing : tryparse(UInt64, unsafe_string(p)))
        t0, t1 = meta("julia.program_start_ns"), meta("julia.program_end_ns")
        (t0 === nothing || t1 === nothing || t1 <= t0) && return run
        return min(Int(t1 - t0), run)
    finally
        ccall((:jager_reader_close, LIB), Cvoid, (Ptr{Cvoid},), r)
    end
end

"1 when `path` holds the core's exact call paths (format 1.1), so its tree lacks nothing."
has_exact_paths(path::AbstractString) = read_paths(path) !== nothing

function events_tree(spans::SpanTable, errors, sites)
    root = TimingNode(UInt32(0), "", "")
    memo = Dict{Tuple{UInt32,UInt32},TimingNode}()
    for (key, (_, _, _, ns, bytes)) in spans
        n = node_of!(memo, root, spans, sites, key)
        n.calls += 1
        n.total_ns += ns
        n.bytes += bytes
        key in errors && (n.errors += 1)
    end
    return root
end

function sort_tree!(n::TimingNode, by)
    sort!(n.children; by = by)
    foreach(c -> sort_tree!(c, by), n.children)
    return n
end

# Same-named sites are told apart by their location; a name used once needs none, but
# the column is always there so that every row says where it was measured.
function tree_rows!(rows, n::TimingNode, depth::Int, wall::Float64)
    for c in n.children
        pct = wall > 0 ? 100 * Float64(c.total_ns) / wall : 0.0
        errs = c.errors == 0 ? "" : c.errors == 1 ? " (1 error)" : " ($(c.errors) errors)"
        push!(rows, [string("  "^depth, c.name, errs), c.location, string(c.calls), fmt_time(c.total_ns),
                     @sprintf("%.1f%%", pct), fmt_time(c.total_ns / max(c.calls, 1)),
                     fmt_bytes(c.bytes), fmt_bytes(c.bytes / max(c.calls, 1))])
        tree_rows!(rows, c, depth + 1, wall)
    end
    return rows
end

"""
    Jager.print_timings(io = stdout; sortby = :total)

Print a nested, TimerOutputs-style table of the recording: one row per call path (a site
under the sites that enclosed it), indented under its parent, with its location
(`file:line`, which tells same-named sites apart), calls, total time and its share of
the recording's wall time, mean, and the bytes allocated inside (total and per call).
The tree comes from the recording's file (as `jager summary` reads it); without a file,
the table is flat, from the core's exact per-site aggregates. While recording it shows
what was written so far (after a drain); afterwards, the last recording. `sortby` is
`:total`, `:calls`, `:bytes` or `:name` (siblings are sorted by it).
"""
function print_timings(io::IO = stdout; sortby::Symbol = :total)
    rows, wall = summary_rows()
    filter!(r -> r[2].calls > 0, rows)
    key = sortby === :calls ? (n -> -n.calls) : sortby === :bytes ? (n -> -Float64(n.bytes)) :
          sortby === :name ? (n -> n.name) : (n -> -Float64(n.total_ns))
    tree = nothing
    path = SESSION.output
    exact = false
    if path !== nothing && isfile(path)
        ENABLED[] && ccall((:jager_flush, LIB), Int32, ())
        tree = timing_tree(path)
        exact = tree !== nothing && has_exact_paths(path)
        # After the recording: the program's part of it as the file (and `jager summary`)
        # says — Jäger's own start and stop work left out.
        ENABLED[] || (file_ns = timing_program_ns(path)) == 0 || (wall = Float64(file_ns))
    end
    if tree === nothing # no file: a flat table from the per-site aggregates
        tree = TimingNode(UInt32(0), "", "")
        for (s, r) in rows
            push!(tree.children, TimingNode(s.id, s.name, site_location(s.file, s.line), Int(r.calls),
                                            r.total_ns, r.bytes, Int(r.errors), TimingNode[]))
        end
    end
    sort_tree!(tree, key)
    header = ["Section", "location", "ncalls", "total", "%tot", "mean", "alloc", "alloc/call"]
    table = tree_rows!(Vector{Vector{String}}(), tree, 0, wall)
    widths = [maximum(length, [header[i]; [row[i] for row in table]]) for i in 1:length(header)]
    rule = "─"^(sum(widths) + 2 * (length(widths) - 1) + 2)
    dropped = ENABLED[] ? Int(stats().events_dropped) : SESSION.dropped
    println(io, rule)
    println(io, @sprintf(" Jäger: %d sites, %s recorded", length(rows), fmt_time(wall)))
    println(io, rule)
    line(cells) = println(io, " ", join((i <= 2 ? rpad(c, widths[i]) : lpad(c, widths[i])
                                         for (i, c) in enumerate(cells)), "  "))
    line(header)
    println(io, rule)
    foreach(line, table)
    println(io, rule)
    dropped > 0 && !exact && println(io, " ", dropped, " events dropped: the tree lacks them (Jager.site_stats is exact)")
    dropped > 0 && exact && println(io, " ", dropped, " events dropped; the tree is exact (the core's per-path counts)")
    return nothing
end
