# span_cost.jl — what a @jäger span costs from Julia, side by side in one run.
#
#   JAGER_LIB=build/lib/libjager.so julia --project=bindings/julia bench/julia/span_cost.jl [N]
#
# Each row times N iterations of the same loop around a tiny @noinline function, best of
# 7 runs, and reports ns per iteration, the overhead over the bare loop, and ratios
# against the bare loop and against a pure-Julia @timeit-like section (written here the
# way TimerOutputs' @timeit works: a Dict lookup of the section under the current parent,
# a timer stack push/pop, time_ns and gc_bytes before and after, try/finally and
# accumulation; TimerOutputs itself is not installable here). Two floors come first: a
# try/catch alone (Julia's exception handler, which a span around a call that may throw
# needs) and two reads of the core's clock. The last rows time @info through JagerLogger
# into the rings. Recording goes to a temporary .jgr file.
using Jager, Logging, Printf

# N spans per run fit one default 1 MiB ring (40-byte span records), and every run starts
# with drained rings (Jager.drain), so the record path is timed, never the drop path.
const N = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 20_000
const RUNS = 25

@noinline tiny(x::Float64) = x * 1.0000001 + 1.0
# The same work behind a check that can throw: inference cannot prove this call nothrow,
# so its @jäger span keeps Julia's exception handler (see bindings/julia/src/nothrow.jl).
@noinline tiny_checked(x::Float64) = x < 0 ? throw(DomainError(x)) : x * 1.0000001 + 1.0

# ---- the loops ---------------------------------------------------------------------------

function bare(n)
    s = 0.0
    for i in 1:n
        s = tiny(s)
    end
    return s
end

function jager_call(n)
    s = 0.0
    for i in 1:n
        s = @jäger tiny(s)
    end
    return s
end

function jager_checked(n)
    s = 0.0
    for i in 1:n
        s = @jäger tiny_checked(s)
    end
    return s
end

function try_only(n)
    s = 0.0
    for i in 1:n
        try
            s = tiny(s)
        catch
            rethrow()
        end
    end
    return s
end

# The clock floor of any span: two reads of the core's clock (rdtsc and a conversion).
function clock_pair(n)
    s = 0.0
    for i in 1:n
        t0 = ccall((:jager_now_ns, Jager.LIB), UInt64, ())
        s = tiny(s)
        t1 = ccall((:jager_now_ns, Jager.LIB), UInt64, ())
        s += (t1 - t0) * 0.0
    end
    return s
end

function jager_block(n)
    s = 0.0
    for i in 1:n
        s = @jäger_block "tiny block" tiny(s)
    end
    return s
end

function raw_ccall_pair(n)
    site = ccall((:jager_site_register, Jager.LIB), UInt32, (Cstring, Cstring, UInt32), "raw pair", @__FILE__, 0)
    s = 0.0
    for i in 1:n
        sp = ccall((:jager_span_begin, Jager.LIB), Jager.JagerSpan, (UInt32,), site)
        s = tiny(s)
        ccall((:jager_span_end, Jager.LIB), Cvoid, (Jager.JagerSpan,), sp)
    end
    return s
end

# ---- a pure-Julia @timeit-like baseline -------------------------------------------------

mutable struct TimerNode
    ncalls::Int
    time_ns::UInt64
    allocs::Int64
    children::Dict{String,TimerNode}
end
TimerNode() = TimerNode(0, 0, 0, Dict{String,TimerNode}())

struct Timer
    root::TimerNode
    stack::Vector{TimerNode}
end
Timer() = (r = TimerNode(); Timer(r, [r]))

@inline function gcb()
    r = Ref{Int64}(0)
    Base.gc_bytes(r)
    return r[]
end

macro timeit_like(to, label, ex)
    quote
        local to_ = $(esc(to))
        local parent = to_.stack[end]
        local node = get!(TimerNode, parent.children, $label)
        push!(to_.stack, node)
        local b0 = gcb()
        local t0 = time_ns()
        try
            $(esc(ex))
        finally
            node.time_ns += time_ns() - t0
            node.allocs += gcb() - b0
            node.ncalls += 1
            pop!(to_.stack)
        end
    end
end

const TO = Timer()
function timeit_like(n)
    s = 0.0
    for i in 1:n
        s = @timeit_like TO "tiny" tiny(s)
    end
    return s
