# callcost.jl — what one dynamic call costs on this machine, for the hunt's price of a
# type instability (docs/hunt.md, type_instability).
#
# A runtime dispatch costs a jl_apply_generic lookup and a boxed argument; the hunt
# multiplies the dispatches the verdict counts by this price instead of charging the whole
# region around them. It is timed once, at stop and only when the dispatch sensor reported
# an instability (a clean program pays nothing), on the calling thread, without touching
# the recording: calls of a small function through an `Any` value, minus the same calls
# made statically. Written as metadata `julia.dynamic_call_ns`; files without it are priced
# at the documented 100 ns, and the finding says so.

# Six methods: more than inference splits a call over (max_methods, 4 on 1.5), so a call
# on an `Any` stays a jl_apply_generic dispatch — with three, the compiler turned it into
# `isa` branches and "dynamic" calls timed 4 ns.
@noinline dyncall_callee(x::Float64) = x * 1.0000001 + 1.0
@noinline dyncall_callee(x::Int) = x + 1
@noinline dyncall_callee(x::Float32) = x * 1.0000001f0 + 1.0f0
@noinline dyncall_callee(x::Int32) = x + Int32(1)
@noinline dyncall_callee(x::UInt8) = x + 0x01
@noinline dyncall_callee(x::ComplexF64) = x * 1.0000001 + 1.0

function dyncall_dynamic(r::Base.RefValue{Any}, n::Int)
    s = 0.0
    t0 = time_ns()
    for _ in 1:n
        s += dyncall_callee(r[])::Float64   # r[] is an Any: dispatched at run time
    end
    return (time_ns() - t0) / n, s
end

function dyncall_static(x::Float64, n::Int)
    s = 0.0
    t0 = time_ns()
    for _ in 1:n
        s += dyncall_callee(x)
    end
    return (time_ns() - t0) / n, s
end

"""
    Jager.dynamic_call_ns() -> Float64

The measured cost of one dynamic call (a call through an `Any` value, less the same call
made statically), best of a few batches, timed now on this thread (≈ 3 ms).
"""
function dynamic_call_ns()
    r = Ref{Any}(1.5)
    n = 20_000
    dyncall_dynamic(r, 100); dyncall_static(1.5, 100)
    dyn = Inf
    bare = Inf
    for _ in 1:3
        dyn = min(dyn, dyncall_dynamic(r, n)[1])
        bare = min(bare, dyncall_static(1.5, n)[1])
    end
    return max(dyn - bare, 1.0)
end

# At stop, before the core closes the file (the dispatch sensor's stop hook).
function record_dynamic_call_cost!()
    ENABLED[] || return nothing
    c = dynamic_call_ns()
    isfinite(c) || return nothing
    ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring), "julia.dynamic_call_ns", @sprintf("%.3f", c))
    return nothing
end
