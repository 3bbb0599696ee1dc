# binding_cost.jl — what the Julia binding costs, side by side in one run (issue 9 item 10).
#
#   JAGER_LIB=build/lib/libjager.so JAGER_PLUGIN_PATH=build/plugins \
#     julia --project=bindings/julia bench/julia/binding_cost.jl [rounds=3] [scale=1]
#
# Every figure is the median over `rounds` fresh processes, plain and instrumented runs
# alternating, in process CPU seconds (clock(): a loaded machine disturbs it less than wall
# time). It prints, each next to its target:
#   using Jager          `using Jager` alone, and with JAGER_OUTPUT + JAGER_PLUGINS=gc,dispatch
#                        (which starts recording) — target ≤ 0.15 s
#   first @jäger call    the first call of a site while recording, minus the first plain call
#                        of the same function (both compile it) — target ≤ 20 ms; also with
#                        the gc and gc,dispatch plugins, and the second call
#   JIT before main      first main() of bench/julia/kernels.jl (mostly compilation),
#                        instrumented ÷ plain — target ≤ 1.10; with the IR sizes
#   main() slowdown      second main() with gc,dispatch ÷ plain — target ≤ 1.05 for calls ≥ 10 µs
#   Jager.stop()         on kernels.jl with gc,dispatch, split into the stop hooks (the
#                        dispatch sensor's final drain), symbolize! and the rest — target ≤ 0.5 s
#   span: may throw      ns per @jäger call around a call that may throw minus one around a
#                        proven-nothrow call (bench/julia/span_cost.jl has the full table) — target ≤ 10 ns;
#                        next to it Julia's own try/catch around the same call, without a span
#
# JAGER_BENCH_PROGRAM=/path/to/driver.jl measures another program instead of kernels.jl:
# one that takes `plain|jager [scale]`, makes its calls @jäger sites in mode "jager" and
# prints the same `key=value` line (kernels.jl's protocol) — e.g. a real multi-kernel code
# base fetched and instrumented outside the repository. Keys `ph_<name>` (seconds of a
# phase in the second main()) are printed as a per-phase table, plain against @jäger.
using Printf
const ROUNDS = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 3
const SCALE = length(ARGS) >= 2 ? ARGS[2] : "1"
const JULIA = joinpath(Sys.BINDIR, Base.julia_exename())
const PROJECT = normpath(joinpath(@__DIR__, "..", "..", "bindings", "julia"))
const KERNELS = get(ENV, "JAGER_BENCH_PROGRAM", joinpath(@__DIR__, "kernels.jl"))
const TMP = mktempdir()

median(v) = (s = sort(v); n = length(s); isodd(n) ? s[(n + 1) ÷ 2] : (s[n ÷ 2] + s[n ÷ 2 + 1]) / 2)

function julia_run(args::Vector{String}; env::Dict = Dict{String,String}())
    e = merge(Dict(k => v for (k, v) in ENV if !(k in ("JAGER_OUTPUT", "JAGER_PLUGINS"))), env)
    e["JAGER_QUIET"] = "1"
    return read(setenv(`$JULIA --startup-file=no --project=$PROJECT $args`, e), String)
end
parse_kv(s) = Dict(String(k) => parse(Float64, v) for (k, v) in (split(kv, '=') for kv in split(strip(s))))

const CPU = "cpu() = ccall(:clock, Clong, ()) / 1e6;"
const USING = CPU * "c = cpu(); using Jager; print(\"t=\", cpu() - c)"
const FIRST = CPU * raw"""
using Jager
@noinline work(x) = sum(abs2, x)
@noinline twin(x) = sum(abs2, x)
site(x) = @jäger work(x)
v = rand(100)
c = cpu(); twin(v); plain = cpu() - c
Jager.start(output = ARGS[1], plugins = length(ARGS) > 1 ? ARGS[2] : nothing, env = false, quiet = true)
c = cpu(); site(v); first = cpu() - c
c = cpu(); site(v); second = cpu() - c   # a signature's second call (its nothrow proof waits: Jager.NOTHROW_AFTER_CALLS)
Jager.stop()
print("plain=", plain, " first=", first, " second=", second)
"""
const SPANS = raw"""
using Jager
@noinline tiny(x::Float64) = x * 1.0000001 + 1.0
@noinline tiny_checked(x::Float64) = x < 0 ? throw(DomainError(x)) : x * 1.0000001 + 1.0
loop_nothrow(n) = (s = 0.0; for _ in 1:n; s = @jäger tiny(s); end; s)
loop_checked(n) = (s = 0.0; for _ in 1:n; s = @jäger tiny_checked(s); end; s)
# Julia's exception handler alone, around the same call (the floor of a guarded span)
loop_bare(n) = (s = 0.0; for _ in 1:n; s = tiny_checked(s); end; s)
loop_try(n) = (s = 0.0; for _ in 1:n; try s = tiny_checked(s) catch; rethrow() end; end; s)
best(f, n) = minimum((Jager.drain(); t = time_ns(); f(n); (time_ns() - t) / n) for _ in 1:15)
Jager.start(output = ARGS[1], env = false, quiet = true)
loop_nothrow(10); loop_checked(10); loop_bare(10); loop_try(10)
a = best(loop_nothrow, 20_000); b = best(loop_checked, 20_000)
c = best(loop_bare, 20_000); d = best(loop_try, 20_000)
print("nothrow=", a, " checked=", b, " try=", d - c, " proved=", Int(Jager.unguarded_now(Jager.SITES[1].slots[1])))
Jager.stop()
"""

