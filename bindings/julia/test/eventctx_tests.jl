# eventctx_tests.jl — the event context: task ids and per-task trees, GC counters on logs
# and marks, Julia values as span attributes, traceparent inject/extract.
using SparseArrays

const JAGER_CLI = get(ENV, "JAGER_CLI", joinpath(dirname(dirname(Jager.libpath())), "bin", "jager"))

# Two @async tasks on this thread, each yielding inside its spans so that they interleave;
# spawned inside a span of the root task.
function interleaved_tasks(ids::Vector{UInt64}, opened::Vector{Tuple{Symbol,Int,UInt64}})
    ids[1] = Jager.task_id()
    @jäger_block "main" begin
        ta = Jager.@async "worker-a" begin
            ids[2] = Jager.task_id()
            @jäger_block "a.outer" begin
                yield()
                for i in 1:3
                    @jäger_block "a.inner" begin
                        yield()
                    end
                end
                yield()
            end
        end
        tb = Jager.@async begin
            ids[3] = Jager.task_id()
            @jäger_block "b.outer" begin
                yield()
                for i in 1:2
                    @jäger_block "b.inner" begin
                        yield()
                        @jäger_block "b.leaf" yield()
                    end
                end
            end
        end
        wait(ta)
        wait(tb)
    end
    return nothing
end

@testset "tasks: ids and per-task trees" begin
    ids = zeros(UInt64, 3)
    path = joinpath(TMP, "tasks.jgr")
    Jager.record(() -> interleaved_tasks(ids, Tuple{Symbol,Int,UInt64}[]); output = path, env = false, quiet = true)
    rec = JgrReader.read(path)
    @test length(unique(ids)) == 3 && all(>(0), ids)
    sp = spans(rec)
    byname(n) = [s for s in sp if s.site == site_id(rec, n)]
    main = byname("main"); ao = byname("a.outer"); ai = byname("a.inner")
    bo = byname("b.outer"); bi = byname("b.inner"); bl = byname("b.leaf")
    @test (length(main), length(ao), length(ai), length(bo), length(bi), length(bl)) == (1, 1, 3, 1, 2, 2)
    # they did interleave: b.outer began while a.outer was open, and ended first or after
    @test bo[1].start_ns < ao[1].end_ns && ao[1].start_ns < bo[1].end_ns
    @test all(s -> s.thread == main[1].thread, sp)
    # each span's task
    @test main[1].task == ids[1]
    @test all(s -> s.task == ids[2], vcat(ao, ai))
    @test all(s -> s.task == ids[3], vcat(bo, bi, bl))
    # per-task trees: exact parents, never another task's span
    @test ao[1].parent_id == 0 && bo[1].parent_id == 0    # roots of their tasks
    @test all(s -> s.parent_id == ao[1].span_id, ai)
    @test all(s -> s.parent_id == bo[1].span_id, bi)
    @test sort([s.parent_id for s in bl]) == sort([s.span_id for s in bi])
    @test main[1].parent_id == 0
    # the spawned tasks' parent task and the span open in it, as run metadata
    @test rec.meta["julia.task.$(ids[2]).parent"] == string(ids[1])
    @test rec.meta["julia.task.$(ids[3]).parent"] == string(ids[1])
    @test rec.meta["julia.task.$(ids[2]).parent_span"] == "$(site_id(rec, "main")):$(main[1].span_id)"
    @test rec.meta["julia.task.$(ids[2]).name"] == "worker-a"
    @test !haskey(rec.meta, "julia.task.$(ids[3]).name")
    # task records only at switches: fewer than the spans' begins and ends
    ntask = count(e -> e.kind === :task, rec.events)
    @test 3 <= ntask < 2 * length(sp)
    # jager summary --by task: calls per (site, task), from the task records
    @test isfile(JAGER_CLI)
    out = read(`$JAGER_CLI summary --by task --format json $path`, String)
    for (name, t, n) in (("a.inner", "$(ids[2]) (worker-a)", 3), ("b.inner", ids[3], 2), ("b.leaf", ids[3], 2), ("main", ids[1], 1))
        @test occursin("\"name\":\"$name\",\"value\":\"$t\",\"calls\":$n,", out)
    end
    txt = read(`$JAGER_CLI summary --by task $path`, String)
    @test occursin("By task", txt)
