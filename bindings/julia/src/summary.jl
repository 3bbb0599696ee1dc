# summary.jl — a TimerOutputs-style table of the core's exact per-site aggregates.

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

# The rows: live aggregates while recording, else the snapshot the last stop() took.
function summary_rows()
    ENABLED[] && return live_site_rows(), Float64(time_ns() - SESSION.start_ns)
    return copy(SESSION.stats), Float64(SESSION.stop_ns - SESSION.start_ns)
end

"""
    Jager.print_timings(io = stdout; sortby = :total)

Print a table of every @jäger site with its exact aggregates from the core: calls, total
time and its share of the recording's wall time, mean, min, max, the p50/p99 from the
core's histogram (within 1/8), and the bytes allocated inside (total and per call).
While recording it shows live values; afterwards, those of the last recording.
`sortby` is `:total`, `:calls`, `:bytes` or `:name`.
"""
function print_timings(io::IO = stdout; sortby::Symbol = :total)
    rows, wall = summary_rows()
    filter!(r -> r[2].calls > 0, rows)
    key = sortby === :calls ? (r -> -Float64(r[2].calls)) :
          sortby === :bytes ? (r -> -Float64(r[2].bytes)) :
          sortby === :name ? (r -> r[1].name) : (r -> -Float64(r[2].total_ns))
    sort!(rows; by = key)
    header = ["Section", "ncalls", "total", "%tot", "mean", "min", "max", "p50", "p99", "alloc", "alloc/call"]
    table = Vector{Vector{String}}()
    for (s, r) in rows
        n = Float64(r.calls)
        pct = wall > 0 ? 100 * Float64(r.total_ns) / wall : 0.0
        errs = r.errors == 0 ? "" : r.errors == 1 ? " (1 error)" : " ($(r.errors) errors)"
        push!(table, [string(s.name, errs), string(r.calls), fmt_time(r.total_ns), @sprintf("%.1f%%", pct),
                      fmt_time(r.total_ns / n), fmt_time(r.min_ns), fmt_time(r.max_ns),
                      fmt_time(r.p50_ns), fmt_time(r.p99_ns), fmt_bytes(r.bytes), fmt_bytes(r.bytes / n)])
    end
    widths = [maximum(length, [header[i]; [row[i] for row in table]]) for i in 1:length(header)]
    rule = "─"^(sum(widths) + 2 * (length(widths) - 1) + 2)
    title = @sprintf(" Jäger: %d sites, %s recorded", length(rows), fmt_time(wall))
    println(io, rule)
    println(io, title)
    println(io, rule)
    line(cells) = println(io, " ", join((i == 1 ? rpad(c, widths[i]) : lpad(c, widths[i])
                                         for (i, c) in enumerate(cells)), "  "))
    line(header)
    println(io, rule)
    foreach(line, table)
    println(io, rule)
    return nothing
end
