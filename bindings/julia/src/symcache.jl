# symcache.jl — names of return addresses inside shared objects (Julia's system image,
# libjulia), kept on disk between processes.
#
# A recording's GC stacks are mostly frames of Julia's compiler and Base, which live in
# the system image: StackTraces.lookup reads their DWARF, 2–3 ms an address on 1.5, and
# bench/julia/kernels.jl's stop named ≈ 100 such addresses (0.3 s of Jager.stop()). An
# address's offset from the start of its image names the same frames in every process
# that maps the same file, so the frames are appended to a file per image (keyed by the
# image's path, size and mtime) and read back by the next process. JIT addresses (no
# image) are never cached. `JAGER_SYMBOL_CACHE` is the folder (default: the first depot's
# `jager/symbols`); `0` or empty turns the cache off.

"One source frame of an address: function (own frames already marked), file, line."
struct SymFrame
    func::String
    file::String
    line::Int
end

mutable struct ImageCache
    image::String                          # the shared object's path (dladdr's dli_fname)
    base::UInt64                           # where it is mapped in this process
    path::String                           # the cache file ("" when not writable)
    frames::Dict{UInt64,Vector{SymFrame}}  # offset from base → frames
    fresh::Vector{String}                  # lines to append at the end of this symbolize!
end

const IMAGE_CACHES = ImageCache[]   # a few images per process: a vector, searched linearly

# Dl_info of dlfcn.h.
struct DlInfo
    fname::Ptr{UInt8}
    fbase::Ptr{Cvoid}
    sname::Ptr{UInt8}
    saddr::Ptr{Cvoid}
end

function symbol_cache_dir()
    d = get(ENV, "JAGER_SYMBOL_CACHE", nothing)
    d === nothing || return (d == "0" ? "" : d)
    isempty(DEPOT_PATH) && return ""
    return joinpath(DEPOT_PATH[1], "jager", "symbols")
end

# The image holding return address `ip` and its cache, or nothing (JIT code, no cache).
function image_cache(ip::UInt64)
    info = Ref(DlInfo(C_NULL, C_NULL, C_NULL, C_NULL))
    ccall(:dladdr, Cint, (Ptr{Cvoid}, Ref{DlInfo}), Ptr{Cvoid}(ip - 1), info) == 0 && return nothing
    i = info[]
    (i.fname == C_NULL || i.fbase == C_NULL) && return nothing
    base = UInt64(UInt(i.fbase))
    for c in IMAGE_CACHES
        c.base == base && return c
    end
    image = unsafe_string(i.fname)
    c = open_image_cache(image, base)
    push!(IMAGE_CACHES, c)
    return c
end

function open_image_cache(image::String, base::UInt64)
    c = ImageCache(image, base, "", Dict{UInt64,Vector{SymFrame}}(), String[])
    dir = symbol_cache_dir()
    (isempty(dir) || !isabspath(image)) && return c
    try
        st = stat(image)
        st.size > 0 || return c
        key = string(hash((image, st.size, st.mtime)); base = 16)
        c.path = joinpath(dir, string(basename(image), "-", key, ".tsv"))
        isfile(c.path) && read_image_cache!(c)
    catch
        c.path = ""
    end
    return c
end

# Lines `offset<TAB>depth<TAB>func<TAB>file<TAB>line`; an offset's frames are used only when
# its depths run 0, 1, … without a gap (another process's append cut short is skipped).
function read_image_cache!(c::ImageCache)
    for line in eachline(c.path)
        f = split(line, '\t')
        length(f) == 5 || continue
        off = tryparse(UInt64, f[1]; base = 16)
        depth = tryparse(Int, f[2])
        ln = tryparse(Int, f[5])
        (off === nothing || depth === nothing || ln === nothing) && continue
        v = get(c.frames, off, nothing)
        v === nothing && (v = SymFrame[]; c.frames[off] = v)
        depth == length(v) || (empty!(v); continue)
        push!(v, SymFrame(String(f[3]), String(f[4]), ln))
    end
    return c
end

"The cached frames of `ip` (nothing: not cached), and its image cache (nothing: none)."
function cached_frames(ip::UInt64)
    c = image_cache(ip)
    c === nothing && return nothing, nothing
    return get(c.frames, ip - c.base, nothing), c
end

function remember_frames!(c::ImageCache, ip::UInt64, frames::Vector{SymFrame})
    off = ip - c.base
    c.frames[off] = frames
    isempty(c.path) && return
    for fr in frames
        (occursin('\t', fr.func) || occursin('\n', fr.func) || occursin('\t', fr.file) || occursin('\n', fr.file)) && return
    end
    for (depth, fr) in enumerate(frames)
        push!(c.fresh, string(string(off; base = 16), '\t', depth - 1, '\t', fr.func, '\t', fr.file, '\t', fr.line))
    end
end

# Append what this process looked up, one write per image (O_APPEND: concurrent processes
# do not overwrite each other). Never throws: a cache that cannot be written is skipped.
function flush_image_caches!()
    for c in IMAGE_CACHES
        isempty(c.fresh) && continue
        text = join(c.fresh, '\n') * "\n"
        empty!(c.fresh)
        try
            mkpath(dirname(c.path))
            io = open(c.path, "a")
            try
                write(io, text)
            finally
                close(io)
            end
        catch
            c.path = ""
        end
    end
end