end

@testset "tasks: off" begin
    rec = recorded("tasks_off"; tasks = false) do
        @jäger_block "x" nothing
    end
    if Jager.TASKS_MIGRATE   # the core is told the task regardless: it parents migrated spans by it
        @test spans(rec)[1].task != 0
    else
        @test count(e -> e.kind === :task, rec.events) == 0
        @test spans(rec)[1].task == 0
    end
    # the capability, cross-checked against the version here (tasks.jl asks the Task type)
    @test Jager.TASKS_MIGRATE == (VERSION >= v"1.7")
end

# The GC counters read just before, on the same task, with collections held off so that
# none can run in between; the mark's bytes are exact (nothing allocates between the reads).
mark_probe() = Jager.mark("again")
function gc_probe(out::Vector{Any})
    GC.gc(false)
    GC.enable(false)
    try
        n1 = Base.gc_num()
        Jager.mark("probe")
        n2 = Base.gc_num()
        @info "logged" step = 3
        push!(out, n1, n2)
        push!(out, @allocated Jager.gc_counters())
        mark_probe()
        push!(out, @allocated mark_probe())
    finally
        GC.enable(true)
    end
    return nothing
end

@testset "GC counters on marks and logs" begin
    out = Any[]
    path = joinpath(TMP, "gc_counters.jgr")
    with_logger(JagerLogger()) do
        Jager.record(() -> gc_probe(out); output = path, env = false, quiet = true)
    end
    rec = JgrReader.read(path)
    n1, n2, alloc, markalloc = out
    m = [e for e in rec.events if e.kind === :mark && e.name == "probe"]
    @test length(m) == 1
    a = m[1].attrs
    @test a["gc.allocated_bytes"] == Base.gc_total_bytes(n1)
    @test a["gc.pauses"] == n1.pause
    @test a["gc.time_ns"] == n1.total_time
    @test a["gc.full_sweeps"] == n1.full_sweep
    @test m[1].task == Jager.task_id()
    l = [e for e in logs(rec) if e.body == "logged"]
    @test length(l) == 1
    la = l[1].attrs
    @test la["step"] == 3
    @test la["gc.pauses"] == n2.pause && la["gc.full_sweeps"] == n2.full_sweep && la["gc.time_ns"] == n2.total_time
    @test la["gc.allocated_bytes"] >= Base.gc_total_bytes(n2)     # the logging macro allocates first
    @test l[1].task == Jager.task_id()
    @test alloc == 0
    @test markalloc == 0          # a mark with its counters allocates nothing
end

struct Grid
    nx::Int
    ny::Int
end
Jager.attributes(g::Grid) = ("nx" => g.nx, "ny" => g.ny)

relax!(u, S, r, s, g) = sum(u)

function attrs_probe(u, S, sizes)
    r = 2:3:20
    s = "a" ^ 100
    @jäger relax!(u, S, r, s, Grid(4, 5)) attrs = (:grid => size(u), :A => S, :u => u, :r => r, :s => s, :g => Grid(4, 5), :k => 7)
    @jäger relax!(u, S, r, s, nothing) attrs = :args
    @jäger_block "phase" attrs = (:iter => 3,) begin
        nothing
    end
    Jager.expand_attrs((:A => S,))
    push!(sizes, @allocated Jager.expand_attrs((:A => S,)))
    return nothing
end

