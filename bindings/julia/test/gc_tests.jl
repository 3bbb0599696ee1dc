# gc_tests.jl — the gc plugin inside Julia 1.5 (issue 4). One case per process:
#
#   julia gc_tests.jl pauses | stacks | kinds | threads | unhook | sites | zero_code
#
# Environment: JAGER_LIB (the build's libjager.so), JAGER_PLUGIN_PATH (the build's plugin
# folder). The cases record with the binding (`using Jager`), except zero_code, which runs
# a plain script under LD_PRELOAD=libjager.so and reads its recording back. Recordings are
# read with libjager's reader (jager_reader_*), decoding plugin events by the field names
# of their self-describing types, so the assertions are about what the file holds.
using Test
using Libdl

const LIBPATH = get(ENV, "JAGER_LIB", "")
isfile(LIBPATH) || error("gc_tests.jl: set JAGER_LIB to the build's libjager.so (got \"$LIBPATH\")")
const PLUGIN_PATH = get(ENV, "JAGER_PLUGIN_PATH", "")
isfile(joinpath(PLUGIN_PATH, "libjager-gc.so")) ||
    error("gc_tests.jl: set JAGER_PLUGIN_PATH to the folder holding libjager-gc.so (got \"$PLUGIN_PATH\")")
const LIBH = Libdl.dlopen(LIBPATH, Libdl.RTLD_NOW | Libdl.RTLD_GLOBAL)
fn(name) = Libdl.dlsym(LIBH, name)
now_ns() = ccall(fn(:jager_now_ns), UInt64, ())

# ---- reading recordings -------------------------------------------------------------------

include("reader.jl")

"""
    gcread(path) -> (events, stacks)

The gc plugin's events of `path` as Dicts ("type" => "gc.pause", "thread", "time_ns",
field => value…) and the stacks they name (stack id => [(ip, frames)…]), read by
JgrReader (reader.jl).
"""
function gcread(path::AbstractString)
    rec = JgrReader.read(path)
    events = [merge!(Dict{String,Any}("type" => e.type, "thread" => e.thread, "time_ns" => e.time_ns), e.fields)
              for e in JgrReader.plugin_events(rec; prefix = "gc.")]
    return (events = events, stacks = rec.stacks)
end

of(rec, t) = [e for e in rec.events if e["type"] == t]
within(evs, t0, t1) = [e for e in evs if t0 <= e["time_ns"] <= t1]
# Function names of a stack's frames (inlined ones included), innermost first.
funcs(rec, e) = [f.func for fr in get(rec.stacks, e["stack"], []) for f in reverse(fr.frames)]

# ---- workloads ------------------------------------------------------------------------

# The allocating function the trigger stacks must name. @noinline keeps its own frame.
@noinline function make_garbage(n::Int)
    v = Vector{Vector{Float64}}(undef, 64)
    for i in 1:64
        v[i] = rand(n)              # the allocations that trigger collections
    end
    return sum(length, v)
end
const MAKE_GARBAGE_LINES = (@__LINE__) - 8 : (@__LINE__) - 1

@noinline function churn(rounds::Int)
    s = 0
    for i in 1:rounds
        s += make_garbage(1000 + (i % 7))
    end
    return s
end

# gc_num() in a form that does not allocate between the two reads we compare.
gcsnap() = (g = Base.gc_num(); (pause = Int(g.pause), full = Int(g.full_sweep), total_time = Int(g.total_time)))

function with_recording(f, output; plugins = "gc")
    Jager.start(output = output, plugins = plugins, plugin_path = PLUGIN_PATH, quiet = 1)
    try
        f()
    finally
        # Pauses reach the core's stack table at the plugin's flush; symbolize after it.
        ccall(fn(:jager_flush), Int32, ())
        Jager.symbolize!()
        Jager.stop()
    end
end

tmpjgr(tag) = joinpath(mktempdir(), "gc_$tag.jgr")

# ---- cases ------------------------------------------------------------------------------

