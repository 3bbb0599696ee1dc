# Argument signatures at call sites: a site fed Float32 and Float64 weights through an
# abstract field shows both signatures with exact counts; only new ones reach the hook.

struct MixedParticle
    w::Real          # abstract on purpose: the weight's type is known only at run time
    x::Float64
end

@noinline deposit(w, x) = w * x
function deposit_all(ps)
    s = 0.0
    for p in ps
        s += @jäger deposit(p.w, p.x)
    end
    return s
end
const DEPOSIT_LINE = @__LINE__() - 4

@testset "signatures at call sites" begin
    # 7 Float32 and 5 Float64 weights, interleaved so that the signature changes often.
    ws = Real[Float32(1), 2.0, Float32(3), Float32(4), 5.0, Float32(6), 7.0, 8.0,
              Float32(9), Float32(10), 11.0, Float32(12)]
    ps = [MixedParticle(w, 1.0) for w in ws]
    deposit_all(ps)
    seen = Tuple{UInt32,Type}[]
    hook = (site, sig) -> push!(seen, (site, sig))
    push!(Jager.NEW_SIGNATURE_HOOKS, hook)
    local counts, site
    try
        rec = recorded("signatures") do
            @test deposit_all(ps) == sum(Float64, ws)
            @test deposit_all(ps[1:1]) == 1.0
            site = only([s for s in Jager.sites() if s.name == "deposit" && s.line == DEPOSIT_LINE]).id
            counts = Dict(Jager.signature_counts(site))
        end
        @test length(spans(rec, site)) == 13
    finally
        filter!(h -> h !== hook, Jager.NEW_SIGNATURE_HOOKS)
    end
    S32 = Tuple{typeof(deposit),Float32,Float64}
    S64 = Tuple{typeof(deposit),Float64,Float64}
    @test counts == Dict(S32 => 8, S64 => 5)
    @test seen == [(site, S32), (site, S64)]          # each new signature once, in order
    # After the recording the counts stay readable; a new recording starts afresh.
    @test Dict(Jager.signature_counts(site)) == Dict(S32 => 8, S64 => 5)
    recorded("signatures2") do
        deposit_all(ps[2:2])
    end
    @test Jager.signature_counts(site) == [S64 => 1]
end

sig_sum(v) = @jäger "sig sum" sum(v)

@testset "signature hot path allocates nothing" begin
    v = Float64[1, 2, 3]
    f = sig_sum
    Jager.start(output = joinpath(TMP, "sigalloc.jgr"), env = false, quiet = true, bytes = false)
    try
        # Warm past the slow path: the first call registers, the nothrow decision waits
        # until the site was timed twice (sites.jl, site_is_short).
        for _ in 1:3
            f(v)
        end
        allocated_call(f, v)
        @test allocated_call(f, v) == 0
        TRACK = Jager.TRACK_BYTES[]
        Jager.TRACK_BYTES[] = true
        allocated_call(f, v)
        @test allocated_call(f, v) == 0
        Jager.TRACK_BYTES[] = TRACK
    finally
        Jager.stop()
    end
end