end

# ---- logging ---------------------------------------------------------------------------

function info_loop(n)
    for i in 1:n
        @info "step done" i residual = 1.5e-3
    end
end

# ---- measuring -------------------------------------------------------------------------

# Best of RUNS runs of each variant, the variants interleaved round-robin so that a busy
# moment on a shared machine hits them all alike. A variant is (name, setup, f).
function measure(variants, n)
    for (_, setup, f) in variants
        setup()
        f(100) # compile
    end
    best = fill(typemax(Float64), length(variants))
    for _ in 1:RUNS, (i, (_, setup, f)) in enumerate(variants)
        setup()
        GC.gc(false)
        t0 = time_ns()
        f(n)
        best[i] = min(best[i], (time_ns() - t0) / n)
    end
    return [(variants[i][1], best[i]) for i in eachindex(variants)]
end

function main()
    Jager.available() || error(Jager.LIB_NOT_FOUND, " (", Jager.LIBSTATE.detail, ")")
    out = tempname() * ".jgr"
    nothing_() = nothing
    off = measure([("bare loop", nothing_, bare), ("@jäger, not recording", nothing_, jager_call),
                   ("@timeit-like (pure Julia)", nothing_, timeit_like),
                   ("try/catch alone", nothing_, try_only)], N)
    Jager.start(output = out, env = false, quiet = true)
    timing() = (Jager.drain(); Jager.TRACK_BYTES[] = false; nothing)
    bytes() = (Jager.drain(); Jager.TRACK_BYTES[] = true; nothing)
    on = measure([("clock read pair", timing, clock_pair), ("ccall begin/end pair", timing, raw_ccall_pair),
                  ("@jäger f(x), timing only", timing, jager_call),
                  ("@jäger f(x) may throw, timing", timing, jager_checked),
                  ("@jäger_block, timing only", timing, jager_block),
                  ("@jäger f(x), with bytes", bytes, jager_call),
                  ("@jäger_block, with bytes", bytes, jager_block)], N)
    nlog = 2000 # log records are ~200 bytes with these attributes: 2000 fit a ring
    info = with_logger(JagerLogger()) do
        measure([("@info → JagerLogger → rings", () -> (Jager.drain(); nothing), info_loop)], nlog)
    end
    st = Jager.stats()
    Jager.stop()
    null = with_logger(Logging.NullLogger()) do
        measure([("@info → NullLogger", nothing_, info_loop)], nlog)
    end
    rm(out; force = true)

    rows = vcat(off, on)
    bare_ns = rows[1][2]
    timeit_over = rows[3][2] - bare_ns
    pair_over = rows[6][2] - bare_ns # the ccall begin/end pair
    @printf("Julia %s, N = %d spans per run, best of %d interleaved runs, rings drained before each\n", VERSION, N, RUNS)
    @printf("%-28s %9s %12s %9s %11s %16s\n", "loop", "ns/iter", "overhead ns", "vs bare", "vs ccall", "vs @timeit-like")
    for (name, ns) in rows
        over = ns - bare_ns
        @printf("%-28s %9.1f %12.1f %8.2fx %10.2fx %16s\n", name, ns, over, ns / bare_ns, over / pair_over,
                over > 0.5 ? @sprintf("%.2fx cheaper", timeit_over / over) : "-")
    end
    # The C span cost in this process: libjager times a C loop of jager_span_begin/end at
    # init (best of 5 x 2000, the loop included), the same figure jager_stat reports.
    c_span = st.span_cost_ns_x1000 / 1000
    jager_over = rows[7][2] - bare_ns # @jäger f(x), timing only
    @printf("%-28s %9s %12.1f %9s %10.2fx   (libjager's own C loop at init, this process; @jäger f(x) / it: %.2fx)\n",
            "C span (begin/end from C)", "", c_span, "", c_span / pair_over, jager_over / c_span)
    @printf("%-28s %9.1f ns per message (%d messages)\n", info[1][1], info[1][2], nlog)
    @printf("%-28s %9.1f ns per message\n", null[1][1], null[1][2])
    @printf("events emitted %d, recorded %d, dropped %d (ring full %d)\n", st.events_emitted,
            st.events_recorded, st.events_dropped, st.dropped[1])
end

main()
