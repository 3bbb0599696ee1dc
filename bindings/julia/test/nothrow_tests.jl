# A call proved not to throw runs without an exception handler (nothrow.jl); every other
# call keeps it. The proof must be right in both directions, must follow redefinitions,
# and the spans must come out the same either way.

@noinline nt_axpy(a::Float64, x::Float64, y::Float64) = a * x + y
@noinline nt_twice(x::Float64) = nt_axpy(2.0, x, 1.0) + nt_axpy(3.0, x, 0.5)   # static calls
@noinline function nt_inbounds_sum(v::Vector{Float64})
    s = 0.0
    @inbounds for i in eachindex(v)
        s += v[i]
    end
    return s
end
mutable struct NtCounter
    n::Float64
end
@noinline nt_bump(c::NtCounter, d::Float64) = (c.n += d; c.n)

@noinline nt_throws(x::Float64) = x > 1 ? throw(DomainError(x)) : x
@noinline nt_checked(v::Vector{Float64}, i::Int) = v[i]                 # bounds check
@noinline nt_div(a::Int, b::Int) = div(a, b)                            # DivideError
@noinline nt_sqrt(x::Float64) = sqrt(x)                                 # DomainError
struct NtAbstract
    w::Real
end
@noinline nt_dynamic(p::NtAbstract) = p.w * 2                           # runtime dispatch
@noinline nt_foreign(x::Float64) = ccall(:cos, Float64, (Float64,), x)  # foreign call
@noinline nt_recursive(n::Int) = n <= 0 ? 0 : nt_recursive(n - 1) + 1

sig(f, types...) = Tuple{typeof(f), types...}

# Sites under test, each on its own line.
nt_site(x) = @jäger nt_axpy(1.5, x, 1.0)
nt_guarded_site(x) = @jäger nt_throws(x)
nt_kw(x; scale = 1.0) = x * scale
nt_kw_site(x) = @jäger nt_kw(x; scale = 2.0)
@noinline nt_flip(x::Float64) = x + 1.0
nt_flip_site(x) = @jäger nt_flip(x)
nt_outer(x) = @jäger_block "nt outer" begin
    nt_flip_site(x)
end

"The per-thread slot of the registered site named `name` (this thread)."
function nt_slot(name)
    st = only([s for s in Jager.SITES if s.name == name])
    return st.slots[Threads.threadid()]
end

@testset "nothrow verdicts" begin
    @test Jager.nothrow(sig(nt_axpy, Float64, Float64, Float64))
    @test Jager.nothrow(sig(nt_twice, Float64))
    @test Jager.nothrow(sig(nt_inbounds_sum, Vector{Float64}))
    @test Jager.nothrow(sig(nt_bump, NtCounter, Float64))
    @test !Jager.nothrow(sig(nt_throws, Float64))
    @test !Jager.nothrow(sig(nt_checked, Vector{Float64}, Int))
    @test !Jager.nothrow(sig(nt_div, Int, Int))
    @test !Jager.nothrow(sig(nt_sqrt, Float64))
    @test !Jager.nothrow(sig(nt_dynamic, NtAbstract))
    @test !Jager.nothrow(sig(nt_foreign, Float64))
    @test !Jager.nothrow(sig(nt_recursive, Int))
    # Not a proof target: an abstract signature, a non-singleton callee, a non-tuple.
    @test !Jager.nothrow(Tuple{typeof(nt_axpy), Float64, Real, Float64})
    add = let k = 2.0
        x -> x + k
    end
    @test !Jager.nothrow(sig(add, Float64))
    @test !Jager.nothrow(Int)
end

@testset "unguarded and guarded call sites" begin
    nt_site(1.0); nt_guarded_site(0.5); nt_kw_site(1.0)   # compile outside the recording
    local slot_ok, slot_guarded, slot_kw
    n = Jager.NOTHROW_AFTER_CALLS + 10   # a proof is tried at a signature's NOTHROW_AFTER_CALLS-th call in a row
    rec = recorded("nothrow") do
        for i in 1:n
            nt_site(Float64(i))
            nt_guarded_site(0.5)
            nt_kw_site(2.0)
        end
        slot_ok = (Jager.unguarded_now(nt_slot("nt_axpy")), nt_slot("nt_axpy").world)
        slot_guarded = Jager.unguarded_now(nt_slot("nt_throws"))
        slot_kw = Jager.unguarded_now(nt_slot("nt_kw"))
        @test_throws DomainError nt_guarded_site(2.0)
    end
    @test slot_ok == (true, Jager.world_now())          # proved in the current world
    @test !slot_guarded
    @test !slot_kw                                      # keyword call: always guarded
    for name in ("nt_axpy", "nt_throws", "nt_kw")
        id = site_id(rec, name)
        @test length(spans(rec, id)) == (name == "nt_throws" ? n + 1 : n)
        @test rec.stats[id].calls == (name == "nt_throws" ? n + 1 : n)
        @test all(s -> s.parent_id == 0 && s.end_ns >= s.start_ns, spans(rec, id))
    end
    @test rec.stats[site_id(rec, "nt_throws")].errors == 1
    @test rec.stats[site_id(rec, "nt_axpy")].errors == 0
