# sites.jl — call sites of @jäger: registration, argument signatures and the span's
# enter/leave/fail steps that the macros' expansions call.
#
# One `Site` object is made per macro expansion and spliced into the code as a constant.
# Its id is registered with the core at the first call made while recording. For call
# sites, each thread keeps the last argument signature it saw and exact per-signature call
# counts: the hot path compares the (usually constant-folded) signature type with the
# last one by pointer, and only another signature takes the locked slow path, which calls
# `_on_new_signature` for a signature this recording has not seen at this site.

"Per-thread signature state of one site; only its own thread writes it."
mutable struct SigSlot
    last::Any              # the last signature type seen on this thread, `nothing` at first
    idx::Int               # its index in the site's `sigs`
    counts::Vector{Int}    # calls per signature index on this thread, but for `run`
    run::Int               # calls of `last` not yet added to `counts[idx]`
    world::UInt            # world in which the nothrow proof was decided for `last`
    fast::UInt             # that world if `last` was proved nothrow (nothrow.jl)
end
"A world no counter reaches: `world` and `fast` before a decision, `fast` without a proof."
const NO_WORLD = typemax(UInt)
SigSlot() = SigSlot(nothing, 0, Int[], 0, NO_WORLD, NO_WORLD)

"A @jäger call site (one per macro expansion)."
mutable struct Site
    name::String
    mod::Module
    file::String
    line::Int
    id::UInt32                 # 0 until registered with the core
    slots::Vector{SigSlot}     # indexed by thread id
    sigs::Vector{Any}          # signatures seen in this recording, in order of first sight
end
Site(name::AbstractString, mod::Module, file::AbstractString, line::Integer) =
    Site(String(name), mod, String(file), Int(line), UInt32(0), SigSlot[], Any[])

"Guards site registration, `sigs` and the growth of `slots`."
const SITES_LOCK = ReentrantLock()
"Every registered Site, in registration order."
const SITES = Site[]

const HAS_MAXTHREADID = isdefined(Threads, :maxthreadid)
max_thread_slots() = HAS_MAXTHREADID ? Threads.maxthreadid() : Threads.nthreads()

# A plain loop, not a comprehension: `collect` specialized on a closure of this module is
# inferred and compiled at a site's first call (Julia 1.5 caches no such specialization).
function new_slots(n::Int)
    v = Vector{SigSlot}(undef, n)
    for i in 1:n
        v[i] = SigSlot()
    end
    return v
end

# Registration happens once per Site, at its first call while recording.
@noinline function register!(st::Site)
    own_pause(+1)
    try
        return register_unpaused!(st)
    finally
        own_pause(-1)
    end
end
function register_unpaused!(st::Site)
    lock(SITES_LOCK)
    try
        st.id != 0 && return st.id
        ccall(:jl_generating_output, Cint, ()) == 0 || return UInt32(0)
        id = ccall((:jager_site_register, LIB), UInt32, (Cstring, Cstring, UInt32),
                   st.name, st.file, UInt32(clamp(st.line, 0, typemax(UInt32))))
        id == 0 && return UInt32(0) # the core said why (invalid name): spans stay inert
        st.slots = new_slots(max_thread_slots())
        push!(SITES, st)
        describe_site(st, id)
        st.id = id
        return id
    finally
        unlock(SITES_LOCK)
    end
end

# The core's site table has (name, file, line); the module goes into the run metadata so
# that tools can show it (key "julia.site.<id>.module").
function describe_site(st::Site, id::UInt32)
    ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring),
          "julia.site." * string(id) * ".module", string(st.mod))
    return
end

"Forget every signature seen (a new recording starts): the next call of each signature is new again."
function reset_signatures!()
    lock(SITES_LOCK)
    try
        for st in SITES
            empty!(st.sigs)
            for s in st.slots
                s.last = nothing
                s.idx = 0
                s.run = 0
                s.world = NO_WORLD
                s.fast = NO_WORLD
                empty!(s.counts)
            end
        end
    finally
        unlock(SITES_LOCK)
    end
end

# ---- signatures -------------------------------------------------------------------------

