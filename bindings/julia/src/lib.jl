# lib.jl — find and load libjager without ever throwing at `using` time.
#
# Every ccall names the library by its SONAME (`LIB`, a constant, so each call site binds
# its function pointer once, as a ccall with a literal path would). `__init__` dlopens the
# file it found with RTLD_GLOBAL; glibc then answers dlopen("libjager.so.1") with that
# already loaded object, so the path chosen at run time — not one frozen into a
# precompilation cache — is the library the ccalls use. When nothing is found, loading
# succeeds and every entry point throws `LIB_NOT_FOUND` plus what was searched.

"The SONAME every ccall uses (libjager's ABI major is 1)."
const LIB = "libjager.so.1"

"The message of every error raised when libjager could not be loaded."
const LIB_NOT_FOUND = "Jager: libjager not found; set JAGER_LIB=/path/to/libjager.so"

mutable struct LibState
    path::String          # the file loaded, "" if none
    handle::Ptr{Cvoid}    # its dlopen handle, C_NULL if none
    detail::String        # why it is not loaded (what was searched)
end
const LIBSTATE = LibState("", C_NULL, "not initialised")

"True when libjager is loaded and its functions can be called."
available() = LIBSTATE.handle != C_NULL

"The path of the loaded libjager, or `nothing`."
libpath() = available() ? LIBSTATE.path : nothing

@noinline function lib_error()
    throw(JagerError(E_NOTFOUND, string(LIB_NOT_FOUND, " (", LIBSTATE.detail, ")")))
end

"Throw the not-found error unless libjager is loaded."
@inline require_lib() = available() || lib_error()

# Build trees next to the package's repository: <repo>/build*/lib/libjager.so*. The newest
# file wins, since several build folders may coexist. (Newest first by insertion, not
# `sort!`: sorting tuples compiles a sort specialization, 0.15 s at every `using` on 1.5.)
function build_tree_candidates()
    repo = normpath(joinpath(@__DIR__, "..", "..", ".."))
    paths = String[]
    times = Float64[]
    isdir(repo) || return paths
    for d in readdir(repo)
        startswith(d, "build") || continue
        libdir = joinpath(repo, d, "lib")
        isdir(libdir) || continue
        for f in readdir(libdir)
            if f == "libjager.so.1" || f == "libjager.so"
                p = joinpath(libdir, f)
                if isfile(p)
                    t = mtime(p)
                    i = 1
                    while i <= length(times) && times[i] >= t
                        i += 1
                    end
                    insert!(paths, i, p)
                    insert!(times, i, t)
                end
                break
            end
        end
    end
    return paths
end

# An installed layout: <prefix>/share/jager/julia/Jager/src → <prefix>/lib{,64}.
function install_candidates()
    prefix = normpath(joinpath(@__DIR__, "..", "..", "..", "..", ".."))
    return [joinpath(prefix, l, "libjager.so.1") for l in ("lib", "lib64")]
end

function try_open(path::AbstractString)
    h = Libdl.dlopen(path, Libdl.RTLD_NOW | Libdl.RTLD_GLOBAL; throw_error = false)
    h === nothing && return C_NULL
    return h
end

# Load libjager; record what happened in LIBSTATE. Never throws.
function load_library!()
    LIBSTATE.path = ""
    LIBSTATE.handle = C_NULL
    env = get(ENV, "JAGER_LIB", "")
    tried = String[]
    # A libjager already in the process (LD_PRELOAD zero-code mode, or loaded by a C
    # library this program uses) is the one to talk to: a second copy would have its own
    # rings, sites and recording.
    h = Libdl.dlopen(LIB, Libdl.RTLD_NOLOAD | Libdl.RTLD_NOW | Libdl.RTLD_GLOBAL; throw_error = false)
    if h !== nothing
        return adopt!(something(Libdl.dlpath(h), LIB), h)
    end
    if !isempty(env)
        # An explicit choice is never silently replaced by another library.
        if !isfile(env)
            LIBSTATE.detail = "JAGER_LIB=$env: no such file"
            return
        end
        h = try_open(env)
        if h == C_NULL
            LIBSTATE.detail = "JAGER_LIB=$env: dlopen failed: $(dlerror_text())"
            return
        end
        return adopt!(env, h)
    end
    # The search is compiled only when it runs (no JAGER_LIB, nothing preloaded).
    Base.invokelatest(search_library!, tried) && return
    # The system's search path (LD_LIBRARY_PATH, ldconfig cache).
    push!(tried, "$LIB on the system library path")
    h = try_open(LIB)
    h == C_NULL || return adopt!(something(Libdl.dlpath(h), LIB), h)
    LIBSTATE.detail = "JAGER_LIB is unset; searched " * join(tried, ", ")
    return
end

# Julia 1.5 caches no native code: a method is compiled at its caller's first compile
# when the caller calls it statically, even on a path that never runs. The binding's
# rare paths (an error report, a failed hook, an exception inside a span) are therefore
# called through `invokelatest`, so their code — logging macros, string building — is
# generated only the first time one of them runs, never at `using` or a site's first call.

"""
Log `msg` with the exception `e` (and its backtrace `bt`, or `nothing`) at error level;
`what` (a hook, or `nothing`) is shown after the message.
"""
@noinline function report_error(msg::String, @nospecialize(what), @nospecialize(e), @nospecialize(bt))
    what === nothing || (msg = string(msg, " (", what, ")"))
    if bt === nothing
        @error msg exception = e
    else
        @error msg exception = (e, bt)
    end
    return nothing
end
@noinline report_error_latest(msg::String, @nospecialize(what), @nospecialize(e), @nospecialize(bt)) =
    (Base.invokelatest(report_error, msg, what, e, bt); nothing)

# The build trees and the install prefix; true when a file was opened (and adopted,
# or refused with the reason in LIBSTATE.detail).
function search_library!(tried::Vector{String})
    for p in vcat(build_tree_candidates(), install_candidates())
        push!(tried, p)
        isfile(p) || continue
        h = try_open(p)
        h == C_NULL && continue
        adopt!(p, h)   # adopted, or LIBSTATE.detail says why not
        return true
    end
    return false
end

function dlerror_text()
    p = ccall(:dlerror, Cstring, ())
    return p == C_NULL ? "unknown error" : unsafe_string(p)
end

# Accept a loaded file only if its SONAME resolves to it: the ccalls go through LIB.
function adopt!(path::AbstractString, h::Ptr{Cvoid})
    byname = try_open(LIB)
    mine = something(Libdl.dlsym(h, :jager_version; throw_error = false), C_NULL)
    theirs = byname == C_NULL ? C_NULL :
             something(Libdl.dlsym(byname, :jager_version; throw_error = false), C_NULL)
    if mine == C_NULL
        LIBSTATE.detail = "$path does not export jager_version: not libjager"
        return
    end
    if theirs != mine
        LIBSTATE.detail = "$path is loaded but its SONAME is not $LIB (another libjager shadows it?)"
        return
    end
    LIBSTATE.path = String(path)
    LIBSTATE.handle = h
    LIBSTATE.detail = ""
    return
end
