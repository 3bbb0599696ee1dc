# symbolize.jl — names for the Julia (JIT) frames of stacks the core recorded.
#
# Plugins (the GC plugin above all) capture raw return addresses in C, where Julia code
# must not run. The core names the addresses that dladdr can; the rest are pulled here,
# from a Julia task, looked up with Base.StackTraces.lookup and handed back with
# jager_symbol_add. Lookups are slow for some sysimage frames (milliseconds), so each
# address is looked up once per process, and addresses inside a shared object (the
# system image) once per machine (symcache.jl).

const SYMBOL_CACHE = Dict{UInt64,Vector{SymFrame}}()
const SYMBOL_LOCK = ReentrantLock()
"Addresses looked up with StackTraces.lookup by this process (the rest came from a cache)."
const SYMBOL_LOOKUPS = Ref(0)

# The frames of return address `ip`, outermost (the function whose machine code holds
# the address) first, then the frames inlined into it. StackTraces.lookup returns them
# innermost first, so they are reversed.
function frames_of(ip::UInt64)
    lock(SYMBOL_LOCK)
    try
        v = get(SYMBOL_CACHE, ip, nothing)
        v === nothing || return v
        v, img = cached_frames(ip)
        if v === nothing
            # Return addresses point after the call: ip - 1 lies inside it.
            v = SymFrame[SymFrame(frame_func(fr), string(fr.file), fr.line)
                         for fr in reverse(Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1)))]
            SYMBOL_LOOKUPS[] += 1
            img === nothing || remember_frames!(img, ip, v)
        end
        SYMBOL_CACHE[ip] = v
        return v
    finally
        unlock(SYMBOL_LOCK)
    end
end

# The binding's own frames are marked (own.jl): tools pass over `jager_`-prefixed frames.
function frame_func(fr)
    s = string(fr.func)
    isempty(s) && return "??"
    return own_file(fr.file) ? string(OWN_FRAME_PREFIX, s) : s
end

"""
    Jager.symbolize!() -> Int

Resolve every stack address the core could not name (JIT-compiled Julia code) and add
its source frames, inlined ones included. Runs at `Jager.stop()` and `Jager.drain()`;
call it from a Julia task, never from a C callback. Returns the number of addresses
resolved.
"""
function symbolize!()
    ENABLED[] || return 0
    buf = Vector{UInt64}(undef, 512)
    total = 0
    try
        while true
            n = Int(ccall((:jager_symbols_unresolved, LIB), Csize_t, (Ptr{UInt64}, Csize_t), buf, length(buf)))
            for i in 1:n
                ip = buf[i]
                ip == 0 && continue
                for (depth, fr) in enumerate(frames_of(ip))
                    st = ccall((:jager_symbol_add, LIB), Int32, (UInt64, UInt32, Cstring, Cstring, UInt32),
                               ip, UInt32(depth - 1), cstr(fr.func), cstr(fr.file),
                               UInt32(clamp(fr.line, 0, typemax(UInt32))))
                    st == OK || jager_throw(st, "Jager.symbolize!: jager_symbol_add")
                end
            end
            total += n
            n < length(buf) && break
        end
    finally
        lock(SYMBOL_LOCK)
        try
            flush_image_caches!()
        finally
            unlock(SYMBOL_LOCK)
        end
    end
    return total
end