end

@testset "a redefined callee loses its proof" begin
    nt_outer(1.0)
    local first, second, before, after
    rec = recorded("nothrow-redefined") do
        nt_outer(1.0)          # a signature's first call keeps the handler
        first = Jager.unguarded_now(nt_slot("nt_flip"))
        for _ in 2:Jager.NOTHROW_AFTER_CALLS
            nt_outer(1.0)      # so do the calls before the proof pays (the site is timed)…
        end
        second = Jager.unguarded_now(nt_slot("nt_flip"))
        nt_outer(1.0)          # …and the next is proved
        before = Jager.unguarded_now(nt_slot("nt_flip"))
        # A new method moves the world counter: the next call must keep the handler.
        @eval nt_flip(x::Float64) = x > 1 ? throw(ArgumentError("flip refused $x")) : x + 1.0
        err = try
            Base.invokelatest(nt_outer, 2.0)
            nothing
        catch e
            e
        end
        @test err isa ArgumentError && err.msg == "flip refused 2.0"
        Base.invokelatest(nt_outer, 0.5)
        after = Jager.unguarded_now(nt_slot("nt_flip"))
    end
    @test !first && !second
    @test before
    @test !after                                         # decided again: it can throw now
    flip, outer = site_id(rec, "nt_flip"), site_id(rec, "nt outer")
    fs, os = spans(rec, flip), spans(rec, outer)
    @test length(fs) == Jager.NOTHROW_AFTER_CALLS + 3 && length(os) == Jager.NOTHROW_AFTER_CALLS + 3
    # The failed call is recorded with its exception, and the tree stays whole: every
    # flip span sits in its own outer span, and the outer spans are roots.
    errs = [x for x in rec.events if x.kind === :span_error && x.site == flip]
    @test length(errs) == 1 && occursin("flip refused 2.0", errs[1].message)
    @test all(s -> s.parent_id == 0, os)
    @test sort([s.parent_id for s in fs]) == sort([s.span_id for s in os])
end

@noinline nt_capped(x::Float64) = x + 1.0

nt_long_site(v) = @jäger nt_inbounds_sum(v)

@testset "long calls keep the handler without a proof" begin
    # nt_inbounds_sum is nothrow, but a call over 20k elements takes far longer than
    # NOTHROW_MAX_NS: the handler costs it nothing measurable, and no proof is paid for,
    # not even at the call where a short one would be proved.
    v = rand(20_000)
    nt_long_site(v)
    local slot
    recorded("nothrow-long") do
        for _ in 1:Jager.NOTHROW_AFTER_CALLS + 5
            nt_long_site(v)
        end
        slot = nt_slot("nt_inbounds_sum")
    end
    @test Jager.nothrow(sig(nt_inbounds_sum, Vector{Float64}))
    @test slot.world != Jager.NO_WORLD         # decided…
    @test slot.fast == Jager.NO_WORLD          # …to keep the handler
end

@testset "proofs per signature are capped" begin
    # Each definition moves the world; a call from the newer world proves again, up to
    # NOTHROW_MAX_PROOFS times, then the signature keeps its handler.
    csig = sig(nt_capped, Float64)
    n = Jager.NOTHROW_MAX_PROOFS + 5
    proved = Bool[]
    for i in 1:n
        Core.eval(@__MODULE__, :($(Symbol(:nt_world_mover_, i))() = $i))
        push!(proved, Base.invokelatest(Jager.nothrow_world, csig) != 0)
    end
    @test all(proved[1:Jager.NOTHROW_MAX_PROOFS])
    @test !any(proved[Jager.NOTHROW_MAX_PROOFS+1:end])
end