function case_pauses()
    out = tmpjgr("pauses")
    churn(20); GC.gc()                     # compile first, outside the window
    local t0, t1, g0, g1, live_after
    with_recording(out) do
        t0 = now_ns(); g0 = gcsnap()
        churn(3000)
        GC.gc(true)
        g1 = gcsnap(); t1 = now_ns()
        live_after = Base.gc_live_bytes()
    end
    rec = gcread(out)
    ps = within(of(rec, "gc.pause"), t0, t1)
    n = g1.pause - g0.pause
    @info "pauses" recorded = length(ps) gc_num = n sum_ms = sum(p["duration_ns"] for p in ps) / 1e6 gc_num_ms = (g1.total_time - g0.total_time) / 1e6
    @test n >= 10
    @test length(ps) == n
    recorded = sum(p["duration_ns"] for p in ps)
    runtime = g1.total_time - g0.total_time
    @test abs(recorded - runtime) <= 0.10 * runtime
    @test all(p["duration_ns"] > 0 for p in ps)
    @test all(p["plugin_ns"] < p["duration_ns"] for p in ps)
    @test sum(p["allocd_bytes"] for p in ps) > 3000 * 64 * 1000 * 8 * 0.5   # the churn allocated ~1.5 GB
    @test any(p["freed_bytes"] > 0 for p in ps)
    @test ps[end]["requested"] == 1
    @test abs(Int(ps[end]["live_bytes"]) - live_after) <= 0.01 * live_after   # the runtime's figure after it
    samples = of(rec, "gc.sample")
    @test length(samples) >= 2
    @test samples[end]["collections"] >= g1.pause
    @test samples[end]["rss_bytes"] > 50_000_000
end

function case_stacks()
    out = tmpjgr("stacks")
    churn(20); GC.gc()
    local t0, t1
    with_recording(out) do
        t0 = now_ns()
        churn(2000)
        t1 = now_ns()
    end
    rec = gcread(out)
    ps = [p for p in within(of(rec, "gc.pause"), t0, t1) if p["requested"] == 0]
    @test length(ps) >= 5
    for p in ps
        fs = funcs(rec, p)
        @test "jl_gc_collect" in fs                       # C frame, named by the core (dladdr)
        @test "make_garbage" in fs                        # Julia frame, named by Jager.symbolize!
    end
    # The frame names the file and a line inside make_garbage.
    fr = [f for fr in rec.stacks[ps[1]["stack"]] for f in fr.frames if f.func == "make_garbage"]
    @test !isempty(fr)
    @test endswith(fr[1].file, "gc_tests.jl")
    @test fr[1].line in MAKE_GARBAGE_LINES
end

function case_kinds()
    out = tmpjgr("kinds")
    GC.gc(true); GC.gc(false)
    local t0, t1, g0, g1
    with_recording(out) do
        t0 = now_ns(); g0 = gcsnap()
        for i in 1:3
            GC.gc(true)
        end
        for i in 1:3
            GC.gc(false)
        end
        g1 = gcsnap(); t1 = now_ns()
    end
    rec = gcread(out)
    ps = within(of(rec, "gc.pause"), t0, t1)
    @test length(ps) == g1.pause - g0.pause
    @test [p["requested"] for p in ps] == [1, 1, 1, 2, 2, 2]
    @test all(p["full"] >= 1 for p in ps[1:3])
    @test sum(p -> Int(p["full"]), ps) == g1.full - g0.full
    @test all("jl_gc_collect" in funcs(rec, p) for p in ps)
end

# `full` counts sweeps: on 1.5, GC.gc(true) after an incremental collection of a grown heap
# recollects in full inside the same pause (two sweeps, one pause). A flag undercounted
# gc_num().full_sweep by one per such pause; the sum must equal its growth.
function case_full_sweeps()
    out = tmpjgr("full_sweeps")
    GC.gc(true); GC.gc(false)
    local t0, t1, g0, g1, pauses
    with_recording(out) do
        t0 = now_ns(); g0 = gcsnap()
        for k in 1:3
            live = [Vector{Float64}(undef, 100) for _ in 1:100_000]
            GC.gc(false); GC.gc(true)
            live = nothing
        end
        g1 = gcsnap(); t1 = now_ns()
    end
    rec = gcread(out)
    ps = within(of(rec, "gc.pause"), t0, t1)
    @info "full sweeps" per_pause = [Int(p["full"]) for p in ps] gc_num = g1.full - g0.full
    @test length(ps) == g1.pause - g0.pause
    @test g1.full - g0.full >= 3
    @test sum(p -> Int(p["full"]), ps) == g1.full - g0.full
