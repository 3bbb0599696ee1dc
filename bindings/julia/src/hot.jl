# hot.jl — what every @jäger span runs: `_enter`, `_enter_kw` and `_leave`.
#
# `_enter` is called out of line: inlined, its 120 statements were compiled again into
# every instrumented function (≈ 5 ms a site on Julia 1.5). They live in their own module for its optimisation level. Julia 1.5 keeps no machine
# code between processes, so everything the binding runs is compiled by LLVM in every
# process, most of it once (registering a site, a signature's first call, an error, stop,
# symbolizing, summaries). That code gains nothing from LLVM's full pipeline, which took
# 30 ms of a process's first @jäger call alone (issue 9 item 10): the rest of the binding
# is compiled at -O1 (Jager.jl). The span's own path is compiled at the level Julia runs
# with (-O2 by default), which keeps its byte counter (a Ref) on the stack and its cost
# where bench/julia/span_cost.jl measures it. Julia's inliner copies the helpers these
# functions call (`count_signature!`, `note_task`, `gc_total_bytes`, `site_id`) into them,
# so those run at this module's level too; what they call out of line is cold.
module Hot

@static if isdefined(Base, :Experimental) && isdefined(Base.Experimental, Symbol("@optlevel"))
    Base.Experimental.@optlevel 2   # the effective level is the lower of this and Julia's -O
end

using ..Jager: Site, JagerSpan, LIB, TRACK_BYTES, METHOD_SPANS, site_id, count_signature!,
               note_task, gc_total_bytes, span_method_latest

# What every span's begin runs once the site is known: the task check, the byte counter and
# the core's begin. Returns the span and the byte counter at its start (-1: not tracked).
@inline function begin_span(id::UInt32)
    note_task()
    b0 = TRACK_BYTES[] ? gc_total_bytes() : Int64(-1)
    sp = ccall((:jager_span_begin, LIB), JagerSpan, (UInt32,), id)
    METHOD_SPANS[] && span_method_latest(sp)
    return sp, b0
end

"Open a span at `st` (a region); returns the span and the byte counter at its start (-1: not tracked)."
@noinline _enter(st::Site) = begin_span(site_id(st))

"""
    hide_type(sig) -> sig

The signature type, hidden from inference (`Base.inferencebarrier`). Before Julia 1.10,
`@nospecialize` does not stop inference: a call `_enter(site, Tuple{typeof(f),Vector{Float64}})`
with the constant type would infer `_enter` again for that type at every site (≈ 8 ms per
site on Julia 1.5, most of an instrumented function's compile; issue 9 item 10). Hidden,
every site reuses the one inference of `_enter(::Site, ::Any)`. The optimizer removes the
barrier: the hot path compares the same pointer as before and allocates nothing.
"""
const hide_type = isdefined(Base, :inferencebarrier) ? Base.inferencebarrier : identity

"""
`_enter` for a call site: first count the argument signature `sig`. The third value says
whether the call may run without an exception handler (proved nothrow, see nothrow.jl);
`_enter_kw` is the form for calls with keyword arguments, which never run unguarded (the
call is another signature, a kwcall, whose proof we do not have).

Out of line, and without a constant `Bool` argument: every expansion calls these with
constant arguments, and a call whose arguments are all constants, one of them a "useful"
constant (a `Bool`), is inferred again with those constants at every site (Julia's
constant propagation) — 5–10 ms of inference per site on Julia 1.5, most of what an
instrumented function cost to compile (issue 9 item 10). Inlined, their 120 statements
were also compiled again into every instrumented function.
"""
@noinline function _enter(st::Site, @nospecialize(sig))
    id = site_id(st)
    unguarded = id != 0 && count_signature!(st, sig, true)
    sp, b0 = begin_span(id)
    return sp, b0, unguarded
end
@noinline function _enter_kw(st::Site, @nospecialize(sig))
    id = site_id(st)
    id != 0 && count_signature!(st, sig, false)
    sp, b0 = begin_span(id)
    return sp, b0, false
end

"""
Close a span opened by `_enter`. Inlined into the expansion (at the caller's level): out of
line it cost a span around a call that may throw 5 ns more (a second call next to the
handler) and saved no measurable compile time (kernels.jl's first `main()` with
`gc,dispatch`, 6 interleaved runs: 1.174 against 1.177 of the plain program).
"""
@inline function _leave(sp::JagerSpan, b0::Int64)
    note_task()   # another task may have run on this thread since the span began
    if b0 >= 0
        b = gc_total_bytes() - b0
        ccall((:jager_span_end_bytes, LIB), Cvoid, (JagerSpan, UInt64), sp, UInt64(max(b, 0)))
    else
        ccall((:jager_span_end, LIB), Cvoid, (JagerSpan,), sp)
    end
    return nothing
end

end # module Hot

using .Hot: _enter, _enter_kw, _leave, hide_type
