# compile.jl — compile events: per-root codegen time from `jl_dump_compiles` and per-root
# inference time from the type-inference hook (shared/docs/julia-1.5-notes.md §3).
#
# `jl_dump_compiles` writes one line `<ns>\t"<specTypes>"` per root compile into an
# IOStream; it times LLVM code generation only. The inference entry point installed with
# `jl_set_typeinf_func` is wrapped to time each root inference, keyed by the same
# `jl_static_show` text as the dump, so a drain pairs each dump line with the inference
# that preceded it. Both are read at flush/stop, never on a call site. Compiles of the
# binding's own methods (Jager.stop, Jager.span_expr, …) are not the program's: they are
# left out of the events, their time summed in CAPTURE.own_ns (own.jl).

const HAS_TYPEINF_TOPLEVEL = isdefined(Core.Compiler, :typeinf_ext_toplevel)
"The inference entry point Julia installs (restored at stop)."
const TYPEINF_ORIGINAL = HAS_TYPEINF_TOPLEVEL ? Core.Compiler.typeinf_ext_toplevel :
                         isdefined(Core.Compiler, :typeinf_ext) ? Core.Compiler.typeinf_ext : nothing
"True where the entry point has the (MethodInstance, world) form the wrapper forwards."
const HAS_TYPEINF_HOOK = TYPEINF_ORIGINAL !== nothing &&
                         hasmethod(TYPEINF_ORIGINAL, Tuple{Core.MethodInstance,UInt})
# Runtime entry points, looked up when capture starts (not frozen into a precompiled
# constant): a Julia without one of them simply gets no compile events / no inference
# time. (cglobal needs a literal symbol, hence one function each.)
function has_dump_compiles()
    try
        return cglobal(:jl_dump_compiles) != C_NULL
    catch
        return false
    end
end
function has_set_typeinf_func()
    try
        return cglobal(:jl_set_typeinf_func) != C_NULL
    catch
        return false
    end
end

"Most inference records kept between drains (beyond: not recorded, counted)."
const MAX_INFER_LOG = 1 << 20

mutable struct CompileCapture
    path::String                        # the dump file
    io::Union{IOStream,Nothing}         # jl_dump_compiles writes here
    offset::Int                         # bytes of the dump already read
    scratch::Union{IOStream,Nothing}    # for jl_static_show of inferred specTypes
    hooked::Bool                        # the inference hook is installed
    infer_dropped::Int
    paused::Int                         # depth of without_capture
    own_ns::UInt64                      # codegen + inference of the binding's own methods, not recorded
end
const CAPTURE = CompileCapture("", nothing, 0, nothing, false, 0, 0, 0)

# (MethodInstance, start ns, inference ns, drains survived) — written inside inference,
# possibly on several threads: a spin lock never yields inside the compiler.
const INFER_LOCK = Threads.SpinLock()
const INFER_LOG = Tuple{Core.MethodInstance,UInt64,UInt64,Int}[]

# Installed with jl_set_typeinf_func. Must never throw on its own account: only what the
# original entry point throws propagates, exactly as without the hook.
function timed_typeinf(mi::Core.MethodInstance, world::UInt)
    # Paused (without_capture): the sensor's or the binding's own inference, not recorded.
    CAPTURE.paused > 0 && return TYPEINF_ORIGINAL(mi, world)
    t0 = time_ns()
    r = TYPEINF_ORIGINAL(mi, world)
    d = time_ns() - t0
    record_inference(mi, t0, d)
    return r
end

function record_inference(mi::Core.MethodInstance, t0::UInt64, d::UInt64)
    try
        lock(INFER_LOCK)
        try
            if length(INFER_LOG) < MAX_INFER_LOG
                push!(INFER_LOG, (mi, t0, d, 0))
            else
                CAPTURE.infer_dropped += 1
            end
        finally
            unlock(INFER_LOCK)
        end
    catch
    end
    return nothing
end