@testset "Julia values as span attributes" begin
    u = zeros(30, 40)
    S = sprand(MersenneTwister(1), 1000, 2000, 0.01)
    sizes = Int[]
    rec = recorded("value_attrs") do
        attrs_probe(u, S, sizes)
    end
    at = [e for e in rec.events if e.kind === :span_attr]
    @test length(at) == 3
    relax = site_ids(rec, "relax!")       # two sites (two lines), in order
    @test length(relax) == 2
    a1 = [e for e in at if e.site == relax[1]][1].attrs
    a2 = [e for e in at if e.site == relax[2]][1].attrs
    @test a1["grid"] == "30×40"
    @test a1["A.eltype"] == "Float64" && a1["A.size"] == "1000×2000" && a1["A.nnz"] == nnz(S)
    @test a1["A.density"] ≈ nnz(S) / 2_000_000
    @test a1["u.eltype"] == "Float64" && a1["u.size"] == "30×40" && a1["u.length"] == 1200
    @test (a1["r.first"], a1["r.last"], a1["r.step"], a1["r.length"]) == (2, 20, 3, 7)
    @test a1["s"] == "a"^64 * "…" && a1["s.length"] == 100
    @test a1["g.nx"] == 4 && a1["g.ny"] == 5 && a1["k"] == 7
    @test a2["arg1.size"] == "30×40" && a2["arg2.nnz"] == nnz(S) && a2["arg5.type"] == "Nothing"
    ph = [e for e in at if e.site == site_id(rec, "phase")][1]
    @test ph.attrs["iter"] == 3
    # the attribute event names the span it describes
    @test any(s -> s.span_id == ph.span_id, spans(rec, site_id(rec, "phase")))
    # describing the matrix does not touch its contents (≈ 16 bytes × nnz = 320 KB)
    @test sizes[1] < 8_000 && 16 * nnz(S) > 300_000   # a few short strings (2032 bytes seen), not the contents
end

@testset "traceparent inject/extract" begin
    seen = Any[]
    rec = recorded("inject") do
        h = Dict{String,String}()
        v = Jager.inject(h)
        push!(seen, v, h["traceparent"], Jager.traceparent())
        hv = Pair{String,String}["Content-Type" => "text/plain", "TraceParent" => v]
        ctx = Jager.extract(hv)
        push!(seen, ctx === nothing ? nothing : Jager.format_traceparent(ctx))
        push!(seen, Jager.extract(Dict("traceparent" => "garbage")), Jager.traceparent())
        v2 = Jager.inject(hv)
        push!(seen, count(p -> lowercase(p.first) == "traceparent", hv))
    end
    v, hv, cur, back, bad, after, n = seen
    @test v isa String && length(v) == 55 && hv == v && cur == v && back == v
    @test bad === nothing && after == v
    @test n == 1
    @test Jager.inject(Dict{String,String}()) === nothing   # not recording
end

@noinline function logs_from_here(x::Float64)
    @info "from here" x
    return x
end
@noinline thrower(x::Int) = x > 0 ? error("boom") : x

@testset "innermost method on logs and errors" begin
    rec = recorded("method") do
        with_logger(JagerLogger()) do
            logs_from_here(1.5)
        end
        try
            @jäger thrower(1)
        catch
        end
    end
    l = only([e for e in logs(rec) if e.body == "from here"])
    @test l.attrs["code.method"] == string(Tuple{typeof(logs_from_here),Float64})
    err = only([e for e in rec.events if e.kind === :span_attr && haskey(e.attrs, "exception.type")])
    # thrown by `error` inside thrower: the innermost method is Base's error(::String)
    @test err.attrs["code.method"] in (string(Tuple{typeof(error),String}), string(Tuple{typeof(thrower),Int}))
    @test Jager.innermost_method(Ptr{Cvoid}[]) === nothing
end

@testset "code.method interned: one string-table entry per method" begin
    empty!(JgrReader.INTERNED)
    rec = recorded("method_interned") do
        with_logger(JagerLogger()) do
            for x in (1.5, 2.5, 3.5)
                logs_from_here(x)
            end
        end
    end
    ls = [e for e in logs(rec) if e.body == "from here"]
    @test length(ls) == 3
    @test all(l -> l.attrs["code.method"] == string(Tuple{typeof(logs_from_here),Float64}), ls)
    @test length(JgrReader.INTERNED["code.method"]) == 1   # three events, one id
    a, b = Jager.InternedString("jager test value"), Jager.InternedString("jager test value")
    @test a.id == b.id && a.id != 0
end