rows = Dict{String,Vector{Float64}}()
add!(k, v) = push!(get!(rows, k, Float64[]), v)
full = Dict("JAGER_OUTPUT" => joinpath(TMP, "k.jgr"), "JAGER_PLUGINS" => "gc,dispatch")
julia_run(["-e", "using Jager"])   # precompile once (a fresh depot), outside the rounds
for r in 1:ROUNDS
    add!("using", parse_kv(julia_run(["-e", USING]))["t"])
    add!("using_env", parse_kv(julia_run(["-e", USING]; env = full))["t"])
    f = parse_kv(julia_run(["-e", FIRST, joinpath(TMP, "first.jgr")]))
    add!("first_extra", f["first"] - f["plain"]); add!("second_call", f["second"])
    g = parse_kv(julia_run(["-e", FIRST, joinpath(TMP, "first_gc.jgr"), "gc"]))
    add!("first_extra_gc", g["first"] - g["plain"])
    d = parse_kv(julia_run(["-e", FIRST, joinpath(TMP, "first_d.jgr"), "gc,dispatch"]))
    add!("first_extra_dispatch", d["first"] - d["plain"]); add!("second_call_dispatch", d["second"])
    p = parse_kv(julia_run([KERNELS, "plain", SCALE]))
    j = parse_kv(julia_run([KERNELS, "jager", SCALE]; env = full))
    add!("jit_plain", p["first"]); add!("jit_jager", j["first"]); add!("jit_ratio", j["first"] / p["first"])
    add!("run_plain", p["second"]); add!("run_jager", j["second"]); add!("run_ratio", j["second"] / p["second"])
    add!("ir_plain", p["ir"]); add!("ir_jager", j["ir"])
    for k in ("stop", "stop_hooks", "stop_symbolize", "stop_rest", "drain_compiles", "drain_verdicts", "drain_counts", "drain_census")
        haskey(j, k) && add!(k, j[k])
    end
    for k in keys(p)
        startswith(k, "ph_") && haskey(j, k) && (add!(k * "_plain", p[k]); add!(k * "_jager", j[k]))
    end
    s = parse_kv(julia_run(["-e", SPANS, joinpath(TMP, "spans.jgr")]))
    add!("span_nothrow", s["nothrow"]); add!("span_checked", s["checked"]); add!("span_delta", s["checked"] - s["nothrow"])
    add!("try_alone", s["try"])
end
m(k) = median(rows[k])
println("binding cost, median of $ROUNDS rounds (CPU seconds unless said), kernels.jl scale $SCALE")
@printf("  using Jager               %8.3f s   (with JAGER_OUTPUT+gc,dispatch: %.3f s)   target ≤ 0.15 s\n", m("using"), m("using_env"))
@printf("  first @jäger call         %8.1f ms  above the plain first call                      target ≤ 20 ms\n", 1e3 * m("first_extra"))
@printf("    with JAGER_PLUGINS=gc    %8.1f ms;  gc,dispatch %.1f ms;  second call %.1f ms (gc,dispatch %.1f ms)\n",
        1e3 * m("first_extra_gc"), 1e3 * m("first_extra_dispatch"), 1e3 * m("second_call"), 1e3 * m("second_call_dispatch"))
@printf("  JIT before main           %8.3f s   plain %.3f s  ratio %.2f  (IR %d vs %d stmts)  target ≤ 1.10\n",
        m("jit_jager"), m("jit_plain"), m("jit_ratio"), m("ir_jager"), m("ir_plain"))
@printf("  main() with gc,dispatch   %8.4f s   plain %.4f s  ratio %.2f                        target ≤ 1.05\n",
        m("run_jager"), m("run_plain"), m("run_ratio"))
@printf("  Jager.stop()              %8.3f s   hooks %.3f  symbolize %.3f  rest %.3f          target ≤ 0.5 s\n",
        m("stop"), m("stop_hooks"), m("stop_symbolize"), m("stop_rest"))
haskey(rows, "drain_compiles") &&
    @printf("    the hook's drain (CPU)   compile dump %.3f  verdicts %.3f  counts %.3f  census %.3f s\n",
            m("drain_compiles"), m("drain_verdicts"), m("drain_counts"), m("drain_census"))
@printf("  span, call may throw      %8.1f ns  proven nothrow %.1f ns  difference %.1f ns (wall, best of 15)  target ≤ 10 ns\n",
        m("span_checked"), m("span_nothrow"), m("span_delta"))
@printf("    Julia's try/catch alone  %8.1f ns  around the same call, no span (the floor of the difference on this Julia)\n",
        m("try_alone"))
phases = sort!([k[1:end-6] for k in keys(rows) if startswith(k, "ph_") && endswith(k, "_plain")])
if !isempty(phases)
    println("  per phase of the second main() (seconds, median):")
    for k in phases
        @printf("    %-20s plain %8.4f  @jäger %8.4f  ratio %.3f\n", k[4:end], m(k * "_plain"), m(k * "_jager"),
                m(k * "_jager") / m(k * "_plain"))
    end
end
