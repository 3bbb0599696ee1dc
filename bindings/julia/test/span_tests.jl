# Spans, nesting, sites and the bytes allocated inside spans, read back from the file.

@noinline sqrt_sum(n) = (s = 0.0; for i in 1:n; s += sqrt(i); end; s)
inner_call(n) = @jäger sqrt_sum(n)
const INNER_LINE = @__LINE__() - 1
function nested_blocks(k)
    @jäger_block "outer block" begin
        for i in 1:k
            inner_call(50)
        end
    end
end

# A block left by `return` must still close its span, or later spans would nest in it.
function early_exit(x)
    @jäger_block "early exit" begin
        x > 0 && return :early
        :late
    end
end

@noinline alloc_floats(n) = zeros(Float64, n)
alloc_site() = @jäger alloc_floats(8000)
# Measured inside a function: at top level the interpreter's own allocations count too.
allocated_floats(n) = @allocated alloc_floats(n)

@testset "spans and nesting" begin
    nested_blocks(1); early_exit(1); early_exit(-1) # compile outside the recording
    rec = recorded("spans") do
        for _ in 1:3
            nested_blocks(5)
        end
        early_exit(1)
        early_exit(-1)
        inner_call(1)                 # top level: no parent
    end
    @test rec.clean_end
    outer = site_id(rec, "outer block")
    inner = site_id(rec, "sqrt_sum")
    early = site_id(rec, "early exit")
    @test rec.sites[inner].file == @__FILE__
    @test rec.sites[inner].line == INNER_LINE
    @test rec.meta["julia.site.$inner.module"] == string(@__MODULE__)
    os, is_, es = spans(rec, outer), spans(rec, inner), spans(rec, early)
    @test length(os) == 3
    @test length(is_) == 16
    @test length(es) == 2
    @test all(s -> s.parent_id == 0, os)
    @test all(s -> s.parent_id == 0, es)           # no span left open by `return`
    byid = Dict((s.thread, s.span_id) => s for s in os)
    nested = [s for s in is_ if s.parent_id != 0]
    @test length(nested) == 15
    for s in nested
        parent = byid[(s.thread, s.parent_id)]
        @test parent.start_ns <= s.start_ns <= s.end_ns <= parent.end_ns
    end
    # Each outer span holds exactly 5 inner ones.
    @test sort([count(s -> s.parent_id == o.span_id && s.thread == o.thread, nested) for o in os]) == [5, 5, 5]
    @test count(s -> s.parent_id == 0, is_) == 1
    # The core's exact aggregates agree with the events.
    @test rec.stats[inner].calls == 16
    @test rec.stats[outer].calls == 3
    @test rec.stats[inner].total_ns == sum(s.end_ns - s.start_ns for s in is_)
end

@testset "@jäger keeps the caller's scope and values" begin
    function assign(v)
        @jäger s = sum(v)
        return s + 1
    end
    function block_value(x)
        y = @jäger_block "value" begin
            z = x * 2
            z + 1
        end
        return (y, z)
    end
    Jager.start(output = joinpath(TMP, "scope.jgr"), env = false, quiet = true)
    try
        @test assign([1, 2, 3]) == 7
        @test block_value(4) == (9, 8)
        @test (@jäger "named" max(3, 4)) == 4
        @test (@jaeger max(1, 2)) == 2
        @test (@jaeger_block "ascii" 5) == 5
    finally
        Jager.stop()
    end
    @test assign([1, 2, 3]) == 7                    # the same code while not recording
    @test block_value(4) == (9, 8)
    rec = JgrReader.read(joinpath(TMP, "scope.jgr"))
    @test length(spans(rec, site_id(rec, "sum"))) == 1
    @test length(spans(rec, site_id(rec, "named"))) == 1
    @test length(spans(rec, site_id(rec, "max"))) == 1
    @test length(spans(rec, site_id(rec, "ascii"))) == 1
end