@noinline spanned(x::Int) = x + 1
function spans_with_method()
    @jäger spanned(1)
end

@testset "JAGER_JULIA_METHOD" begin
    old = get(ENV, "JAGER_JULIA_METHOD", nothing)
    try
        ENV["JAGER_JULIA_METHOD"] = "all"
        rec = recorded("method_all") do
            spans_with_method()
        end
        a = only([e for e in rec.events if e.kind === :span_attr])
        @test a.attrs["code.method"] == string(Tuple{typeof(spans_with_method)})
        @test a.span_id == only(spans(rec, site_id(rec, "spanned"))).span_id
        ENV["JAGER_JULIA_METHOD"] = "0"
        rec = recorded("method_off") do
            with_logger(JagerLogger()) do
                logs_from_here(2.5)
            end
        end
        @test !haskey(only(logs(rec)).attrs, "code.method")
    finally
        old === nothing ? delete!(ENV, "JAGER_JULIA_METHOD") : (ENV["JAGER_JULIA_METHOD"] = old)
    end
end

# Two @async "request handlers" on one thread, each continuing another trace, yielding
# between their log records: each record carries its own task's trace.
function two_requests(tps::Vector{String})
    Jager.set_context!(nothing)   # the root task: no trace of its own (whatever the thread had)
    with_logger(JagerLogger()) do
        ts = map(1:2) do k
            @async begin
                Jager.extract(Dict("traceparent" => tps[k]))
                for i in 1:3
                    @jäger_block "handle" begin
                        @info "req" k i
                        yield()
                    end
                end
            end
        end
        foreach(wait, ts)
        @info "main after"
    end
end

@testset "trace context per task" begin
    tps = ["00-" * "1"^32 * "-" * "a"^16 * "-01", "00-" * "2"^32 * "-" * "b"^16 * "-01"]
    rec = recorded("ctx_tasks") do
        two_requests(tps)
    end
    ls = [e for e in logs(rec) if e.body == "req"]
    @test length(ls) == 6
    for e in ls
        @test bytes2hex(e.trace_id) == (e.attrs["k"] == 1 ? "1"^32 : "2"^32)
    end
    # they interleaved: the two traces alternate in the thread's record order
    @test [e.attrs["k"] for e in ls][1:2] == [1, 2]
    main = only([e for e in logs(rec) if e.body == "main after"])
    @test all(==(0x00), main.trace_id)    # the root task has no context of its own
end

@testset "Jager.@spawn records its parent" begin
    got = UInt64[0, 0]
    rec = recorded("spawn") do
        got[1] = Jager.task_id()
        @jäger_block "spawner" begin
            t = Jager.@spawn "spawned" begin
                @jäger_block "in spawned" nothing
                Jager.task_id()
            end
            got[2] = fetch(t)
        end
    end
    @test got[2] != got[1]
    @test rec.meta["julia.task.$(got[2]).parent"] == string(got[1])
    @test rec.meta["julia.task.$(got[2]).name"] == "spawned"
    s = only(spans(rec, site_id(rec, "in spawned")))
    @test s.task == got[2] && s.parent_id == 0
end

const ATTR_EVALS = Ref(0)
counted_attr() = (ATTR_EVALS[] += 1; 5)
attrs_when(x) = @jäger identity(x) attrs = (:n => counted_attr(),)

@testset "attrs = … only while recording" begin
    ATTR_EVALS[] = 0
    @test attrs_when(3) == 3                 # not recording: the attributes are not evaluated
    @test ATTR_EVALS[] == 0
    rec = recorded("attrs_when") do
        attrs_when(4)
    end
    @test ATTR_EVALS[] == 1
    @test only([e for e in rec.events if e.kind === :span_attr]).attrs["n"] == 5
    @test_throws ArgumentError Jager.span_expr(LineNumberNode(1, :x), Main,
                                               (:(f(x) = x), :(attrs = (:a => 1,))), false, "@jäger")
    @test_throws ArgumentError Jager.span_expr(LineNumberNode(1, :x), Main,
                                               ("b", :(attrs = :args), :(begin end)), true, "@jäger_block")
end
