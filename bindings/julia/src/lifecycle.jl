# lifecycle.jl — start, stop, record, flush.

"""
Hooks called as `hook()` by [`stop`](@ref) while the core is still recording (before
`jager_shutdown`), on the task that called `stop`; e.g. the dispatch sensor emits its
per-signature counts and specialization census here. A hook that throws is reported and
the others still run.
"""
const STOP_HOOKS = Function[]

"""
Hooks called as `hook()` by [`start`](@ref) right after the core started recording.
"""
const START_HOOKS = Function[]

"""
Hooks called as `hook()` by [`drain`](@ref) on the calling task, before the rings are
drained (e.g. the dispatch sensor sends its pending verdicts and counts).
"""
const FLUSH_HOOKS = Function[]

mutable struct Session
    external::Bool            # recording started outside Julia (e.g. LD_PRELOAD + JAGER_OUTPUT)
    from_env::Bool            # started by `using Jager` because JAGER_OUTPUT/JAGER_PLUGINS is set
    start_ns::UInt64          # time_ns() at start
    stop_ns::UInt64           # time_ns() at stop, 0 while recording
    output::Union{Nothing,String}
    stats::Vector{Tuple{Site,JagerSiteStat}}   # snapshot taken by stop() for print_timings()
    dropped::Int              # events the core dropped, as stop() saw them
end
const SESSION = Session(false, false, 0, 0, nothing, Tuple{Site,JagerSiteStat}[], 0)

"""
    Jager.isrecording()

True while recording: after `start()`, or from `using Jager` on when the environment
sets `JAGER_OUTPUT` or `JAGER_PLUGINS` (that recording ends at `stop()` or at exit), or
when a preloaded libjager records.
"""
isrecording() = ENABLED[]

# `what`: the message logged when a hook throws.
function run_hooks(hooks::Vector{Function}, what::String)
    for h in copy(hooks)
        try
            Base.invokelatest(h)
        catch e
            report_error_latest(what, h, e, catch_backtrace())
        end
    end
end

const RING_MODES = Dict(:discard => 0, :overwrite => 1)

# `sample` = :auto | (:auto, budget) | :all | n::Integer (one in n) | (:interval, ns)
function set_sample!(cfg::JagerConfig, sample)
    if sample === :all
        cfg.sample_mode = 0
    elseif sample === :auto || (sample isa Tuple{Symbol,Integer} && sample[1] === :auto && sample[2] >= 1)
        cfg.sample_mode = 3 # JAGER_SAMPLE_AUTO: the core's default
        cfg.sample_n = sample === :auto ? UInt32(1000) : UInt32(sample[2])
        cfg.sample_interval_ns = UInt64(1_000_000)
    elseif sample isa Integer && sample >= 1
        cfg.sample_mode = 1
        cfg.sample_n = UInt32(sample)
    elseif sample isa Tuple{Symbol,Integer} && sample[1] === :interval && sample[2] > 0
        cfg.sample_mode = 2
        cfg.sample_interval_ns = UInt64(sample[2])
    else
        throw(ArgumentError("Jager.start: sample must be :auto, (:auto, budget), :all, a positive integer n " *
                            "(one span in n) or (:interval, nanoseconds); got $(repr(sample))"))
    end
end

