# slowdown_curve.jl — main() slowdown against call duration (issue 9 item 10), micro loops.
#
#   JAGER_LIB=build/lib/libjager.so JAGER_PLUGIN_PATH=build/plugins \
#     julia --project=bindings/julia bench/julia/slowdown_curve.jl [rounds=30] [plugins=gc,dispatch]
#
# A kernel whose call takes a chosen time (a dependent floating-point chain of `work`
# steps, ~1 ns each, and an allocation every call so the gc plugin has something to see)
# is called in a loop, plain and through @jäger, in the same process while recording with
# `plugins`. Each row: the call's duration, plain and instrumented time of a batch of
# ≈ 10 ms (best of `rounds` batches, alternating: short batches and the minimum keep a
# loaded machine's preemptions out), their ratio, and the extra time per call. The target
# is a ratio ≤ 1.05 for calls of 10 µs and more. Prints a table; asserts nothing.
using Jager, Printf
const ROUNDS = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 30
const PLUGINS = length(ARGS) >= 2 ? ARGS[2] : "gc,dispatch"

@noinline function kernel(x::Float64, work::Int)
    buf = Vector{Float64}(undef, 8)          # 128 bytes a call: spans count bytes, gc sees churn
    s = x
    for i in 1:work
        s = muladd(s, 0.999999, 1.0e-9 * i)
    end
    buf[1] = s
    return buf[1]
end

plain_loop(n, work) = (s = 0.0; for _ in 1:n; s = kernel(s, work); end; s)
jager_loop(n, work) = (s = 0.0; for _ in 1:n; s = @jäger kernel(s, work); end; s)

timed(f, n, w) = (t = time_ns(); f(n, w); (time_ns() - t) / 1e9)

Jager.start(output = joinpath(mktempdir(), "curve.jgr"), plugins = PLUGINS, env = false, quiet = true)
println("main() slowdown against call duration, plugins=$PLUGINS, best of $ROUNDS")
println("  call duration   calls/batch   plain batch   @jäger batch   ratio   extra per call")
for work in (30, 300, 3_000, 30_000, 300_000)
    n = max(5, round(Int, 1.0e7 / (2.5 * work + 100)))   # ≈ 10 ms per batch
    plain_loop(10, work); jager_loop(10, work)        # compile both, decide the site
    Jager.drain()
    p = Inf; j = Inf
    for _ in 1:ROUNDS
        p = min(p, timed(plain_loop, n, work))
        j = min(j, timed(jager_loop, n, work))
        Jager.drain()                                  # rings drained between rounds, not inside
    end
    @printf("  %10.2f µs   %11d   %8.3f ms   %9.3f ms   %5.3f   %8.1f ns\n",
            1e6 * p / n, n, 1e3 * p, 1e3 * j, j / p, 1e9 * (j - p) / n)
end
Jager.stop()
