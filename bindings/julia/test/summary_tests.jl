# Jager.print_timings prints the core's exact aggregates per site.

summary_site() = @jäger "summary site" sqrt_sum(10)

@testset "summary" begin
    summary_site()
    recorded("summary") do
        for _ in 1:7
            summary_site()
        end
        live = sprint(Jager.print_timings)
        @test occursin("summary site", live)
    end
    out = sprint(Jager.print_timings)
    row = only(filter(l -> occursin("summary site", l), split(out, '\n')))
    cells = split(row)
    @test cells[3] == "7"                    # "summary", "site", ncalls
    @test occursin("ncalls", out) && occursin("p99", out) && occursin("alloc", out)
    st = only(s for (s, _) in Jager.SESSION.stats if s.name == "summary site")
    @test Jager.SESSION.stats[findfirst(x -> x[1] === st, Jager.SESSION.stats)][2].calls == 7
end
