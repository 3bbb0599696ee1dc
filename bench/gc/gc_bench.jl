# gc_bench.jl — what the gc plugin costs a Julia program (issue 4). Prints, in one run:
#
#  1. the plugin's time per collection: the pre+post callback bodies, timed with the TSC
#     by the plugin itself (gc.pause's plugin_ns), as a distribution;
#  2. an allocation-heavy loop's time without Jäger, with libjager preloaded but no
#     plugin, and with JAGER_PLUGINS=gc (zero-code mode), runs interleaved, and the ratios;
#  3. the predicted cost = callback time × collections, against the measured difference.
#
#   JAGER_LIB=build/lib/libjager.so JAGER_PLUGIN_PATH=build/plugins julia gc_bench.jl [rounds]
#
# Asserts nothing: read the numbers. Short by design (a shared 2-core machine).
using Printf
using Libdl
using Statistics

const LIB = get(ENV, "JAGER_LIB", "")
const PLUGINS = get(ENV, "JAGER_PLUGIN_PATH", "")
isfile(LIB) || error("set JAGER_LIB to the build's libjager.so")
isfile(joinpath(PLUGINS, "libjager-gc.so")) || error("set JAGER_PLUGIN_PATH to the folder of libjager-gc.so")
const ROUNDS = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 5

# The loop itself lives in examples/julia_gc/garbage.jl (the zero-code GC test runs it too).
const GARBAGE = normpath(joinpath(@__DIR__, "..", "..", "examples", "julia_gc", "garbage.jl"))
const WORKLOAD = "include($(repr(GARBAGE)))\n" * raw"""
churn(10)
g0 = Base.gc_num()
t = @elapsed churn(4000)
g1 = Base.gc_num()
println(t, " ", g1.pause - g0.pause, " ", Int(g1.total_time - g0.total_time))
"""

function run_once(script, mode, out)
    env = copy(ENV)
    delete!(env, "JULIA_NUM_THREADS")
    if mode != :plain
        env["LD_PRELOAD"] = LIB
        env["JAGER_QUIET"] = "1"
        env["JAGER_PLUGIN_PATH"] = PLUGINS
        env["JAGER_OUTPUT"] = out
        mode in (:gc, :gc_nostack) ? (env["JAGER_PLUGINS"] = "gc") : delete!(env, "JAGER_PLUGINS")
        mode == :gc_nostack ? (env["JAGER_GC_DEPTH"] = "0") : delete!(env, "JAGER_GC_DEPTH")
    else
        delete!(env, "LD_PRELOAD")
    end
    s = read(setenv(`$(Base.julia_cmd()) --startup-file=no $script`, env), String)
    t, n, gcns = split(strip(s))
    return (t = parse(Float64, t), collections = parse(Int, n), gc_ns = parse(Int, gcns))
end

# plugin_ns and duration_ns of every gc.pause in a recording, read by the tests' one .jgr
# reader (bindings/julia/test/reader.jl), which reaches libjager by its SONAME: mapped here.
include(joinpath(@__DIR__, "..", "..", "bindings", "julia", "test", "reader.jl"))
function pauses(path)
    Libdl.dlopen(LIB)
    evs = JgrReader.of_type(JgrReader.read(path).plugin, "gc.pause")
    return [Int(e.fields["plugin_ns"]) for e in evs], [Int(e.fields["duration_ns"]) for e in evs]
end

q(v, p) = sort(v)[clamp(round(Int, p * length(v)), 1, length(v))]

function main()
    dir = mktempdir()
    script = joinpath(dir, "workload.jl"); write(script, WORKLOAD)
    times = Dict(m => Float64[] for m in (:plain, :preload, :gc, :gc_nostack))
    colls = Int[]
    cbs = Int[]; durs = Int[]; cbs0 = Int[]
    for k in 1:ROUNDS, m in (k % 2 == 1 ? (:plain, :preload, :gc, :gc_nostack) : (:gc_nostack, :gc, :preload, :plain))
        out = joinpath(dir, "r$(k)_$(m).jgr")
        r = run_once(script, m, out)
        push!(times[m], r.t)
        if m == :gc
            push!(colls, r.collections)
            cb, dur = pauses(out)
            append!(cbs, cb); append!(durs, dur)
        elseif m == :gc_nostack
            append!(cbs0, pauses(out)[1])
        end
    end
    @printf("gc plugin bench: %d rounds, interleaved; churn(4000) allocates ~1.9 GB in 256k arrays\n", ROUNDS)
    @printf("\ncallback time per collection (pre+post bodies, TSC): n=%d\n", length(cbs))
    @printf("  p50 %.2f µs   p90 %.2f µs   p99 %.2f µs   max %.2f µs   mean %.2f µs\n",
            q(cbs, 0.5) / 1e3, q(cbs, 0.9) / 1e3, q(cbs, 0.99) / 1e3, maximum(cbs) / 1e3, mean(cbs) / 1e3)
    @printf("  without stacks (JAGER_GC_DEPTH=0): p50 %.2f µs   p90 %.2f µs   max %.2f µs: unwinding is the rest\n",
            q(cbs0, 0.5) / 1e3, q(cbs0, 0.9) / 1e3, maximum(cbs0) / 1e3)
    @printf("  pause p50 %.2f ms: the callbacks are %.3f%% of a median pause\n", q(durs, 0.5) / 1e6,
            100 * q(cbs, 0.5) / q(durs, 0.5))
    mp, ml, mg = median(times[:plain]), median(times[:preload]), median(times[:gc])
    @printf("\nloop time, median of %d (min … max):\n", ROUNDS)
    for (name, m) in (("no Jäger", :plain), ("libjager preloaded, no plugin", :preload), ("JAGER_PLUGINS=gc", :gc))
        @printf("  %-31s %.3f s  (%.3f … %.3f)\n", name, median(times[m]), minimum(times[m]), maximum(times[m]))
    end
    noise = (maximum(times[:plain]) - minimum(times[:plain])) / mp
    @printf("  ratio gc / no Jäger            %.4f median, %.4f best-of\n", mg / mp, minimum(times[:gc]) / minimum(times[:plain]))
    @printf("  ratio gc / preloaded           %.4f median, %.4f best-of\n", mg / ml, minimum(times[:gc]) / minimum(times[:preload]))
    @printf("  run-to-run spread of no Jäger  %.2f%% (max−min over median): the noise floor\n", 100 * noise)
    pred = mean(cbs) * mean(colls)
    @printf("\npredicted cost = %.2f µs × %.0f collections = %.3f ms = %.4f%% of the loop\n",
            mean(cbs) / 1e3, mean(colls), pred / 1e6, 100 * pred / 1e9 / mg)
    @printf("measured difference (median gc − median no Jäger) = %.3f ms\n", (mg - mp) * 1e3)
end

main()
