# dispatch_cost.jl — what the dispatch sensor costs, side by side in one run.
#
#   JAGER_LIB=build/lib/libjager.so julia --project=bindings/julia bench/julia/dispatch_cost.jl [N] [K]
#
# Rows (best of 15 runs each, off and on alternating, every run in its own recording to a temporary file):
#   span after the first   ns per iteration of a loop around `@jäger tiny(s)` (the site's
#                          signature already seen): recording without the dispatch plugin
#                          ("off") and with it, sensor active ("on"). The sensor adds
#                          nothing here, so the ratio must be ≈ 1.
#   new signature (site)   µs per new signature on the call site's slow path
#                          (`Jager._on_new_signature`, run for K fresh `Val{i}` signatures),
#                          off vs on: the sensor's first-sight work (a string, one ccall).
#   new signature (drain)  ms per signature later, at drain (verdict by inference, counts,
#                          census): off the call site, paid at Jager.stop/flush.
#   nothrow proof          µs per new signature for the binding's own proof that the call
#                          cannot throw (bindings/julia/src/nothrow.jl), paid on the call
#                          site's slow path once per signature and world, with or without
#                          the plugin (with it, inference runs outside compile capture).
# Prints a table; asserts nothing.
using Jager, Printf

const N = length(ARGS) >= 1 ? parse(Int, ARGS[1]) : 20_000  # fits one 1 MiB ring: no drops
const K = length(ARGS) >= 2 ? parse(Int, ARGS[2]) : 100
const RUNS = 15
const TMP = mktempdir()

@noinline tiny(x::Float64) = x * 1.0000001 + 1.0
ident(v) = v

function spans(n)
    s = 0.0
    for i in 1:n
        s = @jäger tiny(s)
    end
    return s
end

plugin_dir() = normpath(joinpath(dirname(Jager.libpath()), "..", "plugins"))

function recording(f, on::Bool, tag)
    kw = on ? (plugins = "dispatch", plugin_path = plugin_dir()) : (plugins = "",)
    Jager.start(; output = joinpath(TMP, "$tag.jgr"), env = false, quiet = true, kw...)
    on && (Jager.DispatchSensor.SENSOR.active || error("the dispatch plugin did not load from $(plugin_dir())"))
    try
        return f()
    finally
        Jager.stop()
    end
end

function span_ns(on::Bool, r::Int)
    return recording(on, "spans_$(on)_$r") do
        spans(1000) # the site's signature is seen here: the loop below is "after the first"
        t0 = time_ns()
        spans(N)
        (time_ns() - t0) / N
    end
end

# K fresh signatures per run (types never seen before in this process).
const NEXT_VAL = Ref(1_000_000)
function fresh_signatures(k)
    base = NEXT_VAL[]
    NEXT_VAL[] += k
    return Type[Tuple{typeof(ident),Val{base + i}} for i in 1:k]
end

function new_signature_cost(on::Bool, r::Int)
    site = ccall((:jager_site_register, Jager.LIB), UInt32, (Cstring, Cstring, UInt32), "ident", @__FILE__, 1)
    sigs = fresh_signatures(K)
    return recording(on, "sigs_$(on)_$r") do
        t0 = time_ns()
        for sig in sigs
            Jager._on_new_signature(site, sig)
        end
        t1 = time_ns()
        Jager.dispatch_drain()
        t2 = time_ns()
        ((t1 - t0) / K / 1e3, (t2 - t1) / K / 1e6)
    end
end

@noinline vscale(::Val{N}, x::Float64) where {N} = x * 2.0 + 1.0

function nothrow_cost(on::Bool, r::Int)
    base = NEXT_VAL[]
    NEXT_VAL[] += K
    sigs = Type[Tuple{typeof(vscale),Val{base + i},Float64} for i in 1:K]
    return recording(on, "nothrow_$(on)_$r") do
        t0 = time_ns()
        proved = count(sig -> Jager.nothrow_world(sig) != 0, sigs)
        proved == K || error("nothrow proof failed for $(K - proved) of $K signatures")
        (time_ns() - t0) / K / 1e3
    end
end

function main()
    @printf("dispatch sensor cost — N = %d spans, K = %d new signatures, best of %d (Julia %s)\n",
            N, K, RUNS, VERSION)
    # Warm everything (both paths compiled), then alternate off/on runs so that drift in
    # the machine's load hits both columns alike; keep the best of each.
    span_ns(false, 0); span_ns(true, 0); new_signature_cost(false, 0); new_signature_cost(true, 0)
    nothrow_cost(false, 0); nothrow_cost(true, 0)
    off = on = soff = son = doff = don = poff = pon = Inf
    for r in 1:RUNS
        off = min(off, span_ns(false, r))
        on = min(on, span_ns(true, r))
        a, b = new_signature_cost(false, r)
        soff = min(soff, a); doff = min(doff, b)
        a, b = new_signature_cost(true, r)
        son = min(son, a); don = min(don, b)
        poff = min(poff, nothrow_cost(false, r))
        pon = min(pon, nothrow_cost(true, r))
    end
    @printf("%-28s %12s %12s %8s\n", "", "off", "on", "on/off")
    @printf("%-28s %9.1f ns %9.1f ns %8.3f\n", "span after the first", off, on, on / off)
    @printf("%-28s %9.2f µs %9.2f µs %8.2f\n", "new signature, call site", soff, son, son / soff)
    @printf("%-28s %9.3f ms %9.3f ms %8s\n", "new signature, at drain", doff, don, "-")
    @printf("%-28s %9.1f µs %9.1f µs %8.2f\n", "nothrow proof, per signature", poff, pon, pon / poff)
end

main()
