# sampler_julia.jl — the sampler plugin inside Julia 1.5, beside the gc plugin. One case
# per process:
#
#   julia sampler_julia.jl split | gc | profile
#
# split: two Julia functions in a 3:1 split of CPU time come out as the innermost frames
#        of ~75 % / ~25 % of the samples, named with their file and line by the binding's
#        symbolizer (JIT frames), and samples inside a @jäger span carry its site.
# gc:    JAGER_PLUGINS=sampler,gc on an allocation-heavy loop with collections: no crash,
#        Julia's SIGSEGV/SIGUSR2 handlers untouched, gc.pause and sampler.sample both there,
#        some samples inside Julia's collector.
# profile: Julia's own Profile sampling at the same time: both get their samples.
#
# Environment: JAGER_LIB (the build's libjager.so), JAGER_PLUGIN_PATH (the plugin folder).
using Test
using Libdl

const LIBPATH = get(ENV, "JAGER_LIB", "")
isfile(LIBPATH) || error("sampler_julia.jl: set JAGER_LIB to the build's libjager.so (got \"$LIBPATH\")")
const PLUGIN_PATH = get(ENV, "JAGER_PLUGIN_PATH", "")
isfile(joinpath(PLUGIN_PATH, "libjager-sampler.so")) ||
    error("sampler_julia.jl: set JAGER_PLUGIN_PATH to the folder holding libjager-sampler.so")
const LIBH = Libdl.dlopen(LIBPATH, Libdl.RTLD_NOW | Libdl.RTLD_GLOBAL)
fn(name) = Libdl.dlsym(LIBH, name)
push!(LOAD_PATH, normpath(joinpath(@__DIR__, "..", "..", "bindings", "julia")))
using Jager

# The tests' one .jgr reader (bindings/julia/test/reader.jl), reached by libjager's SONAME,
# which the dlopen above already mapped.
include(joinpath(@__DIR__, "..", "..", "bindings", "julia", "test", "reader.jl"))

# What these cases look at, from JgrReader's recording: plugin events as Dicts (field name
# => value, "type", "time_ns"), each sample's stack as its frames per address (innermost
# address first; per address the inlined frames first, the function holding the code
# last), site names by id, and diagnostics.
function read_samples(path::AbstractString)
    rec = JgrReader.read(path)
    events = Dict{String,Any}[]
    for e in rec.plugin
        d = Dict{String,Any}("type" => e.type, "time_ns" => e.time_ns)
        merge!(d, e.fields)
        e.type == "sampler.sample" && (d["frames"] = [reverse(a.frames) for a in rec.stacks[e.fields["stack"]]])
        push!(events, d)
    end
    sites = Dict{UInt64,String}(UInt64(id) => s.name for (id, s) in rec.sites)
    return (events = events, sites = sites, diags = rec.diags)
end

of(rec, t) = [e for e in rec.events if e["type"] == t]
# The innermost frame's function (inlined frames first) of a sample, "" when unnamed.
# (the function whose code holds the address: the last of its frames, after the inlined ones)
leaf(e) = isempty(e["frames"]) || isempty(e["frames"][1]) ? "" : e["frames"][1][end].func
has_frame(e, f) = any(fr.func == f for frs in e["frames"] for fr in frs)

const MUL = 0x5851f42d4c957f2d
@noinline function hot_three(n::Int)
    x = UInt64(n)
    for i in 1:n
        x = x * MUL + UInt64(i)
    end
    return x
end
const HOT_THREE_LINES = (@__LINE__) - 7 : (@__LINE__) - 1
@noinline function hot_one(n::Int)
    x = UInt64(n)
    for i in 1:n
        x = x * MUL + UInt64(i)
    end
    return x
end

# CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), ns
function thread_cpu_ns()
    ts = Ref{NTuple{2,Int64}}((0, 0))
    ccall(:clock_gettime, Cint, (Cint, Ptr{NTuple{2,Int64}}), 3, ts)
    return ts[][1] * 1_000_000_000 + ts[][2]
