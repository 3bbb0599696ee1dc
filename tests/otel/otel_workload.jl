# The Julia side of the otel tests: spans from @jäger on one function, @info records
# through JagerLogger and three full collections, with the otel plugin loaded from JAGER_PLUGINS (JAGER_LIB names the
# build's libjager.so), and one span with a sparse matrix as a value attribute
# (`attrs = (:A => S,)`: A.eltype, A.size, A.nnz, A.density). The test compares what the
# receiver got with the .jgr.
push!(LOAD_PATH, joinpath(@__DIR__, "..", "..", "bindings", "julia"))
using Jager, Logging, SparseArrays

step(x) = x * 2 + 1
function run(n)
    s = 0
    for i in 1:n
        s += @jäger step(i)
    end
    s
end

solve(A) = sum(A)
# 3 nonzeros in 10×20: density 3/200 = 0.015
const S = sparse([1, 4, 10], [2, 7, 20], [1.0, 2.0, 3.0], 10, 20)

Jager.start()
@jäger_block "outer" begin
    run(300)
    @jäger solve(S) attrs = (:A => S,)
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
