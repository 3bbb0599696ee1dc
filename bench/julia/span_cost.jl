# span_cost.jl — what a @jäger span costs from Julia, side by side in one run.
#
#   JAGER_LIB=build/lib/libjager.so julia --project=bindings/julia bench/julia/span_cost.jl [N]
#
# Each row times N iterations of the same loop around a tiny @noinline function, best of
# 7 runs, and reports ns per iteration, the overhead over the bare loop, and ratios
# against the bare loop and against a pure-Julia @timeit-like section (written here the
# way TimerOutputs' @timeit works: a Dict lookup of the section under the current parent,
# a timer stack push/pop, time_ns and gc_bytes before and after, try/finally and
# accumulation; TimerOutputs itself is not installable here). The last rows time @info
# through JagerLogger into the rings. Recording goes to a temporary .jgr file.
using Jager, Logging, Printf

const N = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 200_000
const RUNS = 7

@noinline tiny(x::Float64) = x * 1.0000001 + 1.0

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

function best_ns(f, n)
    f(100) # compile
    best = typemax(Float64)
    for _ in 1:RUNS
        GC.gc(false)
        t0 = time_ns()
        f(n)
        best = min(best, (time_ns() - t0) / n)
    end
    return best
end

function main()
    Jager.available() || error(Jager.LIB_NOT_FOUND, " (", Jager.LIBSTATE.detail, ")")
    out = tempname() * ".jgr"
    rows = Tuple{String,Float64}[]
    push!(rows, ("bare loop", best_ns(bare, N)))
    push!(rows, ("@jäger, not recording", best_ns(jager_call, N)))
    push!(rows, ("@timeit-like (pure Julia)", best_ns(timeit_like, N)))
    Jager.start(output = out, env = false, quiet = true, bytes = false)
    push!(rows, ("ccall begin/end pair", best_ns(raw_ccall_pair, N)))
    push!(rows, ("@jäger f(x), timing only", best_ns(jager_call, N)))
    push!(rows, ("@jäger_block, timing only", best_ns(jager_block, N)))
    Jager.TRACK_BYTES[] = true
    push!(rows, ("@jäger f(x), with bytes", best_ns(jager_call, N)))
    push!(rows, ("@jäger_block, with bytes", best_ns(jager_block, N)))
    nlog = max(N ÷ 20, 1000)
    info_ns = with_logger(JagerLogger()) do
        best_ns(info_loop, nlog)
    end
    st = Jager.stats()
    Jager.stop()
    null_ns = with_logger(Logging.NullLogger()) do
        best_ns(info_loop, nlog)
    end
    rm(out; force = true)

    bare_ns = rows[1][2]
    timeit_over = rows[3][2] - bare_ns
    @printf("Julia %s, N = %d spans per run, best of %d runs\n", VERSION, N, RUNS)
    @printf("%-28s %10s %12s %10s %14s\n", "loop", "ns/iter", "overhead ns", "vs bare", "vs @timeit-like")
    for (name, ns) in rows
        over = ns - bare_ns
        @printf("%-28s %10.1f %12.1f %9.2fx %14s\n", name, ns, over, ns / bare_ns,
                over > 0.5 ? @sprintf("%.2fx cheaper", timeit_over / over) : "-")
    end
    @printf("%-28s %10.1f ns per message (%d messages)\n", "@info → JagerLogger → rings", info_ns, nlog)
    @printf("%-28s %10.1f ns per message\n", "@info → NullLogger", null_ns)
    @printf("events emitted %d, recorded %d, dropped %d (ring full %d)\n", st.events_emitted,
            st.events_recorded, st.events_dropped, st.dropped[1])
end

main()
