# Spans and signature counts from several threads (ctest runs with JULIA_NUM_THREADS=2).

@noinline weigh(w, x) = w * x
threaded_site(w) = @jäger weigh(w, 2.0)

@testset "threads ($(Threads.nthreads()))" begin
    threaded_site(1.0); threaded_site(1.0f0)
    n = 4000
    local counts, site
    rec = recorded("threads") do
        Threads.@threads for i in 1:n
            threaded_site(isodd(i) ? Float32(i) : Float64(i))
        end
        site = only([s for s in Jager.sites() if s.name == "weigh"]).id
        counts = Dict(Jager.signature_counts(site))
        @test Jager.drain()
        @test Jager.stats().spans_total >= n
    end
    @test counts == Dict(Tuple{typeof(weigh),Float32,Float64} => n ÷ 2, Tuple{typeof(weigh),Float64,Float64} => n ÷ 2)
    ss = spans(rec, site)
    @test length(ss) == n        # 4000 span events fit the default 1 MiB rings: none dropped
    @test rec.stats[site].calls == n
    @test length(unique(s.thread for s in ss)) == min(Threads.nthreads(), 2)
end

# The core's default (`sample = :auto`): a tight loop of spans is thinned on purpose and
# counted, every call still in the aggregates; `:all` records every span.
@noinline tight(x) = x + 1
tight_site(x) = @jäger tight(x)
@testset "sample = :auto thins a tight loop" begin
    tight_site(1)
    n = 200_000
    local st, site
    rec = recorded("auto"; sample = :auto) do
        s = 0
        for i in 1:n
            s += tight_site(i)
        end
        site = only([x for x in Jager.sites() if x.name == "tight"]).id
        st = Jager.site_stats(site)
    end
    ss = spans(rec, site)
    @test st.calls == n
    @test st.thinned > 0
    @test length(ss) + st.thinned + st.dropped == n  # recorded + thinned + dropped == calls
    @test rec.stats[site].calls == n
    @test_throws ArgumentError Jager.start(sample = (:auto, 0))
end
