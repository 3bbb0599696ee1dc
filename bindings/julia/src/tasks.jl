# tasks.jl — which Julia task emitted each span, log record and mark.
#
# The core keeps spans per OS thread; Julia runs many tasks on a thread (and from 1.7 a
# task may move between threads when it yields). Before every span begin and end, log
# record and mark the binding tells the core which task runs now (`jager_task_set`), but
# only when it changed: each thread keeps the last task it saw, so the check is one load of
# `current_task()` and one pointer comparison. The core then parents spans per task (a
# span's parent is the innermost open span of the same task on the thread) and writes a
# `task` record into the thread's ring at each change, which tools read to group spans by
# task (`jager summary --by task`).
#
# Task ids: 1, 2, … in order of first sight, the same on every thread and for the whole
# process; kept in the task's own local storage (made on its first event only).

"When true (the default) spans, logs and marks record the Julia task that emitted them."
const TRACK_TASKS = Ref(true)

# Whether a task of this Julia may resume on another thread after it yields (1.7 and later:
# `Threads.@spawn` tasks are not sticky). Asked of the runtime's Task type, not of the
# version: a Task without `sticky` is bound to its thread, and the scheduler that lets
# unsticky tasks migrate came with the atomic task state (`_state`, 1.7). Where tasks
# migrate, the core needs the task id on every span begin and end to find a span's parent
# (the innermost open span of its own task), so the binding tells it even when task
# records are turned off (`Jager.start(tasks = false)`); on 1.5 this is false and nothing
# changes.
const TASKS_MIGRATE = hasfield(Task, :sticky) && hasfield(Task, :_state)

"Per-thread: the task last told to the core and its id (only its own thread writes it)."
mutable struct TaskSlot
    task::Any
    id::UInt64
    owned::Bool                         # the core's context is a task's own (set_context!)
    base::Union{Nothing,TraceContext}   # the thread's context before any task's was applied
end
const TASK_SLOTS = TaskSlot[]
const TASK_NEXT = Threads.Atomic{UInt64}(0)
const TASK_KEY = :__jager_task_id__
const TASK_LOCK = ReentrantLock()

"Size the per-thread slots and forget the last task of each thread (at start)."
function reset_task_slots!()
    lock(TASK_LOCK)
    try
        n = max_thread_slots()
        while length(TASK_SLOTS) < n
            push!(TASK_SLOTS, TaskSlot(nothing, 0, false, nothing))
        end
        for s in TASK_SLOTS
            s.task = nothing
            s.id = 0
            s.owned = false
            s.base = nothing
        end
        TASK_CTX_USED[] = false
    finally
        unlock(TASK_LOCK)
    end
    return nothing
end

"""
    Jager.task_id(t::Task = current_task()) -> UInt64

The id under which the task's events are recorded: 1, 2, … in order of first sight in
this process (the root task is usually 1). Stable for the task's lifetime.
"""
function task_id(t::Task = current_task())
    s = t.storage
    if s isa IdDict{Any,Any}
        v = get(s, TASK_KEY, nothing)
        v isa UInt64 && return v
    end
    return new_task_id!(t)
end

@noinline function new_task_id!(t::Task)
    id = Threads.atomic_add!(TASK_NEXT, UInt64(1)) + UInt64(1)   # atomic_add! returns the old value
    if t === current_task()
        task_local_storage(TASK_KEY, id)
    else
        t.storage === nothing && (t.storage = IdDict{Any,Any}())
        t.storage[TASK_KEY] = id
    end
    return id
end

# The hot path: the thread's last task is the current one.
@inline function note_task()
    TRACK_TASKS[] || TASKS_MIGRATE || return nothing
    t = current_task()
    tid = Threads.threadid()
    slots = TASK_SLOTS
    if tid <= length(slots)
        @inbounds s = slots[tid]
        s.task === t && return nothing
    end
    return task_switched(t, tid)
end

@noinline function task_switched(t::Task, tid::Int)
    id = task_id(t)
    ccall((:jager_task_set, LIB), Cvoid, (UInt64,), id)
    if tid <= length(TASK_SLOTS)
        s = TASK_SLOTS[tid]
        s.task = t
        s.id = id
        TASK_CTX_USED[] && switch_context!(s, t)
    end
    return nothing
end

# ---- trace context per task ----------------------------------------------------------------
#
# The core keeps one current trace context per thread. A context set from Julia
# (`Jager.extract`, `with_traceparent`, `set_context!`) is also kept as the task's own, and
# at each task switch the thread's context becomes the new task's own — or, for a task
# without one, what the thread had before any task's was applied — so @async tasks serving
# different requests on one thread keep their traces apart. Costs nothing until a context
# is set from Julia, then a task-local lookup per task switch.