@testset "macro arguments are checked at expansion" begin
    err(ex) = try
        macroexpand(@__MODULE__, ex)
        ""
    catch e
        sprint(showerror, e isa LoadError ? e.error : e)
    end
    @test occursin("give a name", err(:(@jäger begin 1 end)))
    @test occursin("literal string", err(:(@jäger_block "a$(1)b" begin 1 end)))
    @test occursin("needs a name and a block", err(:(@jäger_block begin 1 end)))
    @test occursin("must not be empty", err(:(@jäger "" sin(1.0))))
end

@testset "bytes allocated inside a span" begin
    alloc_site()
    allocated_floats(8000)
    expected = allocated_floats(8000)
    rec = recorded("bytes") do
        for _ in 1:4
            alloc_site()
        end
    end
    ss = spans(rec, site_id(rec, "alloc_floats"))
    @test length(ss) == 4
    for s in ss
        # 8000 Float64 are 64000 bytes of data; the array object adds its header and the
        # allocator rounds up the data block to its alignment, together < 256 bytes here.
        @test 64_000 <= s.bytes <= 64_000 + 256
        # The same counter around the same call outside a span gives the same number.
        @test s.bytes == expected
    end
    @test rec.stats[site_id(rec, "alloc_floats")].bytes == sum(s.bytes for s in ss)
    # With bytes = false the spans carry none.
    rec = recorded("nobytes"; bytes = false) do
        alloc_site()
    end
    @test only(spans(rec, site_id(rec, "alloc_floats"))).bytes == 0
end

kwfun(x; scale = 1) = x * scale
splatted(xs...) = sum(xs)

@testset "expression forms and their names" begin
    v = [1.0, 2.0]
    xs = (1, 2, 3)
    local results
    rec = recorded("forms") do
        results = (@jäger(kwfun(2; scale = 3)),
                   @jäger(kwfun(2, scale = 4)),
                   @jäger(splatted(xs...)),
                   @jäger(map(v) do x
                       x + 1
                   end),
                   @jäger(Base.identity(5)),
                   @jäger(sin.(v)))
    end
    @test results == (6, 8, 6, [2.0, 3.0], 5, sin.(v))
    @test length(site_ids(rec, "kwfun")) == 2                       # two sites, one name
    @test [length(spans(rec, id)) for id in site_ids(rec, "kwfun")] == [1, 1]
    @test length(spans(rec, site_id(rec, "splatted"))) == 1
    @test length(spans(rec, site_id(rec, "map"))) == 1
    @test length(spans(rec, site_id(rec, "Base.identity"))) == 1
    @test length(spans(rec, site_id(rec, "sin"))) == 1
    kw = only([s for s in Jager.sites() if s.name == "kwfun" && s.id == site_ids(rec, "kwfun")[1]])
    @test Jager.signature_counts(kw.id) == [Tuple{typeof(kwfun),Int} => 1]
end

# Two tasks interleaved on one thread: the first to begin ends first, while the other's
# span is still open. Each keeps its own duration, neither is its own parent, and nothing
# stays open after them.
@testset "spans of interleaved tasks" begin
    # One task's first run compiles while the other's sleep is over: under load that delay
    # (the short task cannot resume until the long one yields) outgrew the 80 ms between the
    # sleeps once. Compiled first, the recorded run has only the sleeps.
    interleave() = @sync begin
        @async @jäger_block "task short" sleep(0.02)
        @async @jäger_block "task long" sleep(0.1)
    end
    interleave()
    rec = recorded("tasks") do
        interleave()
        @jäger_block "after tasks" nothing
    end
    short = only(spans(rec, site_id(rec, "task short")))
    long = only(spans(rec, site_id(rec, "task long")))
    after = only(spans(rec, site_id(rec, "after tasks")))
    @test 0.02e9 <= short.end_ns - short.start_ns < long.end_ns - long.start_ns   # not the long sleep
    @test 0.1e9 <= long.end_ns - long.start_ns < 1e9
    @test short.start_ns < long.start_ns && short.end_ns < long.end_ns   # interleaved, not nested
    @test short.parent_id == 0 && long.parent_id == 0
    @test after.parent_id == 0
end