end
const CPU_THREE = Ref(0)
const CPU_ONE = Ref(0)

# Round lengths drawn at random (a fixed-seed LCG): a fixed 4 ms round locks onto a 250 Hz
# tick and every timer signal lands at the same phase of it, a property of the workload,
# not of the sampler; and the CPU time each function measurably had is what the samples'
# split is judged against.
@noinline function split_work(rounds::Int, n::Int)
    s = UInt64(0)
    lcg = 0x9e3779b97f4a7c15
    for r in 1:rounds
        lcg = lcg * 0x5851f42d4c957f2d + 0x14057b7ef767814f
        fa = 512 + Int((lcg >> 33) & 1023)
        fb = 512 + Int((lcg >> 13) & 1023)
        t0 = thread_cpu_ns()
        s += hot_three(3n * fa ÷ 1024)
        t1 = thread_cpu_ns()
        s += hot_one(n * fb ÷ 1024)
        t2 = thread_cpu_ns()
        CPU_THREE[] += t1 - t0
        CPU_ONE[] += t2 - t1
    end
    return s
end

@noinline inside_span(n) = @jäger hot_one(n)
const SINK = Ref{UInt64}(0)

function record(f, out; plugins)
    Jager.start(output = out, plugins = plugins, plugin_path = PLUGIN_PATH, quiet = 1)
    try
        f()
    finally
        ccall(fn(:jager_flush), Int32, ())
        Jager.symbolize!()
        Jager.stop()
    end
end

function case_split()
    ENV["JAGER_SAMPLER_HZ"] = "1000"
    out = joinpath(mktempdir(), "split.jgr")
    split_work(2, 1000); inside_span(10)              # compile outside the window
    n = 1_000_000
    CPU_THREE[] = 0
    CPU_ONE[] = 0
    record(out; plugins = "sampler") do
        split_work(600, n)                             # ≈ 4 × 600 × 1 ms of CPU
        s = UInt64(0)
        for i in 1:300
            s += inside_span(n)
        end
        SINK[] = s
    end
    rec = read_samples(out)
    ss = of(rec, "sampler.sample")
    sum_ = only(of(rec, "sampler.summary"))
    @test sum_["samples"] == length(ss)
    # every walk's fast trace (libunwind's, from the handler) found the interrupted frame
    @test sum_["slow_walks"] == 0
    # the fast trace ran: this julia loads libunwind at start-up (libjulia's dependency), so
    # every thread has libunwind's thread-local cache from its start; a julia whose loader
    # dlopens libjulia gets the note instead (docs/sampler.md)
    @test any(d -> occursin("libunwind walks (fast trace)", d[2]), rec.diags) ||
          any(d -> occursin("fast trace is off (libunwind was loaded with dlopen", d[2]), rec.diags)
    @info "walks" note = [d[2] for d in rec.diags if occursin("walks", d[2])]
    outside = [e for e in ss if e["site"] == 0]
    a = count(e -> leaf(e) == "hot_three", outside)
    b = count(e -> leaf(e) == "hot_one", outside)
    cpu_share = CPU_THREE[] / (CPU_THREE[] + CPU_ONE[])
    @info "split" samples = length(ss) hot_three = a hot_one = b share = a / (a + b) cpu_share mode = sum_["mode"]
    @test a + b >= 400
    @test 0.6 < cpu_share < 0.9                        # the premise: about 3:1 was run
    # binomial: 400+ samples at p ≈ 0.75 put 3.5 sigma at ±0.076
    @test abs(a / (a + b) - cpu_share) < 0.08
    # names and lines came from the binding's symbolizer (JIT code)
    e3 = first(e for e in outside if leaf(e) == "hot_three")
    fr = e3["frames"][1][end]
    @test endswith(fr.file, "sampler_julia.jl")
    @test fr.line in HOT_THREE_LINES
    @test count(e -> has_frame(e, "split_work"), outside) >= (a + b) * 9 ÷ 10
    # samples in hot_one under @jäger carry the span's site
    site = only(k for (k, v) in rec.sites if occursin("inside_span", v) || occursin("hot_one", v))
    in_site = [e for e in ss if e["site"] == site]
    in_hot = count(e -> leaf(e) == "hot_one", in_site)
    @info "in the span" site = rec.sites[site] samples = length(in_site) in_hot_one = in_hot
    @test length(in_site) >= 30
    @test in_hot >= length(in_site) * 8 ÷ 10
    # and no sample of hot_one called from inside_span is outside the site
    @test all(e["site"] == site for e in ss if leaf(e) == "hot_one" && has_frame(e, "inside_span"))
