# The Julia binding's tests. Run as
#   JAGER_LIB=build/lib/libjager.so JULIA_DEPOT_PATH=$(mktemp -d) \
#     julia --project=bindings/julia bindings/julia/test/runtests.jl
# (ctest does this: tests/julia/run-julia-tests.sh). Every recording is read back from
# its .jgr file through libjager's reader.
using Test
using Logging
using Jager
using Random

include("reader.jl")
using .JgrReader: site_id, site_ids, spans, logs

const TMP = mktempdir()
const PKGDIR = dirname(@__DIR__)

"Record `f()` into a fresh file named after `name` and return what the file holds."
# Every span an event unless a test asks otherwise (`sample = …`): the tests count events
# exactly, and the core's default (`:auto`) thins a site past 1000 spans a millisecond.
function recorded(f, name::AbstractString; ips = () -> UInt64[], kwargs...)
    path = joinpath(TMP, name * ".jgr")
    kw = merge((sample = :all,), kwargs)
    Jager.record(f; output = path, env = false, quiet = true, kw...)
    return JgrReader.read(path; ips = ips())
end

Jager.available() || error("libjager is not loaded: ", Jager.LIBSTATE.detail)

if ARGS == ["eventctx"]        # only the event-context tests (quick runs while developing)
    using Random
    @testset "Jager eventctx" begin
        include("eventctx_tests.jl")
    end
    exit()
end

if ARGS == ["dispatch"]        # the dispatch sensor's tests (ctest julia_dispatch)
    @testset "Jager dispatch" begin
        include("dispatch_tests.jl")
    end
    exit()
end

@testset "Jager" begin
    include("abi_tests.jl")
    include("span_tests.jl")
    include("error_tests.jl")
    include("nothrow_tests.jl")
    include("disabled_tests.jl")
    include("logger_tests.jl")
    include("signature_tests.jl")
    include("context_tests.jl")
    include("symbolize_tests.jl")
    include("summary_tests.jl")
    include("method_tests.jl")
    include("env_tests.jl")
    include("thread_tests.jl")
    include("hook_tests.jl")
    include("missing_lib_tests.jl")
    include("external_tests.jl")
    include("selfcost_tests.jl")
    include("eventctx_tests.jl")
end
# dispatch_tests.jl (`runtests.jl dispatch`) and gc_tests.jl run as their own ctests.