"""
    Jager.start(; output, plugins, plugin_path, filter, ring_bytes, ring_mode, flush_interval_ms,
                sample, max_threads, quiet, disable, bytes = true, tasks = true, gc = true, env = true)

Start recording. The configuration starts from the core's defaults plus, when `env` is
true, the `JAGER_*` environment variables (`JAGER_OUTPUT`, `JAGER_PLUGINS`, …); keyword
arguments override them: `output` (path of the .jgr file, `"%p"` becomes the pid),
`plugins` (`"gc,dispatch"` or a vector of names), `ring_mode` (`:discard`/`:overwrite`),
`sample` (`:auto`, the core's default: a site past 1000 spans a millisecond on a thread is thinned, counted; `(:auto, budget)`, `:all`, `n`, or `(:interval, ns)`), `bytes` (record allocated bytes per span),
`tasks` (record which Julia task emitted each span, log and mark, and parent spans per
task), `gc` (the GC counters on log records and marks).
Returns `true` when recording, `false` when the configuration disables recording
(`JAGER_DISABLE=1`). Throws a [`JagerError`](@ref) if already recording, if libjager is
missing or if the core refuses the configuration (with its message).

When `using Jager` already started recording because `JAGER_OUTPUT` or `JAGER_PLUGINS` is
set (see [`isrecording`](@ref)), `start()` joins that recording: it returns `true` and
starts no second one (its keyword arguments are then not applied).
"""
function start(; output = nothing, plugins = nothing, plugin_path = nothing, filter = nothing,
               ring_bytes = nothing, ring_mode = nothing, flush_interval_ms = nothing,
               sample = nothing, max_threads = nothing, quiet = nothing, disable = nothing,
               bytes::Bool = true, tasks::Bool = true, gc::Bool = true, env::Bool = true)
    require_lib()
    ENABLED[] && SESSION.from_env && return true
    ENABLED[] && throw(JagerError(E_STATE, string("Jager.start: already recording",
                       SESSION.external ? " (started outside Julia, e.g. by a preloaded libjager)" :
                       "; call Jager.stop() first")))
    ccall(:jl_generating_output, Cint, ()) == 0 ||
        throw(JagerError(E_STATE, "Jager.start: not while precompiling (record at run time, e.g. in __init__ or a script)"))
    cfg = JagerConfig()
    st = ccall((:jager_config_init, LIB), Int32, (Ref{JagerConfig},), cfg)
    st == OK || jager_throw(st, "Jager.start: jager_config_init")
    if env
        st = ccall((:jager_config_from_env, LIB), Int32, (Ref{JagerConfig},), cfg)
        st == OK || jager_throw(st, "Jager.start")
    end
    keep = String[] # strings referenced by cfg until jager_init has copied them
    str!(s) = (c = cstr(s); push!(keep, c); pointer(c))
    output === nothing || (cfg.output = str!(output))
    if plugins !== nothing
        cfg.plugins = str!(plugins isa AbstractString ? plugins : join(string.(plugins), ","))
    end
    plugin_path === nothing || (cfg.plugin_path = str!(plugin_path isa AbstractString ? plugin_path : join(plugin_path, ":")))
    filter === nothing || (cfg.filter = str!(filter isa AbstractString ? filter : join(filter, ",")))
    ring_bytes === nothing || (cfg.ring_bytes = UInt64(ring_bytes))
    if ring_mode !== nothing
        haskey(RING_MODES, ring_mode) || throw(ArgumentError("Jager.start: ring_mode must be :discard or :overwrite"))
        cfg.ring_mode = RING_MODES[ring_mode]
    end
    flush_interval_ms === nothing || (cfg.flush_interval_ms = UInt32(flush_interval_ms))
    sample === nothing || set_sample!(cfg, sample)
    max_threads === nothing || (cfg.max_threads = UInt32(max_threads))
    quiet === nothing || (cfg.quiet = UInt32(quiet))
    disable === nothing || (cfg.disable = UInt32(disable))
    out = cfg.output == C_NULL ? nothing : unsafe_string(cfg.output)
    reset_signatures!()
    supply_before_start() # JAGER_LOCK + JAGER_STRICT: throws SupplyChainError before anything records
    st = GC.@preserve keep cfg ccall((:jager_init, LIB), Int32, (Ref{JagerConfig},), cfg)
    st == E_DISABLED && return false
    st == OK || jager_throw(st, "Jager.start")
    lock(SITES_LOCK)
    try
        for s in SITES # ids survive shutdown/init; the new file needs their modules again
            describe_site(s, s.id)
        end
    finally
        unlock(SITES_LOCK)
    end
    TRACK_BYTES[] = bytes
    TRACK_TASKS[] = tasks
    TRACK_GC[] = gc
    method_config!()
    reset_mark_bufs!()
    reset_task_slots!()
    SESSION.external = false
    SESSION.from_env = false
    SESSION.start_ns = time_ns()
    SESSION.stop_ns = 0
    SESSION.output = out
    empty!(SESSION.stats)
    ENABLED[] = true
    supply_after_start() # JAGER_LOCK, not strict: checked on a task of its own
    note_task()   # the starting task's record now: its first span pays no task-switch compile
    run_hooks(START_HOOKS, "Jager: a start hook failed")
    program_mark!("julia.program_start_ns")
    return true
end

# The program's part of the recording: from the end of start() to the call of stop(). The
# run stays the recording's clock span (its END block); the tools leave Jäger's own start
# and stop work on the program's threads (loading plugins, symbolizing, the stop hooks:
# 0.26 s and 1 s on a 2 s program) out of the thread time that shares are taken of.
program_mark!(key) = ccall((:jager_metadata_set, LIB), Int32, (Cstring, Cstring), key,
                           string(ccall((:jager_now_ns, LIB), UInt64, ())))

"""
    Jager.stop()

Stop recording: run `STOP_HOOKS`, symbolize the Julia frames of recorded stacks, keep the
sites' statistics for [`print_timings`](@ref), then drain, write and close everything
(`jager_shutdown`). A no-op when not recording.
"""
function stop()
    ENABLED[] || return nothing
    program_mark!("julia.program_end_ns")
    SESSION.stop_ns = time_ns() # the program's part ends here (print_timings without a file)
    # Through invokelatest: the rest is compiled after the mark, not before stop() runs (its
    # first call compiled for 0.27 s ahead of the mark, counted as the program's time).
    Base.invokelatest(stop_rest)
    return nothing
end

function stop_rest()
    finish_julia_side!()
    ENABLED[] = false
    # A recording started outside Julia is shut down by its owner (at process exit).
    SESSION.external || ccall((:jager_shutdown, LIB), Cvoid, ())
    return nothing
end

