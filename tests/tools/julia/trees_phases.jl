# trees_phases.jl OUT RING SAMPLE — a known call tree recorded through Jager.jl (the test
# tests/tools/test_trees_julia.js runs it with a 4 KiB and a 64 MiB ring, and thinned):
#   main { setup(1) step × 50 { force × 40 { pair × 10 } force_barrier × 40 } heavy(1, 20 ms) }
# Prints Jager.timing_tree (exact, and from the events only) as "node<TAB>path<TAB>calls<TAB>
# total_ns" lines, the run length Jager reads from the file, and print_timings' table.
using Jager

const out, ring, sample = ARGS[1], parse(Int, ARGS[2]), ARGS[3]
spin(ns) = (t = time_ns(); while time_ns() - t < ns end; nothing)

function phases()
    @jäger_block "main" begin
        @jäger_block "setup" spin(2_000_000)
        for s in 1:50
            @jäger_block "step" for f in 1:40
                @jäger_block "CalcFBHourglassForceForElems.omp" for p in 1:10
                    @jäger_block "pair" spin(500)
                end
                @jäger_block "CalcFBHourglassForceForElems.omp_barrier" spin(2000)
            end
        end
        @jäger_block "heavy" spin(20_000_000)
    end
end

Jager.start(; output = out, ring_bytes = ring, sample = sample == "all" ? :all : parse(Int, sample), env = false,
            quiet = true)
phases()
Jager.stop()

function walk(tag, n, prefix)
    for c in n.children
        k = prefix * "/" * c.name
        println(tag, "\t", k, "\t", c.calls, "\t", c.total_ns)
        walk(tag, c, k)
    end
end
walk("node", Jager.timing_tree(out), "")
walk("event_node", Jager.timing_tree(out; exact = false), "")
println("run\t", Jager.timing_run_ns(out))
Jager.print_timings(stdout)
