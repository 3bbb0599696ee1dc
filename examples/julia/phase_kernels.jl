# phase_kernels.jl — the normal way to instrument: a phase function called at an `@jäger`
# site, each kernel call inside it an `@jäger` site of its own (BaseBenchmarks' problem
# kernels were instrumented this way for the acceptance check of issue 9).
#
# Expected findings (plugins gc,dispatch):
#  - one `type_instability` for the union accumulator of `draw`, located at the `draw`
#    site and costed at most by `draw`'s own time — not at the `phase` site with the time of
#    every kernel it runs (the verdict of `phase` reaches `draw` through the `draw` site's
#    call, so the dispatch runs in that site's time);
#  - `allocation_hotspot` for `copies_a` and `copies_b` (400 MB a call each), and none for
#    `phase`, whose bytes are the two kernels' (each half of them: together they explain it).
#
#   JAGER_PLUGINS=gc,dispatch JAGER_OUTPUT=pk.jgr julia --project=bindings/julia examples/julia/phase_kernels.jl
using Jager

@noinline function draw(n)
    s = 0                      # an Int that becomes a Float64: a union in a `while` loop
    k = 0
    while k < n
        k += 1
        s += k * 0.5
    end
    return Float64(s)          # the caller sees a Float64: the union stays inside `draw`
end

@noinline function work(u)     # the phase's heavy, clean kernel
    s = 0.0
    @inbounds for r in 1:40, i in eachindex(u)
        s += sqrt(abs(u[i])) * 0.5
    end
    return s
end

@noinline function copies_a(u)  # a fresh 8 MB slice per iteration
    s = 0.0
    for _ in 1:50
        v = u[1:end-1]
        s += v[1]
    end
    return s
end

@noinline function copies_b(u)
    s = 0.0
    for _ in 1:50
        v = u[2:end]
        s += v[1]
    end
    return s
end

function phase(u)
    s = 0.0
    for _ in 1:2
        s += @jäger work(u)
        s += @jäger copies_a(u)
        s += @jäger copies_b(u)
        s += @jäger draw(1000)
    end
    return s
end

main() = (u = rand(1_000_000); @jäger phase(u))

abspath(PROGRAM_FILE) == (@__FILE__) && main()
