# bench_julia.jl — the sampler beside Julia's own `Profile` on the same Julia workload, in
# one run: a compute loop (two @noinline functions, 3:1) run plain, under the Jäger sampler
# (100 Hz and 1 kHz of CPU time; at 1 kHz also as before the fast trace — unw_step every
# frame, frames named during the run — and with unw_step at depth 1, which walks nothing:
# the trigger's and the signal's own cost) and under `Profile` (delay 10 ms and 1 ms),
# rounds interleaved so drift hits every variant. For each: the loop's thread CPU time
# against the plain loop (median of ROUNDS), the extra CPU per sample taken (Δ CPU /
# samples: the same measure for both; noisy where rounds spread), the sampler's own handler
# time per sample (median), samples delivered against expected (sampler: the thread's CPU
# time × rate; Profile: wall time × rate, its timer is
# wall-clock) and the 3:1 split each one saw. Asserts nothing.
#
#   julia bench_julia.jl [ROUNDS [MS]]
# Environment: JAGER_LIB (libjager.so), JAGER_PLUGIN_PATH, JAGER_CLI (the jager command).
using Libdl, Profile, Printf

const LIB = get(ENV, "JAGER_LIB", "")
const CLI = get(ENV, "JAGER_CLI", "")
isfile(LIB) && isfile(CLI) || error("bench_julia.jl: set JAGER_LIB and JAGER_CLI")
Libdl.dlopen(LIB, Libdl.RTLD_NOW | Libdl.RTLD_GLOBAL)
push!(LOAD_PATH, normpath(joinpath(@__DIR__, "..", "..", "bindings", "julia")))
using Jager

const ROUNDS = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 5
const MS = length(ARGS) >= 2 ? parse(Float64, ARGS[2]) : 400.0
const MUL = 0x5851f42d4c957f2d

@noinline function hot_three(n::Int)
    x = UInt64(n)
    for i in 1:n
        x = x * MUL + UInt64(i)
    end
    return x
end
@noinline function hot_one(n::Int)
    x = UInt64(n)
    for i in 1:n
        x = x * MUL + UInt64(i)
    end
    return x
end
@noinline function work(rounds::Int)
    s = UInt64(0)
    for r in 1:rounds
        s += hot_three(300_000)
        s += hot_one(100_000)
    end
    return s
end
const SINK = Ref{UInt64}(0)

