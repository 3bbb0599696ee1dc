# gcstate.jl — the GC's counters on log records and marks, and `Jager.mark`.
#
# `Base.gc_num()` is a `ccall` returning an isbits struct by value: reading it allocates
# nothing. Which fields exist is asked of the struct (capability checks), not of the
# Julia version; a field a version lacks is left out of the record.

const GC_NUM_T = typeof(Base.gc_num())
const HAS_PAUSE = hasfield(GC_NUM_T, :pause)
const HAS_FULL_SWEEP = hasfield(GC_NUM_T, :full_sweep)
const HAS_TOTAL_TIME = hasfield(GC_NUM_T, :total_time)
const HAS_GC_TOTAL_BYTES = isdefined(Base, :gc_total_bytes)

"When true (the default) log records and marks carry the GC counters (`gc.*` attributes)."
const TRACK_GC = Ref(true)

const KEY_GC_BYTES = "gc.allocated_bytes"
const KEY_GC_PAUSES = "gc.pauses"
const KEY_GC_TIME = "gc.time_ns"
const KEY_GC_FULL = "gc.full_sweeps"

"""
    Jager.gc_counters() -> NamedTuple

`(allocated_bytes, pauses, time_ns, full_sweeps)` from `Base.gc_num()` now: bytes allocated
by the process so far (all threads), collections, total GC time in ns, full collections
(-1 where this Julia has no such counter). Allocates nothing.
"""
@inline function gc_counters()
    n = Base.gc_num()
    bytes = @static HAS_GC_TOTAL_BYTES ? Int64(Base.gc_total_bytes(n)) : gc_total_bytes()
    pauses = @static HAS_PAUSE ? Int64(n.pause) : Int64(-1)
    t = @static HAS_TOTAL_TIME ? Int64(n.total_time) : Int64(-1)
    full = @static HAS_FULL_SWEEP ? Int64(n.full_sweep) : Int64(-1)
    return (allocated_bytes = bytes, pauses = pauses, time_ns = t, full_sweeps = full)
end

# Store the counters as four i64 attributes at attrs[n+1:n+4]; returns the new n.
@inline function put_gc_attrs!(attrs::Vector{JagerAttr}, n::Int, c)
    i64(k, v) = JagerAttr(pointer(k), ATTR_I64, 0, reinterpret(UInt64, v))
    attrs[n += 1] = i64(KEY_GC_BYTES, c.allocated_bytes)
    c.pauses >= 0 && (attrs[n += 1] = i64(KEY_GC_PAUSES, c.pauses))
    c.time_ns >= 0 && (attrs[n += 1] = i64(KEY_GC_TIME, c.time_ns))
    c.full_sweeps >= 0 && (attrs[n += 1] = i64(KEY_GC_FULL, c.full_sweeps))
    return n
end


"Per-thread attribute buffers of `mark` (sized at start)."
const MARK_BUFS = Vector{Vector{JagerAttr}}()
function reset_mark_bufs!()
    while length(MARK_BUFS) < max_thread_slots()
        push!(MARK_BUFS, Vector{JagerAttr}(undef, 4))
    end
end

"""
    Jager.mark(name::String)

Record an instant mark `name` (interned by the core: keep the set of names small) on the
current task, with the GC counters read first (`gc.allocated_bytes`, `gc.pauses`,
`gc.time_ns`, `gc.full_sweeps`, unless `Jager.start(gc = false)`). No-op while not recording.
"""
function mark(name::String)
    ENABLED[] || return nothing
    c = gc_counters()        # first: nothing below has allocated yet
    note_task()
    tid = Threads.threadid()
    if TRACK_GC[] && tid <= length(MARK_BUFS)
        buf = MARK_BUFS[tid]   # this thread's: nothing yields between the stores and the call
        n = put_gc_attrs!(buf, 0, c)
        GC.@preserve buf name KEY_GC_BYTES KEY_GC_PAUSES KEY_GC_TIME KEY_GC_FULL begin
            ccall((:jager_mark_attrs, LIB), Cvoid, (Cstring, Ptr{JagerAttr}, Csize_t), name, buf, n)
        end
    else
        ccall((:jager_mark, LIB), Cvoid, (Cstring,), name)
    end
    return nothing
end
mark(name::AbstractString) = mark(String(name))