"""
Hooks called as `hook(site::UInt32, sig::Type)` when a @jäger call site sees an argument
signature for the first time in the current recording (the dispatch sensor registers one).
Called on the thread that made the call, outside any lock, before its span begins.
"""
const NEW_SIGNATURE_HOOKS = Function[]

"""
    _on_new_signature(site::UInt32, sig::Type)

Called once per (site, signature) per recording, off the hot path. Runs every hook in
`NEW_SIGNATURE_HOOKS`; a hook that throws is reported once and removed, so that
instrumentation never breaks the program.
"""
function _on_new_signature(site::UInt32, @nospecialize(sig::Type))
    i = 1
    while i <= length(NEW_SIGNATURE_HOOKS)
        h = NEW_SIGNATURE_HOOKS[i]
        try
            Base.invokelatest(h, site, sig)
            i += 1
        catch e
            report_error_latest("Jager: a new-signature hook failed and was removed", h, e, catch_backtrace())
            deleteat!(NEW_SIGNATURE_HOOKS, i)
        end
    end
    return nothing
end

# The hot path: one pointer comparison against this thread's last signature. Returns
# whether the call may run without an exception handler: `sig` was proved nothrow in the
# world that is still current (a load and a compare; another world decides again).
@inline function count_signature!(st::Site, @nospecialize(sig), unguarded_ok::Bool)
    slots = st.slots
    tid = Threads.threadid()
    if tid <= length(slots)
        @inbounds slot = slots[tid]
        if sig === slot.last
            slot.run += 1
            now = world_now()
            slot.fast == now && return true      # proved nothrow in this world
            # decided in this world: keep the handler (until the call that may prove it)
            slot.world == now && slot.run != NOTHROW_AFTER_CALLS && return false
            return decide_nothrow_latest(st, slot, sig, unguarded_ok)
        end
    end
    return signature_slow!(st, sig, tid, unguarded_ok)
end

"Whether this thread's current signature at a site runs unguarded in the current world."
unguarded_now(slot::SigSlot) = slot.fast == world_now()

# Decide (or look up) whether this thread's current signature may run unguarded, in the
# world that is current now; the proof (≈ 0.1 ms of inference, once per signature and
# world, cached) runs outside SITES_LOCK.
@noinline function decide_nothrow!(st::Site, slot::SigSlot, @nospecialize(sig), unguarded_ok::Bool)
    own_pause(+1)
    try
        return decide_nothrow_unpaused!(st, slot, sig, unguarded_ok)
    finally
        own_pause(-1)
    end
end
function decide_nothrow_unpaused!(st::Site, slot::SigSlot, @nospecialize(sig), unguarded_ok::Bool)
    ok = false
    if unguarded_ok && length(st.sigs) <= NOTHROW_SIGS_PER_SITE && slot.run >= NOTHROW_AFTER_CALLS
        short = site_is_short(st.id)
        short === nothing && return false   # not timed yet: keep the handler, ask again next call
        # The proof's code is compiled only when a proof is first tried (invokelatest).
        ok = short && Base.invokelatest(nothrow_world, sig)::UInt != 0
    end
    w = world_now()   # after the proof, which may move it (see nothrow_world)
    if slot.last === sig
        slot.world = w
        slot.fast = ok ? w : NO_WORLD
    end
    return ok
end

# Called at a signature's NOTHROW_AFTER_CALLS-th call in a row, or after a world change:
# the decision and the proof are compiled only then (see signature_slow!).
@noinline decide_nothrow_latest(st::Site, slot::SigSlot, @nospecialize(sig), unguarded_ok::Bool) =
    Base.invokelatest(decide_nothrow!, st, slot, sig, unguarded_ok)::Bool

"""
Calls of one signature on one thread, in a row, before its nothrow proof is tried; until
then the call keeps the handler. The proof saves the handler's ≈ 15–20 ns per call; it
costs the callee's inference (0.05–1 ms) and, the first time in a process, compiling the
analysis (≈ 40 ms on Julia 1.5) — inside the program's run, in the enclosing span. Only a
signature called this often can win it back; a kernel called a few times never pays it
(issue 9 item 10: the decision at a signature's second call was 47 ms of a process's JIT).
"""
const NOTHROW_AFTER_CALLS = 1000

