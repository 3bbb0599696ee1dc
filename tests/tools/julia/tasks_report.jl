# tasks_report.jl OUT — Julia tasks, GC counters and code.method through the binding, for
# tests/tools/test_tasks_julia.js: the root task opens "root"; two Jager.@async tasks
# ("alpha", "beta") yield inside their spans, so they interleave on one thread, and log
# from `work(::Int)`; the root marks "done". Prints one JSON line: each task's id and the
# spans, logs and marks it emitted.
using Jager, Logging

const out = ARGS[1]
const ids = Dict{String,UInt64}()

@noinline function work(k::Int)
    @info "tick" k
    return k
end

function run_tasks()
    @jäger_block "root" begin
        ids["root"] = Jager.task_id()
        a = Jager.@async "alpha" begin
            ids["alpha"] = Jager.task_id()
            for i in 1:3
                @jäger_block "alpha_step" begin
                    work(i)
                    yield()
                end
            end
        end
        b = Jager.@async "beta" begin
            ids["beta"] = Jager.task_id()
            for i in 1:2
                @jäger_block "beta_step" begin
                    work(10 + i)
                    yield()
                end
            end
        end
        wait(a)
        wait(b)
        Jager.mark("done")
    end
end

global_logger(JagerLogger())
Jager.start(; output = out, sample = :all, env = false, quiet = true)
run_tasks()
Jager.stop()
println("{\"tasks\":[{\"id\":", ids["root"], ",\"spans\":1,\"logs\":0,\"marks\":1},",
        "{\"id\":", ids["alpha"], ",\"name\":\"alpha\",\"spans\":3,\"logs\":3,\"marks\":0},",
        "{\"id\":", ids["beta"], ",\"name\":\"beta\",\"spans\":2,\"logs\":2,\"marks\":0}],",
        "\"method\":\"", string(Tuple{typeof(work),Int}), "\"}")