# What only Julia can add before the core closes the file: the stop hooks' events, the
# names of JIT frames, and the statistics print_timings() shows afterwards.
function finish_julia_side!()
    supply_wait() # the JAGER_LOCK check's events go in before the file closes
    run_hooks(STOP_HOOKS, "Jager: a stop hook failed")
    # Drain first: plugins (gc) intern their stacks at the drain, so the symbolizer sees them.
    ccall((:jager_flush, LIB), Int32, ())
    try
        symbolize!()
    catch e
        report_error_latest("Jager: symbolizing stacks failed", nothing, e, catch_backtrace())
    end
    try
        Base.invokelatest(record_span_cost!)
    catch e
        report_error_latest("Jager: measuring the span cost failed", nothing, e, catch_backtrace())
    end
    snapshot_stats!()
end

# At `using` time: if the core already records (libjager preloaded with JAGER_OUTPUT set),
# @jäger sites record into it, and the Julia side is finished at exit.
function attach_external!()
    available() || return
    ccall((:jager_is_enabled, LIB), Cint, ()) == 1 || return
    SESSION.external = true
    SESSION.start_ns = time_ns()
    SESSION.stop_ns = 0
    method_config!()
    reset_mark_bufs!()
    reset_task_slots!()
    ENABLED[] = true
    atexit() do
        ENABLED[] && SESSION.external && ccall((:jager_is_enabled, LIB), Cint, ()) == 1 && stop()
    end
    return
end

# At `using` time: JAGER_OUTPUT or JAGER_PLUGINS in the environment start a recording
# from that configuration, as the preloaded core does, finished at exit (unless the
# program stops it first). Never throws: a refused configuration is reported.
function attach_env!()
    available() && !ENABLED[] || return
    isempty(get(ENV, "JAGER_OUTPUT", "")) && isempty(get(ENV, "JAGER_PLUGINS", "")) && return
    ccall(:jl_generating_output, Cint, ()) == 0 || return
    # Through invokelatest: `start` and what it calls are compiled only when the
    # environment asks for a recording, not at every `using Jager`.
    started = try
        Base.invokelatest(start)::Bool
    catch e
        report_error_latest("Jager: JAGER_OUTPUT/JAGER_PLUGINS is set but recording could not start", nothing, e, nothing)
        false
    end
    started || return
    SESSION.from_env = true
    atexit() do
        ENABLED[] && SESSION.from_env && stop()
    end
    return
end

"""
    Jager.record(f; kwargs...)

`start(; kwargs...)`, run `f()`, `stop()` (also when `f` throws); returns `f()`'s value.
"""
function record(f; kwargs...)
    start(; kwargs...)
    try
        return f()
    finally
        stop()
    end
end

"""
    Jager.drain()

Run `FLUSH_HOOKS`, drain every ring into the sinks and flush them, then symbolize new Julia frames
(written at the next drain). Call it
from a Julia task (the symbolizer runs Julia code). Returns `true` when flushed.
"""
function drain()
    ENABLED[] || return false
    run_hooks(FLUSH_HOOKS, "Jager: a flush hook failed")
    # Drain before symbolizing (plugins intern stacks at the drain); the frames added are
    # written at the next drain or at stop.
    st = ccall((:jager_flush, LIB), Int32, ())
    symbolize!()
    st == OK || st == E_STATE || jager_throw(st, "Jager.drain")
    return st == OK
end

"""
    Jager.stats() -> JagerStat

The core's counters (events emitted, recorded, dropped per reason, spans, …).
"""
function stats()
    require_lib()
    r = sized(JagerStat)
    st = ccall((:jager_stats, LIB), Int32, (Ptr{JagerStat},), r)
    st == OK || jager_throw(st, "Jager.stats")
    return r[]
end

"""
    Jager.site_stats(site) -> JagerSiteStat or nothing

The core's exact aggregates of a site id (or `Site`), `nothing` if the core has none.
"""
function site_stats(id::Integer)
    require_lib()
    r = sized(JagerSiteStat)
    st = ccall((:jager_site_stats, LIB), Int32, (UInt32, Ptr{JagerSiteStat}), UInt32(id), r)
    st == OK && return r[]
    st == E_NOTFOUND && return nothing
    jager_throw(st, "Jager.site_stats")
end
site_stats(s::Site) = s.id == 0 ? nothing : site_stats(s.id)

# The core's exact aggregates of every registered site, once per site id.
function live_site_rows()
    rows = Tuple{Site,JagerSiteStat}[]
    lock(SITES_LOCK)
    sites = try
        copy(SITES)
    finally
        unlock(SITES_LOCK)
    end
    seen = Set{UInt32}()
    for s in sites
        s.id in seen && continue
        push!(seen, s.id)
        r = site_stats(s.id)
        r === nothing || push!(rows, (s, r))
    end
    return rows
end

function snapshot_stats!()
    SESSION.dropped = Int(stats().events_dropped)
    empty!(SESSION.stats)
    append!(SESSION.stats, live_site_rows())
end