end

function case_threads()
    @test Threads.nthreads() == 2
    out = tmpjgr("threads")
    tids = zeros(Int, 2)
    work() = Threads.@threads for k in 1:2
        tids[Threads.threadid()] = Int(ccall(:gettid, Cint, ()))
        churn(1500)
    end
    work(); GC.gc()
    local t0, t1, g0, g1
    with_recording(out) do
        t0 = now_ns(); g0 = gcsnap()
        work()
        g1 = gcsnap(); t1 = now_ns()
    end
    rec = gcread(out)
    ps = within(of(rec, "gc.pause"), t0, t1)
    @test length(ps) == g1.pause - g0.pause
    by = Dict(t => count(p -> p["os_tid"] == t, ps) for t in tids)
    @info "pauses per thread" by
    @test all(>(0), values(by))                          # each thread triggered collections
    @test all(p["os_tid"] in tids for p in ps)
    @test all("make_garbage" in funcs(rec, p) for p in ps if p["requested"] == 0)
end

# The "jager.gc/1" table, reachable after shutdown through the (pinned) plugin library.
function gc_ext_after_shutdown()
    h = Libdl.dlopen(joinpath(PLUGIN_PATH, "libjager-gc.so"), Libdl.RTLD_NOLOAD | Libdl.RTLD_NOW)
    entry = Libdl.dlsym(h, :jager_plugin_entry)
    desc = ccall(entry, Ptr{UInt8}, (UInt32, UInt32), 1, 0)
    get_ext = unsafe_load(Ptr{Ptr{Cvoid}}(desc + 72))    # jager_plugin_descriptor.get_extension
    return ccall(get_ext, Ptr{UInt8}, (Ptr{Cvoid}, Cstring), C_NULL, "jager.gc/1")
end
function callback_counts(ext)
    a = Ref{UInt64}(0); l = Ref{UInt64}(0)
    ccall(unsafe_load(Ptr{Ptr{Cvoid}}(ext + 24)), Cvoid, (Ref{UInt64}, Ref{UInt64}), a, l)
    return (armed = Int(a[]), late = Int(l[]))
end

function case_unhook()
    out1, out2 = tmpjgr("unhook1"), tmpjgr("unhook2")
    with_recording(out1) do
        GC.gc(); GC.gc()
    end
    ext = gc_ext_after_shutdown()
    @test ext != C_NULL
    c0 = callback_counts(ext)
    @test c0.armed >= 4                                  # two pre+post pairs at least
    for i in 1:3
        GC.gc(true)
    end
    churn(500)                                           # automatic collections too
    c1 = callback_counts(ext)
    @test c1 == c0                                       # Julia no longer calls the plugin
    rec1 = gcread(out1)
    @test length(of(rec1, "gc.pause")) >= 2
    # A second recording in the same process hooks again, exactly once.
    local t0, t1, g0, g1
    with_recording(out2) do
        t0 = now_ns(); g0 = gcsnap()
        GC.gc(); GC.gc(false)
        g1 = gcsnap(); t1 = now_ns()
    end
    rec2 = gcread(out2)
    ps = within(of(rec2, "gc.pause"), t0, t1)
    @test length(ps) == g1.pause - g0.pause == 2
    c2 = callback_counts(ext)
    @test c2.late == c0.late
end

# jager_span, returned by value from jager_span_begin (16 bytes).
struct JSpan
    start_ns::UInt64
    site::UInt32
    id::UInt32
end

