# selfcost.jl — what one Julia span costs, for the file's self-cost estimate.
#
# The core times a C span pair at init (jager.span_cost_ns, ≈ 28 ns here) and the tools
# multiply it by the spans recorded. A @jäger span costs more: around a call that may
# throw it also runs Julia's exception handler, the signature check and two reads of the
# allocation counter (79–92 ns were measured, issue 9). The Julia part is timed at
# stop (not at start: its compile would be paid at every `using` under JAGER_OUTPUT), on
# the calling thread, without touching the recording: the same steps a call
# site runs between its two core calls (handler, signature compare, byte counters), minus
# the bare call they wrap. The sum, core pair + Julia part, is written as metadata
# `julia.span_cost_ns`; the tools charge it to the spans of Julia sites (those with a
# `julia.site.<id>.module` entry) and the core's figure to the rest.

# Timed at the optimisation level the spans run at (hot.jl), not the binding's -O1, at
# which the byte counter's Ref alone would be a heap allocation per iteration.
module Calib

@static if isdefined(Base, :Experimental) && isdefined(Base.Experimental, Symbol("@optlevel"))
    Base.Experimental.@optlevel 3   # the effective level is the lower of this and Julia's -O
end

using ..Jager: SigSlot, ENABLED, TRACK_BYTES, gc_total_bytes, world_now, hide_type

@noinline calib_callee(x::Float64) = x < -1.0e300 ? throw(DomainError(x)) : x * 1.0000001 + 1.0

# _enter's and _leave's steps, out of line as they are (hot.jl), without the core calls.
@noinline function calib_enter(slot::SigSlot, @nospecialize(sig))
    if sig === slot.last
        slot.run += 1
        unguarded = slot.fast == world_now()
    else
        unguarded = false
    end
    b0 = TRACK_BYTES[] ? gc_total_bytes() : Int64(-1)
    return b0, unguarded
end
@noinline calib_leave(b0::Int64) = b0 >= 0 ? Float64(gc_total_bytes() - b0) : 0.0

# The Julia-side steps of one guarded call span (call_expr's `guarded` branch and
# _enter/_leave, without the two core calls): best of a few batches, ns per iteration.
function calib_julia_part(slot::SigSlot, n::Int)
    sig = Tuple{typeof(calib_callee),Float64}
    s = 0.0
    t0 = time_ns()
    for _ in 1:n
        if ENABLED[]
            b0, unguarded = calib_enter(slot, hide_type(sig))
            local v
            if unguarded
                v = calib_callee(s)
            else
                try
                    v = calib_callee(s)
                catch
                    rethrow()
                end
            end
            s += calib_leave(b0)
            s = v
        else
            s = calib_callee(s)
        end
    end
    return (time_ns() - t0) / n, s
end

function calib_bare(n::Int)
    s = 0.0
    t0 = time_ns()
    for _ in 1:n
        s = calib_callee(s)
    end
    return (time_ns() - t0) / n, s
end

end # module Calib

using .Calib: calib_callee, calib_julia_part, calib_bare

"""
    Jager.julia_span_cost_ns() -> Float64

The measured cost of one @jäger span around a call that may throw: the core's span pair
(measured by the core at start) plus the Julia steps around it (exception handler,
signature check, allocation counter), timed now on this thread (≈ 5 ms). NaN when not
recording.
"""
function julia_span_cost_ns()
    ENABLED[] || return NaN
    slot = SigSlot()
    slot.last = Tuple{typeof(calib_callee),Float64}
    n = 10_000
    calib_julia_part(slot, 100); calib_bare(100)
    part = Inf
    bare = Inf
    for _ in 1:3
        part = min(part, calib_julia_part(slot, n)[1])
        bare = min(bare, calib_bare(n)[1])
    end
    core = stats().span_cost_ns_x1000 / 1000.0
    return core + max(part - bare, 0.0)
end

# At stop, before the core closes the file: record the measured Julia span cost for the tools' self-cost estimate.
function record_span_cost!()
    c = julia_span_cost_ns()
    isfinite(c) || return nothing
    ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring), "julia.span_cost_ns", @sprintf("%.3f", c))
    return nothing
end
