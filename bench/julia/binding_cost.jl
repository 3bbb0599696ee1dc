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
#                        of the same function (both compile it) — target ≤ 20 ms
#   JIT before main      first main() of bench/julia/kernels.jl (mostly compilation),
#                        instrumented ÷ plain — target ≤ 1.10; with the IR sizes
#   main() slowdown      second main() with gc,dispatch ÷ plain — target ≤ 1.05 for calls ≥ 10 µs
#   Jager.stop()         on kernels.jl with gc,dispatch, split into the stop hooks (the
#                        dispatch sensor's final drain), symbolize! and the rest — target ≤ 0.5 s
#   span: may throw      ns per @jäger call around a call that may throw minus one around a
#                        proven-nothrow call (bench/julia/span_cost.jl has the full table) — target ≤ 10 ns
using Printf
const ROUNDS = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 3
const SCALE = length(ARGS) >= 2 ? ARGS[2] : "1"
const JULIA = joinpath(Sys.BINDIR, Base.julia_exename())
const PROJECT = normpath(joinpath(@__DIR__, "..", "..", "bindings", "julia"))
const KERNELS = joinpath(@__DIR__, "kernels.jl")
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
Jager.start(output = ARGS[1], env = false, quiet = true)
c = cpu(); site(v); first = cpu() - c
Jager.stop()
print("plain=", plain, " first=", first)
"""
const SPANS = raw"""
using Jager
@noinline tiny(x::Float64) = x * 1.0000001 + 1.0
@noinline tiny_checked(x::Float64) = x < 0 ? throw(DomainError(x)) : x * 1.0000001 + 1.0
loop_nothrow(n) = (s = 0.0; for _ in 1:n; s = @jäger tiny(s); end; s)
loop_checked(n) = (s = 0.0; for _ in 1:n; s = @jäger tiny_checked(s); end; s)
best(f, n) = minimum((Jager.drain(); t = time_ns(); f(n); (time_ns() - t) / n) for _ in 1:15)
Jager.start(output = ARGS[1], env = false, quiet = true)
loop_nothrow(10); loop_checked(10)
a = best(loop_nothrow, 20_000); b = best(loop_checked, 20_000)
print("nothrow=", a, " checked=", b, " proved=", Int(Jager.unguarded_now(Jager.SITES[1].slots[1])))
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
    add!("first_extra", f["first"] - f["plain"])
    p = parse_kv(julia_run([KERNELS, "plain", SCALE]))
    j = parse_kv(julia_run([KERNELS, "jager", SCALE]; env = full))
    add!("jit_plain", p["first"]); add!("jit_jager", j["first"]); add!("jit_ratio", j["first"] / p["first"])
    add!("run_plain", p["second"]); add!("run_jager", j["second"]); add!("run_ratio", j["second"] / p["second"])
    add!("ir_plain", p["ir"]); add!("ir_jager", j["ir"])
    for k in ("stop", "stop_hooks", "stop_symbolize", "stop_rest")
        add!(k, j[k])
    end
    s = parse_kv(julia_run(["-e", SPANS, joinpath(TMP, "spans.jgr")]))
    add!("span_nothrow", s["nothrow"]); add!("span_checked", s["checked"]); add!("span_delta", s["checked"] - s["nothrow"])
end
m(k) = median(rows[k])
println("binding cost, median of $ROUNDS rounds (CPU seconds unless said), kernels.jl scale $SCALE")
@printf("  using Jager               %8.3f s   (with JAGER_OUTPUT+gc,dispatch: %.3f s)   target ≤ 0.15 s\n", m("using"), m("using_env"))
@printf("  first @jäger call         %8.1f ms  above the plain first call                      target ≤ 20 ms\n", 1e3 * m("first_extra"))
@printf("  JIT before main           %8.3f s   plain %.3f s  ratio %.2f  (IR %d vs %d stmts)  target ≤ 1.10\n",
        m("jit_jager"), m("jit_plain"), m("jit_ratio"), m("ir_jager"), m("ir_plain"))
@printf("  main() with gc,dispatch   %8.4f s   plain %.4f s  ratio %.2f                        target ≤ 1.05\n",
        m("run_jager"), m("run_plain"), m("run_ratio"))
@printf("  Jager.stop()              %8.3f s   hooks %.3f  symbolize %.3f  rest %.3f          target ≤ 0.5 s\n",
        m("stop"), m("stop_hooks"), m("stop_symbolize"), m("stop_rest"))
@printf("  span, call may throw      %8.1f ns  proven nothrow %.1f ns  difference %.1f ns (wall, best of 15)  target ≤ 10 ns\n",
        m("span_checked"), m("span_nothrow"), m("span_delta"))
