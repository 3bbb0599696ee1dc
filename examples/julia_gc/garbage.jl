# garbage.jl — a plain allocation-heavy loop (no Jäger in it): 64 fresh vectors per call,
# about 0.5 MB, so collections come often. The GC benchmark (bench/gc) and the zero-code
# GC test (bindings/julia/test/gc_tests.jl) run it in a separate Julia process.
@noinline function make_garbage(n)
    v = Vector{Vector{Float64}}(undef, 64)
    for i in 1:64
        v[i] = rand(n)
    end
    return sum(length, v)
end

function churn(r)
    s = 0
    for i in 1:r
        s += make_garbage(1000 + (i % 7))
    end
    s
end