function thread_cpu_ns()
    ts = Ref{NTuple{2,Int64}}((0, 0))
    ccall(:clock_gettime, Cint, (Cint, Ref{NTuple{2,Int64}}), 3 #= CLOCK_THREAD_CPUTIME_ID =#, ts)
    return ts[][1] * 1_000_000_000 + ts[][2]
end

function measure(units)
    w0, c0 = time_ns(), thread_cpu_ns()
    SINK[] += work(units)
    return (cpu = (thread_cpu_ns() - c0) / 1e6, wall = (time_ns() - w0) / 1e6)
end

field(line, name) = (m = match(Regex("\"$name\":(\"?)([^,\"}]*)"), line)) === nothing ? "" : m.captures[2]

# The sampler: summary and the busiest thread's delivery, the split from the folded stacks.
function sampler_run(units, hz; unwind = "auto", depth = 128, symbolize = "auto")
    out = joinpath(TMP, "bench.jgr")
    ENV["JAGER_SAMPLER_HZ"] = string(hz)
    ENV["JAGER_SAMPLER_UNWIND"] = unwind
    ENV["JAGER_SAMPLER_DEPTH"] = string(depth)
    ENV["JAGER_SAMPLER_SYMBOLIZE"] = symbolize
    Jager.start(output = out, plugins = "sampler", plugin_path = ENV["JAGER_PLUGIN_PATH"], quiet = 1)
    m = measure(units)
    Jager.stop()
    summary = first(filter(l -> occursin("sampler.summary", l), readlines(`$CLI dump $out --type sampler.summary`)))
    threads = readlines(`$CLI dump $out --type sampler.thread`)
    busy = threads[argmax([parse(Int, field(l, "expected")) for l in threads])]
    run(`$CLI export --format folded $out -o $(out).folded`)
    a = b = 0
    for l in readlines("$(out).folded")
        sp = findlast(' ', l)
        n, stack = parse(Int, l[sp+1:end]), l[1:sp-1] # inlined frames (`+`) follow the function holding them
        occursin(";hot_three", stack) && (a += n)
        occursin(";hot_one", stack) && (b += n)
    end
    samples = parse(Int, field(summary, "samples"))
    return (m..., samples = samples, handler = parse(Int, field(summary, "handler_ns")) / max(1, samples),
            delivered = parse(Int, field(busy, "samples")), expected = parse(Int, field(busy, "expected")),
            split = a / max(1, a + b), mode = field(summary, "mode"))
end

# Julia's Profile: backtraces end with a 0 in the buffer; the split from the backtraces that
# hold hot_three or hot_one (the two never call each other).
function profile_run(units, delay)
    Profile.init(n = 10^7, delay = delay)
    Profile.clear()
    m = Profile.@profile measure(units)
    data = Profile.fetch()
    n = count(==(0), data)
    a = b = 0
    names = Dict{UInt64,Symbol}()
    cur = :none
    for ip in data
        if ip == 0
            cur === :hot_three && (a += 1)
            cur === :hot_one && (b += 1)
            cur = :none
            continue
        end
        f = get!(names, ip) do
            fs = Profile.lookup(ip)
            i = findfirst(fr -> fr.func === :hot_three || fr.func === :hot_one, fs)
            i === nothing ? :none : fs[i].func
        end
        f === :none || (cur = f)
    end
    return (m..., samples = n, handler = NaN, delivered = n, expected = round(Int, m.wall / (delay * 1e3)),
            split = a / max(1, a + b), mode = "Profile")
end

const TMP = mktempdir()
# warm up (compile everything outside the measured rounds), calibrate units for MS of CPU
work(1); measure(1); sampler_run(1, 100); profile_run(1, 0.01)
units = 10
while (t = measure(units).cpu) < 50
    global units *= 2
end
units = max(1, round(Int, units * MS / measure(units).cpu))

variants = [("plain", () -> measure(units)),
            ("sampler 100 Hz", () -> sampler_run(units, 100)),
            ("sampler 1 kHz", () -> sampler_run(units, 1000)),
            ("1 kHz unw_step", () -> sampler_run(units, 1000; unwind = "libunwind-step", symbolize = "run")),
            ("1 kHz no walk", () -> sampler_run(units, 1000; unwind = "libunwind-step", depth = 1)),
            ("Profile 100 Hz", () -> profile_run(units, 0.01)),
            ("Profile 1 kHz", () -> profile_run(units, 0.001))]
res = Dict(v[1] => Any[] for v in variants)
for k in 1:ROUNDS, (name, f) in variants
    push!(res[name], f())
end
med(v) = sort(v)[(length(v) + 1) ÷ 2]
base = med([r.cpu for r in res["plain"]])
@printf("Julia %s, compute loop %.0f ms of CPU (hot_three:hot_one = 3:1), median of %d rounds; plain %.1f ms\n",
        VERSION, MS, ROUNDS, base)
@printf("%-15s %10s %13s %13s %14s %16s %7s\n", "variant", "slowdown", "ΔCPU/sample", "handler/smp", "delivered", "delivered/expect", "split")
for (name, _) in variants[2:end]
    rs = res[name]
    c = med([r.cpu for r in rs])
    r = rs[end]
    per = med([(x.cpu - base) * 1e6 / max(1, x.samples) for x in rs])
    @printf("%-15s %+9.2f%% %10.0f ns %10s ns %6d/%-7d %16.3f %7.3f%s\n", name, 100 * (c / base - 1), per,
            isnan(r.handler) ? "–" : @sprintf("%.0f", med([x.handler for x in rs])), r.delivered, r.expected,
            r.delivered / max(1, r.expected), r.split, name[1] == 's' ? "  ($(r.mode))" : "")
end
pl = [r.cpu for r in res["plain"]]
@printf("noise: plain rounds spread %+.2f..%+.2f%% around their median\n", 100 * (minimum(pl) / base - 1), 100 * (maximum(pl) / base - 1))
