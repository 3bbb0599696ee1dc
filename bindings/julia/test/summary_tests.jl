# Jager.print_timings: a nested, TimerOutputs-style table of the recording's call paths,
# with locations that tell same-named sites apart.

summary_site() = @jäger "summary site" sqrt_sum(10)
@noinline pt_inner(n) = sqrt_sum(n)
pt_outer(k) = (s = 0.0; for i in 1:k; s += @jäger pt_inner(10i); end; s)
const PT_INNER_LINE = @__LINE__() - 1
pt_twin() = @jäger "pt_inner" sqrt_sum(3)          # the same name, another site
const PT_TWIN_LINE = @__LINE__() - 1

@testset "summary" begin
    summary_site()
    local live, topline
    rec = recorded("summary") do
        for _ in 1:7
            summary_site()
        end
        for _ in 1:3
            @jäger_block "pt phase" pt_outer(4)
        end
        pt_inner(5)                              # not a site call: no span
        topline = @__LINE__; @jäger pt_inner(5)  # another pt_inner site, at the top level
        pt_twin(); pt_twin()
        live = sprint(Jager.print_timings)
    end
    @test occursin("summary site", live)
    out = sprint(Jager.print_timings)
    lines = split(out, '\n')
    rowof(prefix) = only(filter(l -> startswith(l, " " * prefix * " "), lines))
    cells(l) = split(strip(l), r"\s{2,}")
    row = cells(rowof("summary site"))
    @test row[2] == "summary_tests.jl:4" && row[3] == "7"
    @test cells(rowof("pt phase"))[3] == "3"
    here = basename(@__FILE__)
    # pt_inner under pt phase (indented); at the top level, a second pt_inner call site
    # and the same-named "pt_inner" block, each at its own location.
    nested = only(filter(l -> startswith(l, "   pt_inner "), lines))
    @test cells(nested)[2] == "$here:$PT_INNER_LINE" && cells(nested)[3] == "12"
    tops = filter(l -> startswith(l, " pt_inner "), lines)
    @test length(tops) == 2
    bylocation = Dict(cells(l)[2] => cells(l)[3] for l in tops)
    @test bylocation == Dict("$here:$topline" => "1", "$here:$PT_TWIN_LINE" => "2")
    @test occursin("ncalls", out) && occursin("location", out) && occursin("alloc", out)
    @test !occursin("dropped", out)
    # The tree's numbers are the file's, exactly.
    tree = Jager.timing_tree(joinpath(TMP, "summary.jgr"))
    phase = only(c for c in tree.children if c.name == "pt phase")
    inner = only(phase.children)
    ids = site_ids(rec, "pt_inner")
    innerid = only(id for id in ids if rec.sites[id].line == PT_INNER_LINE)
    phasespans = spans(rec, site_id(rec, "pt phase"))
    under = [s for s in spans(rec, innerid) if any(p -> p.span_id == s.parent_id && p.thread == s.thread, phasespans)]
    @test inner.calls == length(under) == 12
    @test inner.total_ns == sum(s.end_ns - s.start_ns for s in under)
    @test phase.total_ns == sum(s.end_ns - s.start_ns for s in phasespans)
    @test phase.calls == 3
    st = only(s for (s, _) in Jager.SESSION.stats if s.name == "summary site")
    @test Jager.SESSION.stats[findfirst(x -> x[1] === st, Jager.SESSION.stats)][2].calls == 7
end
