# run_length.jl OUT — a single-threaded Julia program recorded with the gc plugin (test
# tests/tools/test_run_julia.js): a top-level "main" phase holding an allocating phase
# (automatic collections, so the gc plugin's cumulative gc.sample gc_total_ns grows) and a
# compute phase. Prints the run length Jager reads from the file ("run<TAB>ns") and
# print_timings' table.
using Jager

const out = ARGS[1]

function churn(n)
    s = 0
    for _ in 1:n
        v = zeros(2000)          # 16 KB a call: collections every few MB
        s += length(v)
    end
    return s
end

function compute(n)
    s = 0.0
    for i in 1:n
        s += sqrt(Float64(i))
    end
    return s
end

function phases()
    @jäger_block "main" begin
        @jäger_block "alloc" churn(100_000)
        @jäger_block "compute" compute(20_000_000)
    end
end

phases()                         # compiled before the recording
Jager.start(; output = out, plugins = "gc", env = false, quiet = true)
phases()
Jager.stop()
println("run\t", Jager.timing_run_ns(out))
Jager.print_timings(stdout)