"Start capturing compile events. Returns false (and captures nothing) where unsupported."
function start_compile_capture!()
    CAPTURE.io === nothing || return true
    has_dump_compiles() || return false
    path, io = mktemp()
    spath, sio = mktemp()
    rm(spath; force = true) # the open stream keeps the scratch file alive; nothing to clean up
    CAPTURE.path = path
    CAPTURE.io = io
    CAPTURE.offset = 0
    CAPTURE.scratch = sio
    CAPTURE.infer_dropped = 0
    CAPTURE.paused = 0
    CAPTURE.own_ns = 0
    if HAS_TYPEINF_HOOK && warm_typeinf_hook()
        ccall(:jl_set_typeinf_func, Cvoid, (Any,), timed_typeinf)
        CAPTURE.hooked = true
    end
    ccall(:jl_dump_compiles, Cvoid, (Ptr{Cvoid},), io.handle)
    # The binding's slow paths pause capture only while there is one: without it they
    # call nothing (and do not compile pause_capture! at a site's first call).
    isdefined(Jager, :OWN_PAUSE) && (Jager.OWN_PAUSE[] = pause_capture!)
    return true
end

warm_target(x::Int) = x + 1

# Run the wrapper once, before installing it and before the dump starts: compiling it
# from inside the hook would recurse into inference, and its own compile is not the
# program's. False if that fails (then inference is not timed).
function warm_typeinf_hook()
    try
        has_set_typeinf_func() || return false
        precompile(timed_typeinf, (Core.MethodInstance, UInt)) || return false
        m = which(warm_target, (Int,))
        mi = Core.Compiler.specialize_method(m, Tuple{typeof(warm_target),Int}, Core.svec())
        timed_typeinf(mi, Base.get_world_counter())
        lock(INFER_LOCK)
        empty!(INFER_LOG)
        unlock(INFER_LOCK)
        return true
    catch
        return false
    end
end

"Stop capturing: restore Julia's inference entry point, close and delete the dump."
function stop_compile_capture!()
    isdefined(Jager, :OWN_PAUSE) && (Jager.OWN_PAUSE[] = nothing)
    lock(PAUSE_LOCK)
    path = try
        stop_compile_capture_locked!()
    finally
        unlock(PAUSE_LOCK)
    end
    path === nothing || rm(path; force = true)
    return nothing
end

function stop_compile_capture_locked!()
    if CAPTURE.hooked
        ccall(:jl_set_typeinf_func, Cvoid, (Any,), TYPEINF_ORIGINAL)
        CAPTURE.hooked = false
    end
    path = nothing
    if CAPTURE.io !== nothing
        ccall(:jl_dump_compiles, Cvoid, (Ptr{Cvoid},), C_NULL)
        close(CAPTURE.io)
        path = CAPTURE.path
        CAPTURE.io = nothing
    end
    if CAPTURE.scratch !== nothing
        close(CAPTURE.scratch)
        CAPTURE.scratch = nothing
    end
    lock(INFER_LOCK)
    empty!(INFER_LOG)
    unlock(INFER_LOCK)
    return path
end

"""
    without_capture(f)

Run `f()` with compile capture paused, so that what the sensor itself compiles while
draining (its verdict code, on first use) is not reported as the program's compiles.
Compiles on other threads during the pause are not seen either.
"""
function without_capture(@nospecialize(f))
    CAPTURE.io === nothing && return f()
    pause_capture!(+1)
    try
        return f()
    finally
        pause_capture!(-1)
    end
end

# Hooks may run on several threads: the pause depth and the dump switch change together
# under a spin lock (held for one ccall, never across user code). The inference hook
# stays installed and reads the depth: swapping it with jl_set_typeinf_func moves
# Julia's world counter, and every @jäger site decides its nothrow proof again in a new
# world — a site whose decision paused capture then re-decided on every call (≈ 5 µs a
# call with the dispatch plugin, issue 9 item 10).
const PAUSE_LOCK = Threads.SpinLock()

function pause_capture!(delta::Int)
    lock(PAUSE_LOCK)
    try
        io = CAPTURE.io
        io === nothing && return nothing
        before = CAPTURE.paused
        CAPTURE.paused = max(before + delta, 0)
        if before == 0 && CAPTURE.paused > 0
            ccall(:jl_dump_compiles, Cvoid, (Ptr{Cvoid},), C_NULL)
        elseif before > 0 && CAPTURE.paused == 0
            ccall(:jl_dump_compiles, Cvoid, (Ptr{Cvoid},), io.handle)
        end
    finally
        unlock(PAUSE_LOCK)
    end
    return nothing
end

# The text jl_dump_compiles writes for a type (jl_static_show), through the scratch stream.
function static_show(io::IOStream, @nospecialize(T))
    seekstart(io)
    n = ccall(:jl_static_show, Csize_t, (Ptr{Cvoid}, Any), io.handle, T)
    seekstart(io)
    return String(read(io, Int(n)))
