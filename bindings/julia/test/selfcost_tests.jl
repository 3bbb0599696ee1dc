# The measured cost of a Julia span, written for the tools' self-cost estimate (selfcost.jl).
@testset "span cost in the file" begin
    @test isnan(Jager.julia_span_cost_ns())          # not recording: nothing to measure
    @noinline sc_callee(x) = x < 0 ? throw(DomainError(x)) : x + 1.0
    sc_loop(n) = (s = 0.0; for _ in 1:n; s = @jäger sc_callee(s); end; s)
    path = joinpath(TMP, "selfcost.jgr")
    core = Ref(0.0)
    Jager.record(output = path, env = false, quiet = true) do
        sc_loop(1000)
        core[] = Jager.stats().span_cost_ns_x1000 / 1000
    end
    rec = JgrReader.read(path)
    @test haskey(rec.meta, "julia.span_cost_ns")
    c = parse(Float64, rec.meta["julia.span_cost_ns"])
    # The core's pair plus the Julia steps: the handler and the two allocation-counter
    # reads alone take more than 5 ns on any machine this runs on.
    @test c > core[] + 5
    @test c < 10_000
    @test length(spans(rec, site_id(rec, "sc_callee"))) == 1000
end