# Limit on the signatures of one site whose nothrow proof is attempted: a site that sees
# many (Val{N} loops) keeps its handler rather than pay inference for each.
const NOTHROW_SIGS_PER_SITE = 8

"""
Calls at a site whose fastest call took longer than this keep the handler without a proof:
the handler's ≈ 20 ns is then ≤ 1 % of the call, while the proof — inference of the callee
and a few levels below, 1–130 ms on real kernels, which rarely pass it (bounds checks) —
would cost more than the handler saves. Only short calls, where the handler matters and
whose code is small, are proved.
"""
const NOTHROW_MAX_NS = 2_000

# Whether the site's calls are short enough to be worth a proof, from the core's exact
# aggregates: `nothing` until two calls were timed (the first one includes its compile).
function site_is_short(id::UInt32)
    r = sized(JagerSiteStat)
    ccall((:jager_site_stats, LIB), Int32, (UInt32, Ptr{JagerSiteStat}), id, r) == OK || return false
    s = r[]
    s.calls < 2 && return nothing
    return s.min_ns <= NOTHROW_MAX_NS
end

@noinline function signature_slow!(st::Site, @nospecialize(sig), tid::Int, unguarded_ok::Bool)
    own_pause(+1)
    try
        return signature_slow_unpaused!(st, sig, tid, unguarded_ok)
    finally
        own_pause(-1)
    end
end
function signature_slow_unpaused!(st::Site, @nospecialize(sig), tid::Int, unguarded_ok::Bool)
    isnew = false
    lock(SITES_LOCK)
    try
        while tid > length(st.slots) # a thread the site was not sized for (foreign/adopted)
            push!(st.slots, SigSlot())
        end
        slot = st.slots[tid]
        idx = 0
        for (i, s) in enumerate(st.sigs)
            if s === sig
                idx = i
                break
            end
        end
        if idx == 0
            push!(st.sigs, sig)
            idx = length(st.sigs)
            isnew = true
        end
        while length(slot.counts) < idx   # plain pushes: fill!(view) compiles SubArray code
            push!(slot.counts, 0)
        end
        slot.idx > 0 && (slot.counts[slot.idx] += slot.run)
        slot.counts[idx] += 1
        slot.idx = idx
        slot.run = 0
        slot.last = sig
        # Decided for now, in this world: keep the handler. count_signature! asks again at
        # the NOTHROW_AFTER_CALLS-th call in a row, when a proof could pay (and the callee
        # was compiled by its first call: the proof's own inference, run before it, would
        # take that inference out of the compile events the dispatch sensor records).
        # Nothing here compiles the decision or the proof.
        slot.world = world_now()
        slot.fast = NO_WORLD
    finally
        unlock(SITES_LOCK)
    end
    isnew && _on_new_signature(st.id, sig)
    return false
end

"""
    signature_counts(site) -> Vector{Pair{Type,Int}}

The argument signatures seen at a @jäger call site in the current (or last) recording,
with exact call counts summed over threads, in order of first sight. `site` is a site id
(`UInt32`/`Integer`) or a `Jager.Site`. Signatures are `Tuple{typeof(f), argtypes...}`.
"""
signature_counts(site::Integer) = merge_counts([st for st in sites_with_id(site)])
signature_counts(st::Site) = merge_counts([st])

function sites_with_id(id::Integer)
    lock(SITES_LOCK)
    try
        out = Site[]   # plain loops here and below: a filtered comprehension and findfirst
        for st in SITES  # with a closure cost 0.18 s of inference at the dispatch sensor's first drain
            st.id == id && push!(out, st)
        end
        return out
    finally
        unlock(SITES_LOCK)
    end
end