end

# New whole lines of the dump since the last drain. Dumping pauses while the stream is
# flushed, so the compiler never writes into a buffer being flushed.
function read_dump_lines!()
    flush(CAPTURE.io) # called under without_capture: the compiler is not writing
    data = open(CAPTURE.path, "r") do r
        seek(r, CAPTURE.offset)
        read(r)
    end
    last = findlast(==(UInt8('\n')), data)
    last === nothing && return String[]
    CAPTURE.offset += last
    return split(String(data[1:last]), '\n'; keepempty = false)
end

# `<ns>\t"<specTypes>"` → (ns, specTypes text), or nothing.
function parse_dump_line(line::AbstractString)
    tab = findfirst('\t', line)
    tab === nothing && return nothing
    ns = tryparse(UInt64, line[1:prevind(line, tab)])
    ns === nothing && return nothing
    rest = line[nextind(line, tab):end]
    if length(rest) >= 2 && startswith(rest, '"') && endswith(rest, '"')
        rest = rest[nextind(rest, 1):prevind(rest, lastindex(rest))]
    end
    return ns, String(rest)
end

"""
    drain_compiles!(emit)

Pair the dump's new lines with recorded inference times and call
`emit(time_ns, codegen_ns, inference_ns, signature)` for each root compile (time_ns is when
its inference began, 0 when the compile had no inference of its own). An inference not
matched yet waits for two more drains (its codegen may come later); then, or at the final
drain, it is emitted with codegen 0: a root whose code needed no generation (a constant
result) still cost its inference. Top-level thunks (`Tuple{}`) are not reported.
"""
function drain_compiles!(emit, final::Bool = false)
    CAPTURE.io === nothing && return 0
    lines = read_dump_lines!()
    lock(INFER_LOCK)
    entries = copy(INFER_LOG)
    empty!(INFER_LOG)
    unlock(INFER_LOCK)
    # Entries per signature text, oldest first: `oldest[text]` is the oldest unmatched one,
    # `later[i]` the one after entry i (0: none). A Dict{String,Int} (compiled in Julia's
    # system image) and plain vectors: a Dict{String,Vector{Int}} cost 0.1 s of inference
    # and code generation at every process's first drain (issue 9 item 10).
    oldest = Dict{String,Int}()
    later = zeros(Int, length(entries))
    keys = Vector{String}(undef, length(entries))
    used = falses(length(entries))
    for i in 1:length(entries)
        keys[i] = static_show(CAPTURE.scratch, entries[i][1].specTypes)
    end
    for i in length(entries):-1:1
        later[i] = get(oldest, keys[i], 0)
        oldest[keys[i]] = i
    end
    lock(LOCK)
    try
        for e in entries
            def = e[1].def
            def isa Method && (COMPILED[def] = nothing) # for the census
        end
    finally
        unlock(LOCK)
    end
    n = 0
    for line in lines
        parsed = parse_dump_line(line)
        parsed === nothing && continue
        codegen, sig = parsed
        i = get(oldest, sig, 0)
        i == 0 || (oldest[sig] = later[i]; used[i] = true)
        if Jager.own_signature_text(sig)   # the binding compiling itself: not the program's
            CAPTURE.own_ns += codegen
            continue
        end
        if i != 0
            emit(entries[i][2], codegen, entries[i][3], sig)
        else
            emit(UInt64(0), codegen, UInt64(0), sig)
        end
        n += 1
    end
    keep = Tuple{Core.MethodInstance,UInt64,UInt64,Int}[]
    for (i, e) in enumerate(entries)
        used[i] && continue
        if Jager.own_callee(e[1]) || Jager.own_signature_text(keys[i])
            CAPTURE.own_ns += e[3]
        elseif e[4] < 2 && !final
            push!(keep, (e[1], e[2], e[3], e[4] + 1))
        elseif keys[i] != "Tuple{}"
            emit(e[2], UInt64(0), e[3], keys[i])
            n += 1
        end
    end
    if !isempty(keep)
        lock(INFER_LOCK)
        newer = copy(INFER_LOG)   # keep goes first; push! loops, not prepend! (0.06 s to compile)
        empty!(INFER_LOG)
        for e in keep
            push!(INFER_LOG, e)
        end
        for e in newer
            push!(INFER_LOG, e)
        end
        unlock(INFER_LOCK)
    end
    return n
end