const TASK_CTX_KEY = :__jager_trace_context__
const TASK_CTX_USED = Ref(false)

# The task's own context: a TraceContext, `nothing` (it cleared its context), or
# NO_OWN_CONTEXT (it never set one: it runs under the thread's).
struct NoOwnContext end
const NO_OWN_CONTEXT = NoOwnContext()
function task_context(t::Task)
    s = t.storage
    s isa IdDict{Any,Any} || return NO_OWN_CONTEXT
    return get(s, TASK_CTX_KEY, NO_OWN_CONTEXT)
end

core_context_set(ctx::TraceContext) = ccall((:jager_context_set, LIB), Cvoid, (Ref{TraceContext},), ctx)
core_context_set(::Nothing) = ccall((:jager_context_set, LIB), Cvoid, (Ptr{TraceContext},), C_NULL)

function switch_context!(s::TaskSlot, t::Task)
    ctx = task_context(t)
    if ctx isa TraceContext || ctx === nothing
        if !s.owned
            s.base = current_context()
            s.owned = true
        end
        core_context_set(ctx::Union{Nothing,TraceContext})
    elseif s.owned
        core_context_set(s.base)
        s.owned = false
    end
    return nothing
end

# set_context! on the current task: remember it as the task's own.
function own_context!(ctx::Union{Nothing,TraceContext})
    (TRACK_TASKS[] && ENABLED[]) || return nothing
    note_task()
    tid = Threads.threadid()
    tid <= length(TASK_SLOTS) || return nothing
    s = TASK_SLOTS[tid]
    if !s.owned
        s.base = current_context()
        s.owned = true
    end
    task_local_storage(TASK_CTX_KEY, ctx)
    TASK_CTX_USED[] = true
    return nothing
end

"The innermost open span of the current task on this thread: (site, span id), zeros if none."
function current_span()
    note_task()
    site = Ref{UInt32}(0)
    id = ccall((:jager_span_current, LIB), UInt32, (Ref{UInt32},), site)
    return (site[], id)
end

# What a task spawned with Jager.@async / Jager.@spawn knows of where it was made.
function task_origin(name)
    ENABLED[] || return nothing
    site, span = current_span()
    return (task_id(), site, span, name === nothing ? "" : string(name))
end

# At the start of the child: its id, then its parent task (and the span that was open in the
# parent when it was spawned) as run metadata `julia.task.<id>.parent` = "<task>",
# `.parent_span` = "<site>:<span id>" (span ids are per thread: the parent's thread is the
# one whose ring holds that span), `.name`.
function task_started(origin)
    origin === nothing && return nothing
    ENABLED[] || return nothing
    own_pause(+1)
    try
        id = string(task_id())
        ptask, site, span, name = origin
        ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring), "julia.task." * id * ".parent", string(ptask))
        span == 0 || ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring),
                           "julia.task." * id * ".parent_span", string(site, ":", span))
        isempty(name) || ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring),
                               "julia.task." * id * ".name", cstr(name))
    catch
    finally
        own_pause(-1)
    end
    return nothing
end

function spawn_expr(src, mod, args, which::Symbol)
    name, ex = length(args) == 2 ? (args[1], args[2]) : length(args) == 1 ? (nothing, args[1]) :
        throw(ArgumentError("Jager.@$which [name] expr"))
    o = gensym(:origin)
    inner = Expr(:block, :($(g(:task_started))($o)), ex)
    m = which === :spawn ? Expr(:., GlobalRef(Base, :Threads), QuoteNode(Symbol("@spawn"))) :
        GlobalRef(Base, Symbol("@async"))
    return esc(Expr(:let, Expr(:(=), o, :($(g(:task_origin))($name))), Expr(:macrocall, m, src, inner)))
end

"""
    Jager.@async [name] expr

`@async expr` whose task records its parent task — and the span open in the parent when it
was made — as run metadata (`julia.task.<id>.parent`, `.parent_span`, `.name`).
"""
macro async(args...)
    spawn_expr(__source__, __module__, args, :async)
end

"""
    Jager.@spawn [name] expr

`Threads.@spawn expr` that records its parent task like [`Jager.@async`](@ref). From Julia
1.7 such a task may resume on another thread after it yields; a span that ends on another
thread than it began on is recorded there as a root of its task (see `jager_task_set`).
"""
macro spawn(args...)
    spawn_expr(__source__, __module__, args, :spawn)
end