function merge_counts(sts::Vector{Site})
    out = Pair{Type,Int}[]
    lock(SITES_LOCK)
    try
        for st in sts, (i, sig) in enumerate(st.sigs)
            n = 0
            for slot in st.slots
                i <= length(slot.counts) && (n += slot.counts[i])
                i == slot.idx && (n += slot.run)
            end
            j = 0
            for k in 1:length(out)
                out[k].first === sig && (j = k; break)
            end
            if j == 0
                push!(out, sig => n)
            else
                out[j] = sig => out[j].second + n
            end
        end
    finally
        unlock(SITES_LOCK)
    end
    return out
end

# ---- enter / leave / fail: what the macro expansions call ---------------------------------

"When true (the default) spans also record the bytes Julia allocated inside them."
const TRACK_BYTES = Ref(true)

const HAS_GC_BYTES_REF = isdefined(Base, :gc_bytes) && hasmethod(Base.gc_bytes, Tuple{Base.RefValue{Int64}})

# Bytes allocated by this process so far (all threads: Julia keeps one sum). The Ref does
# not escape, so the compiler keeps it on the stack: reading costs no allocation.
@inline function gc_total_bytes()
    @static if HAS_GC_BYTES_REF
        r = Ref{Int64}(0)
        Base.gc_bytes(r)
        return r[]
    else
        return Int64(Base.gc_total_bytes(Base.gc_num()))
    end
end

@inline function site_id(st::Site)
    id = st.id
    id == 0 && (id = register!(st))
    return id
end

# _enter, _enter_kw and _leave, which the expansions call, are in hot.jl.

const MAX_ERROR_CHARS = 4000

"""
Record the exception `exc` thrown inside span `sp` (its type, message, the call's
argument signature `sig` or `nothing`, the site) and close the span. Never throws: the
caller rethrows the user's exception unchanged right after.
"""
@noinline function _fail(st::Site, sp::JagerSpan, b0::Int64, @nospecialize(sig), @nospecialize(exc))
    own_pause(+1)
    try
        return _fail_unpaused(st, sp, b0, sig, exc)
    finally
        own_pause(-1)
    end
end
function _fail_unpaused(st::Site, sp::JagerSpan, b0::Int64, @nospecialize(sig), @nospecialize(exc))
    try
        T = string(typeof(exc))
        msg = try
            sprint(showerror, exc)
        catch
            "(showerror failed)"
        end
        length(msg) > MAX_ERROR_CHARS && (msg = first(msg, MAX_ERROR_CHARS) * "…")
        sigstr = sig === nothing ? "" : string(sig)
        attrs = Pair{String,Any}["exception.type" => T, "exception.message" => msg,
                                 "code.function" => st.name, "code.namespace" => string(st.mod),
                                 "code.filepath" => st.file, "code.lineno" => st.line]
        isempty(sigstr) || push!(attrs, "code.signature" => sigstr)
        if METHOD_LOGS[]   # where it was thrown: the innermost method of the exception's backtrace
            m = interned_method(catch_backtrace())
            m === nothing || push!(attrs, KEY_METHOD => m)
        end
        with_attrs(attrs) do a, n
            ccall((:jager_span_set_attrs, LIB), Cvoid, (JagerSpan, Ptr{JagerAttr}, Csize_t), sp, a, n)
        end
        full = isempty(sigstr) ? string(T, ": ", msg) : string(T, ": ", msg, " [", sigstr, "]")
        ccall((:jager_span_error, LIB), Cvoid, (JagerSpan, Cstring), sp, replace(full, '\0' => "\\0"))
    catch
        # Recording must never mask the user's exception.
    end
    _leave(sp, b0)
    return nothing
end

# What the expansions call in their handler: `_fail` builds strings and attributes, code
# generated only when a span first records an exception (see report_error in lib.jl).
@noinline _fail_latest(st::Site, sp::JagerSpan, b0::Int64, @nospecialize(sig), @nospecialize(exc)) =
    (Base.invokelatest(_fail, st, sp, b0, sig, exc); nothing)

"""
    Jager.sites() -> Vector of (id, name, mod, file, line)

Every @jäger site registered with the core in this process, in registration order.
"""
function sites()
    lock(SITES_LOCK)
    try
        return [(id = s.id, name = s.name, mod = s.mod, file = s.file, line = s.line) for s in SITES]
    finally
        unlock(SITES_LOCK)
    end
end
