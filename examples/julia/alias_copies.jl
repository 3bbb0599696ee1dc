# alias_copies.jl — allocation that `@views` cannot remove: Base.unalias copies.
#
# `jacobi!` updates the interior of `u` from four shifted views of the same array. The
# views do not copy, but the broadcast writes into a view of `u` that overlaps the views it
# reads, so Base.unalias copies each source first (`unaliascopy`): 4 × 254² Float64 per
# step, ~500 MB a call. Writing into a separate buffer removes them (`jacobi_buffered!`).
#
# Expected findings (gc plugin): an `allocation_hotspot` at `jacobi!` whose hint speaks of
# the aliasing copies (a separate output buffer), not `@views` (they are views already);
# the region's GC time counted once: the allocation finding carries it, and no second
# finding (`gc_pressure`) on the same region charges it again. `jacobi_buffered!` is not
# flagged.
#
#   JAGER_PLUGINS=gc JAGER_OUTPUT=ac.jgr julia --project=bindings/julia examples/julia/alias_copies.jl
using Jager

function jacobi!(u, steps)
    n = size(u, 1)
    c = view(u, 2:n-1, 2:n-1)
    for _ in 1:steps
        c .= 0.25 .* (view(u, 1:n-2, 2:n-1) .+ view(u, 3:n, 2:n-1) .+ view(u, 2:n-1, 1:n-2) .+ view(u, 2:n-1, 3:n))
    end
    return u
end

function jacobi_buffered!(u, tmp, steps)
    n = size(u, 1)
    c = view(u, 2:n-1, 2:n-1)
    for _ in 1:steps
        tmp .= 0.25 .* (view(u, 1:n-2, 2:n-1) .+ view(u, 3:n, 2:n-1) .+ view(u, 2:n-1, 1:n-2) .+ view(u, 2:n-1, 3:n))
        c .= tmp
    end
    return u
end

function main()
    u = zeros(256, 256)
    u[1, :] .= 1
    tmp = zeros(254, 254)
    for _ in 1:3
        @jäger jacobi!(u, 250)
        @jäger jacobi_buffered!(u, tmp, 250)
    end
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
