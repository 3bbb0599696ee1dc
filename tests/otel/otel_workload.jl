# The Julia side of the otel tests: spans from @jäger on one function, @info records
# through JagerLogger and three full collections, with the otel plugin loaded from JAGER_PLUGINS (JAGER_LIB names the
# build's libjager.so). The test compares what the receiver got with the .jgr.
push!(LOAD_PATH, joinpath(@__DIR__, "..", "..", "bindings", "julia"))
using Jager, Logging

step(x) = x * 2 + 1
function run(n)
    s = 0
    for i in 1:n
        s += @jäger step(i)
    end
    s
end

Jager.start()
@jäger_block "outer" begin
    run(300)
end
for _ in 1:3
    GC.gc()        # pauses for the gc plugin (JAGER_PLUGINS=otel,gc): exported as plugin event counts
end
with_logger(JagerLogger()) do
    for i in 1:5
        @info "julia step" i
    end
end
Jager.stop()
