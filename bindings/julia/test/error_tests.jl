# An exception inside a span is recorded (type, message, signature, site) and rethrown
# unchanged: the same object, the same backtrace.

struct SolverDiverged <: Exception
    iteration::Int
end
Base.showerror(io::IO, e::SolverDiverged) = print(io, "solver diverged at iteration ", e.iteration)

const DIVERGED = SolverDiverged(17)
@noinline solve_step(x::Float64, n::Int) = x > 1 ? throw(DIVERGED) : x * n
step_site(x, n) = @jäger solve_step(x, n)
const STEP_LINE = @__LINE__() - 1
block_thrower(x) = @jäger_block "throwing block" begin
    x > 1 && throw(ArgumentError("x too large: $x"))
    x
end

catch_with_trace(f) = try
    f()
    nothing
catch e
    (e, stacktrace(catch_backtrace()))
end

@testset "exceptions are recorded and rethrown unchanged" begin
    step_site(0.5, 2); block_thrower(0)
    plain = catch_with_trace(() -> step_site(2.0, 3))   # not recording: the reference
    local inside, inside_block
    rec = recorded("errors") do
        inside = catch_with_trace(() -> step_site(2.0, 3))
        @test step_site(0.5, 4) == 2.0
        inside_block = catch_with_trace(() -> block_thrower(5))
    end
    e, st = inside
    @test e === DIVERGED                       # the very object thrown
    @test plain[1] === DIVERGED
    # The backtrace starts where the exception was thrown, as without Jäger.
    @test st[1].func === :solve_step
    @test (st[1].func, st[1].file, st[1].line) == (plain[2][1].func, plain[2][1].file, plain[2][1].line)
    # The caller's frame keeps the user's line: the line of the @jäger call.
    @test (st[2].func, st[2].line) == (:step_site, STEP_LINE)
    @test inside_block[1] isa ArgumentError
    @test inside_block[1].msg == "x too large: 5"

    site = site_id(rec, "solve_step")
    errs = [x for x in rec.events if x.kind === :span_error && x.site == site]
    @test length(errs) == 1
    msg = errs[1].message
    @test occursin("SolverDiverged", msg)
    @test occursin("solver diverged at iteration 17", msg)
    sigtext = string(Tuple{typeof(solve_step),Float64,Int64})
    @test occursin("[" * sigtext * "]", msg)
    attrs = only([x for x in rec.events if x.kind === :span_attr && x.site == site]).attrs
    @test endswith(attrs["exception.type"], "SolverDiverged")
    @test attrs["exception.message"] == "solver diverged at iteration 17"
    @test attrs["code.function"] == "solve_step"
    @test attrs["code.filepath"] == @__FILE__
    @test attrs["code.signature"] == sigtext
    # Both calls are spans; the failed one carries the error's span id.
    ss = spans(rec, site)
    @test length(ss) == 2
    @test errs[1].span_id in [s.span_id for s in ss]
    @test rec.stats[site].errors == 1
    @test rec.stats[site].calls == 2

    bsite = site_id(rec, "throwing block")
    berr = only([x for x in rec.events if x.kind === :span_error && x.site == bsite])
    @test occursin("ArgumentError", berr.message) && occursin("x too large: 5", berr.message)
    @test length(spans(rec, bsite)) == 1
end