end

@noinline function make_garbage(n::Int)
    v = Vector{Vector{Float64}}(undef, 64)
    for i in 1:64
        v[i] = rand(n)
    end
    return sum(length, v)
end

function handler_of(sig)
    sa = zeros(UInt8, 256)   # struct sigaction: handler pointer first
    ccall(:sigaction, Cint, (Cint, Ptr{Cvoid}, Ptr{UInt8}), sig, C_NULL, sa) == 0 || error("sigaction")
    return reinterpret(UInt64, sa[1:8])[1]
end

function case_gc()
    ENV["JAGER_SAMPLER_HZ"] = "1000"
    out = joinpath(mktempdir(), "gc.jgr")
    make_garbage(10); GC.gc()
    segv, usr2 = handler_of(11), handler_of(12)
    g0 = Base.gc_num().pause
    record(out; plugins = "sampler,gc") do
        s = 0
        for i in 1:3000
            s += make_garbage(1000 + i % 7)
        end
        GC.gc(true)
        @test handler_of(11) == segv
        @test handler_of(12) == usr2
    end
    @test handler_of(11) == segv
    @test handler_of(12) == usr2
    rec = read_samples(out)
    ss = of(rec, "sampler.sample")
    ps = of(rec, "gc.pause")
    in_gc = count(e -> any(startswith(fr.func, "jl_gc_collect") || startswith(fr.func, "_jl_gc_collect") for frs in e["frames"] for fr in frs), ss)
    @info "gc" samples = length(ss) pauses = length(ps) gc_num = Base.gc_num().pause - g0 samples_in_collector = in_gc
    @test length(ps) >= 10
    @test length(ss) >= 100
    @test in_gc >= 1
    @test count(e -> has_frame(e, "make_garbage"), ss) >= 100
end

# Julia's own Profile (SIGUSR1 timer, SIGUSR2 to suspend and walk threads) running at the
# same time: both collect their samples, neither crashes, the split holds in both.
using Profile
function case_profile()
    ENV["JAGER_SAMPLER_HZ"] = "1000"
    out = joinpath(mktempdir(), "profile.jgr")
    split_work(2, 1000)
    Profile.init(n = 10^6, delay = 0.001)
    Profile.clear()
    record(out; plugins = "sampler") do
        Profile.@profile split_work(500, 1_000_000)
    end
    data = Profile.fetch()
    rec = read_samples(out)
    ss = [e for e in of(rec, "sampler.sample") if e["site"] == 0]
    a = count(e -> leaf(e) == "hot_three", ss)
    b = count(e -> leaf(e) == "hot_one", ss)
    nprof = count(==(0), data)     # Julia's profile: one 0 ends each sampled backtrace
    @info "beside Profile" sampler_samples = a + b share = a / (a + b) julia_profile_backtraces = nprof
    @test a + b >= 300
    @test 0.70 < a / (a + b) < 0.80
    @test nprof >= 100
end

const CASES = Dict("split" => case_split, "gc" => case_gc, "profile" => case_profile)
length(ARGS) == 1 && haskey(CASES, ARGS[1]) || error("usage: sampler_julia.jl split|gc|profile")
@testset "sampler in Julia: $(ARGS[1])" begin
    CASES[ARGS[1]]()
end
