# event_context_cost.jl — what each field of the event context costs, side by side in one run.
#
#   JAGER_LIB=build/lib/libjager.so julia --project=bindings/julia bench/julia/event_context_cost.jl [N]
#
# Rows, each best of RUNS interleaved runs of N iterations, rings drained before each run:
#   span              @jäger tiny(x), task ids off  (the baseline of the span rows)
#   span+task         the same with task ids on (one task: the check is a load and a compare)
#   span+task switch  two @async tasks taking turns (yield) around spans: a task record per switch
#   span+attrs        @jäger tiny(x) attrs = (:A => A,) with A a 100×100 matrix
#   log / log+gc      @info through JagerLogger without / with the GC counters
#   log+gc+method     and the innermost MethodInstance (JAGER_JULIA_METHOD, cached per address)
#   span+method       @jäger tiny(x) with JAGER_JULIA_METHOD=all (a backtrace per span)
#   mark / mark+gc    Jager.mark without / with the GC counters
#   gc_counters()     reading Base.gc_num() into the four counters
using Jager, Logging, Printf

const N = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 10_000
const RUNS = 15

@noinline tiny(x::Float64) = x * 1.0000001 + 1.0

function spans(n)
    s = 0.0
    for i in 1:n
        s = @jäger tiny(s)
    end
    return s
end
function spans_attrs(n, A)
    s = 0.0
    for i in 1:n
        s = @jäger tiny(s) attrs = (:A => A,)
    end
    return s
end
function switching(n)
    acc = Ref(0.0)
    body() = for i in 1:(n ÷ 2)
        acc[] = @jäger tiny(acc[])
        yield()
    end
    t1 = @async body()
    t2 = @async body()
    wait(t1); wait(t2)
    return acc[]
end
function yielding(n)   # the same tasks and yields without spans: the switch's own cost
    acc = Ref(0.0)
    body() = for i in 1:(n ÷ 2)
        acc[] = tiny(acc[])
        yield()
    end
    t1 = @async body()
    t2 = @async body()
    wait(t1); wait(t2)
    return acc[]
end
function logs(n)
    for i in 1:n
        @info "step" i
    end
end
function marks(n)
    for i in 1:n
        Jager.mark("m")
    end
end
function counters(n)
    s = 0
    for i in 1:n
        s += Jager.gc_counters().pauses
    end
    return s
end

function timeit(f, n)
    Jager.drain()
    t0 = time_ns()
    f(n)
    return (time_ns() - t0) / n
end

const A = rand(100, 100)
const out = joinpath(mktempdir(), "cost.jgr")
Jager.start(output = out, env = false, quiet = true)
const logger = JagerLogger()
rows = [("span", n -> spans(n), false, true), ("span+task", n -> spans(n), true, true),
        ("span+method", n -> spans(n), true, true),
        ("yield alone (2 tasks)", n -> yielding(n), false, true),
        ("span+task switch (2 tasks)", n -> switching(n), true, true),
        ("span+attrs (matrix)", n -> spans_attrs(n, A), true, true),
        ("log", n -> with_logger(() -> logs(n), logger), true, false),
        ("log+gc", n -> with_logger(() -> logs(n), logger), true, true),
        ("log+gc+method", n -> with_logger(() -> logs(n), logger), true, true),
        ("mark", n -> marks(n), true, false), ("mark+gc", n -> marks(n), true, true),
        ("gc_counters()", n -> counters(n), true, true)]
best = fill(Inf, length(rows))
for r in 1:RUNS, (i, (name, f, tasks, gc)) in enumerate(rows)
    Jager.TRACK_TASKS[] = tasks
    Jager.TRACK_GC[] = gc
    Jager.METHOD_LOGS[] = name == "log+gc+method"
    Jager.METHOD_SPANS[] = name == "span+method"
    Jager.reset_task_slots!()
    best[i] = min(best[i], timeit(f, N))
end
Jager.stop()
const BASES = Dict("span+task" => "span", "span+method" => "span", "span+attrs (matrix)" => "span",
                   "span+task switch (2 tasks)" => "yield alone (2 tasks)", "log+gc" => "log",
                   "log+gc+method" => "log", "mark+gc" => "mark")
base(i) = haskey(BASES, rows[i][1]) ? findfirst(r -> r[1] == BASES[rows[i][1]], rows) : i
@printf("%-28s %10s %12s %8s\n", "row", "ns/iter", "vs", "ratio")
for (i, (name, _, _, _)) in enumerate(rows)
    b = base(i)
    @printf("%-28s %10.1f %12s %8.2f\n", name, best[i], b == i ? "-" : rows[b][1], best[i] / best[b])
end
