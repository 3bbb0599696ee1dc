# `@jäger function f(…) … end` and `@jäger f(x) = …`: every call of the method is one span
# at the definition's line, named after the function; `return` inside closes it, an
# exception is recorded and rethrown. `@jäger_block $(esc(name))` inside a user's macro.
# Jager.flush/Jager.summary no longer shadow Base; errors are JagerErrors with the status.

@jäger function m_abs(x::T) where {T<:Real}
    x < 0 && return -x          # an early return closes the span too
    y = 2x
    y - x
end
const M_ABS_LINE = @__LINE__() - 5
@jäger m_inc(x) = x + 1
const M_INC_LINE = @__LINE__() - 1
@jäger m_twice(x)::Float64 = 2x
@jäger "custom name" function m_named(x)
    x > 10 && throw(DomainError(x, "too large"))
    return x
end
struct MScale
    k::Int
end
@jäger (s::MScale)(x) = s.k * x
# The outer method's span is the parent of the inner one's.
@jäger function m_outer(n)
    s = 0
    for i in 1:n
        s += m_inc(i)
    end
    s
end

macro m_section(name, body)
    return :(@jäger_block $(esc(name)) $(esc(body)))
end
m_sectioned(x) = @m_section "user macro section" begin
    x * 3
end

@testset "@jäger on method definitions" begin
    # Not recording: the methods are the plain ones.
    @test (m_abs(-2), m_abs(5), m_inc(1), m_twice(2), m_named(3), MScale(4)(2)) == (2, 5, 2, 4.0, 3, 8)
    @test m_twice(2) isa Float64
    local err
    rec = recorded("methods") do
        @test m_abs(-3) == 3
        @test m_abs(4) == 4
        @test m_abs(-1.5) == 1.5
        @test m_inc(41) == 42
        @test m_twice(3) === 6.0
        @test m_named(7) == 7
        err = try
            m_named(11)
            nothing
        catch e
            e
        end
        @test MScale(3)(5) == 15
        @test m_outer(4) == 14
        @test m_sectioned(2) == 6
        @test m_sectioned(3) == 9
    end
    @test err isa DomainError && err.val == 11
    abs_site = site_id(rec, "m_abs")
    @test rec.sites[abs_site].line == M_ABS_LINE
    @test rec.sites[abs_site].file == @__FILE__
    @test length(spans(rec, abs_site)) == 3           # two early returns, one fall-through
    @test rec.stats[abs_site].calls == 3
    @test rec.stats[abs_site].errors == 0
    inc = site_id(rec, "m_inc")
    @test rec.sites[inc].line == M_INC_LINE
    @test length(spans(rec, inc)) == 1 + 4            # one direct call, four from m_outer
    @test length(spans(rec, site_id(rec, "m_twice"))) == 1
    named = site_id(rec, "custom name")
    @test isempty(site_ids(rec, "m_named"))
    @test length(spans(rec, named)) == 2
    @test rec.stats[named].errors == 1
    nerr = only([e for e in rec.events if e.kind === :span_error && e.site == named])
    @test occursin("DomainError", nerr.message) && occursin("too large", nerr.message)
    @test length(spans(rec, site_id(rec, "MScale"))) == 1
    outer = only(spans(rec, site_id(rec, "m_outer")))
    inner = [s for s in spans(rec, inc) if s.parent_id == outer.span_id]
    @test length(inner) == 4
    @test all(outer.start_ns <= s.start_ns && s.end_ns <= outer.end_ns for s in inner)
    sec = site_id(rec, "user macro section")
    @test length(spans(rec, sec)) == 2
    # Names that are not literals are still refused, escaped or not.
    @test_throws ArgumentError Jager.span_expr(LineNumberNode(1, :x), @__MODULE__,
                                               (Expr(:escape, :name), :(begin end)), true, "@jäger_block")
    @test_throws ArgumentError Jager.span_expr(LineNumberNode(1, :x), @__MODULE__,
                                               (:(function (x) x end),), false, "@jäger")
end

@testset "no shadowed Base names; typed errors" begin
    @test Jager.flush === Base.flush                  # Jager.drain() drains the rings
    @test Jager.summary === Base.summary              # Jager.print_timings() prints the table
    @test !Jager.drain()                              # not recording: nothing drained
    e = try
        Jager.start(output = joinpath(TMP, "no", "such", "dir", "x.jgr"), env = false, quiet = true)
        nothing
    catch err
        err
    end
    @test e isa JagerError
    @test e.status == Jager.E_IO
    @test occursin("Jager.start: input/output error", e.message)
    @test startswith(sprint(showerror, e), "JagerError(JAGER_E_IO): Jager.start")
    @test !Jager.isrecording()
    Jager.start(output = joinpath(TMP, "twice.jgr"), env = false, quiet = true)
    e2 = try
        Jager.start(output = joinpath(TMP, "twice2.jgr"), env = false, quiet = true)
        nothing
    catch err
        err
    end
    Jager.stop()
    @test e2 isa JagerError && e2.status == Jager.E_STATE
    @test occursin("already recording", e2.message)
end