function case_sites()
    out = tmpjgr("sites")
    churn(20); GC.gc()
    local site, quiet, t0, t1, g0, g1
    with_recording(out) do
        site = ccall(fn(:jager_site_register), UInt32, (Cstring, Cstring, UInt32), "gc_test.churn", @__FILE__, @__LINE__)
        quiet = ccall(fn(:jager_site_register), UInt32, (Cstring, Cstring, UInt32), "gc_test.quiet", @__FILE__, @__LINE__)
        sp = ccall(fn(:jager_span_begin), JSpan, (UInt32,), quiet)
        ccall(fn(:jager_span_end), Cvoid, (JSpan,), sp)      # a span without GC inside
        t0 = now_ns(); g0 = gcsnap()
        sp = ccall(fn(:jager_span_begin), JSpan, (UInt32,), site)
        churn(1500)
        GC.gc(false)
        ccall(fn(:jager_span_end), Cvoid, (JSpan,), sp)
        g1 = gcsnap(); t1 = now_ns()
        churn(200)                                           # collections outside the span
    end
    rec = gcread(out)
    inside = within(of(rec, "gc.pause"), t0, t1)
    @test length(inside) == g1.pause - g0.pause
    @test all(p["site"] == site for p in inside)
    st = [e for e in of(rec, "gc.site_time") if e["site"] == site]
    @test length(st) == 1
    @test st[1]["pauses"] == length(inside)
    @test st[1]["gc_ns"] == sum(p["duration_ns"] for p in inside)
    @test isempty([e for e in of(rec, "gc.site_time") if e["site"] == quiet])
    outside = [p for p in of(rec, "gc.pause") if p["time_ns"] > t1]
    @test all(p["site"] == 0 for p in outside)
end

# A plain Julia program: no `using Jager`. It reports its own GC counters for the test.
const GARBAGE = normpath(joinpath(@__DIR__, "..", "..", "..", "examples", "julia_gc", "garbage.jl"))
const ZERO_CODE_SCRIPT = "include($(repr(GARBAGE)))\n" * raw"""
churn(10)
t0 = ccall(:jager_now_ns, UInt64, ())   # libjager is preloaded: its symbols are global
g0 = Base.gc_num()
churn(2500)
GC.gc(true)
g1 = Base.gc_num()
t1 = ccall(:jager_now_ns, UInt64, ())
open(ARGS[1], "w") do io
    println(io, t0, " ", t1, " ", g1.pause - g0.pause, " ", Int(g1.total_time - g0.total_time))
end
"""

function case_zero_code()
    dir = mktempdir()
    script = joinpath(dir, "plain.jl"); write(script, ZERO_CODE_SCRIPT)
    out = joinpath(dir, "zero.jgr"); facts = joinpath(dir, "facts.txt")
    env = copy(ENV)
    env["LD_PRELOAD"] = LIBPATH
    env["JAGER_PLUGINS"] = "gc"
    env["JAGER_OUTPUT"] = out
    env["JAGER_PLUGIN_PATH"] = PLUGIN_PATH
    env["JAGER_QUIET"] = "1"
    delete!(env, "JULIA_NUM_THREADS")
    cmd = `$(Base.julia_cmd()) --startup-file=no $script $facts`
    run(setenv(cmd, env))
    @test isfile(out)
    t0, t1, n, gc_ns = parse.(Int, split(strip(Base.read(facts, String))))
    rec = gcread(out)
    ps = within(of(rec, "gc.pause"), UInt64(t0), UInt64(t1))
    @info "zero-code" recorded = length(ps) gc_num = n
    @test n >= 10
    @test length(ps) == n
    @test abs(sum(p["duration_ns"] for p in ps) - gc_ns) <= 0.10 * gc_ns
    # Without the binding the core names C frames (dladdr); Julia JIT frames stay addresses.
    for p in ps
        st = rec.stacks[p["stack"]]
        @test st[1].frames[1].func == "jl_gc_collect"
        @test !("make_garbage" in funcs(rec, p))
        @test any(isempty(fr.frames) for fr in st)       # unnamed JIT frames are still there
    end
    @test ps[end]["requested"] == 1
    @test !isempty(of(rec, "gc.sample"))
end

const CASES = Dict("pauses" => case_pauses, "stacks" => case_stacks, "kinds" => case_kinds, "full_sweeps" => case_full_sweeps,
                   "threads" => case_threads, "unhook" => case_unhook, "sites" => case_sites, "zero_code" => case_zero_code)

length(ARGS) == 1 && haskey(CASES, ARGS[1]) ||
    error("usage: julia gc_tests.jl " * join(sort!(collect(keys(CASES))), " | "))
if ARGS[1] != "zero_code"
    push!(LOAD_PATH, normpath(joinpath(@__DIR__, "..")))
    @eval using Jager
    Jager.available() || error("Jager did not load libjager: ", Jager.LIBSTATE.detail)
end
@testset "gc plugin: $(ARGS[1])" begin
    CASES[ARGS[1]]()
end
