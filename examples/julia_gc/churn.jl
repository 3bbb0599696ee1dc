# churn.jl — a solver loop that allocates a temporary in its inner step, the classic
# source of GC pauses, recorded with the gc plugin.
#
#   # with the binding: spans, GC time per span, named trigger stacks
#   JAGER_LIB=build/lib/libjager.so JAGER_PLUGIN_PATH=build/plugins \
#     julia --project=bindings/julia examples/julia_gc/churn.jl churn.jgr
#   build/bin/jager summary churn.jgr     # GC % per site, the allocating function
#
#   # zero-code: the same loop without Jäger in the source (JAGER_NO_BINDING=1)
#   LD_PRELOAD=build/lib/libjager.so JAGER_PLUGINS=gc JAGER_OUTPUT=churn0.jgr \
#     JAGER_PLUGIN_PATH=build/plugins JAGER_NO_BINDING=1 julia examples/julia_gc/churn.jl
const USE_BINDING = get(ENV, "JAGER_NO_BINDING", "") != "1"
if USE_BINDING
    using Jager
else
    macro jäger(ex) esc(ex) end   # the loop below runs unchanged without the binding
end

# The step allocates `u .+ dt .* f(u)` afresh each time: ~8 KB per call.
@noinline step(u, dt) = u .+ dt .* sin.(u)

# The fix, for comparison: the same update in place allocates nothing.
@noinline function step!(v, u, dt)
    @. v = u + dt * sin(u)
    return v
end

function solve(u0, nsteps)
    u = copy(u0)
    for _ in 1:nsteps
        u = @jäger step(u, 1e-3)
    end
    return u
end

function solve_inplace(u0, nsteps)
    u, v = copy(u0), similar(u0)
    for _ in 1:nsteps
        @jäger step!(v, u, 1e-3)
        u, v = v, u
    end
    return u
end

function main(out)
    u0 = rand(1000)
    solve(u0, 10); solve_inplace(u0, 10)          # compile outside the recording
    USE_BINDING && Jager.start(output = out, plugins = "gc")
    g0 = Base.gc_num()
    a = @jäger solve(u0, 200_000)
    b = @jäger solve_inplace(u0, 200_000)
    g1 = Base.gc_num()
    USE_BINDING && Jager.stop()
    println("collections: ", g1.pause - g0.pause, ", GC time: ", round((g1.total_time - g0.total_time) / 1e6, digits = 1),
            " ms; results agree: ", isapprox(a, b))
    USE_BINDING && println("recording: ", out)
end

main(isempty(ARGS) ? "churn.jgr" : ARGS[1])
