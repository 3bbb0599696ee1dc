# valueattrs.jl — Julia values as span attributes: `Jager.attributes(x)` and the
# `attrs = (...)` option of `@jäger`.
#
# A value describes itself by a few scalars (its element type, size, bounds), never by
# its contents: describing a 10⁶-entry sparse matrix reads four fields.

"Characters of a string attribute kept (a bounded prefix; the core cuts at 1 KiB anyway)."
const ATTR_STRING_PREFIX = 64

dims_text(d::Tuple) = join(d, "×")
dims_text(d::Tuple{Integer}) = string(d[1])
dims_text(d::Tuple{Integer,Integer}) = string(d[1], "×", d[2])

# Type names, made once per type (`string(T)` goes through `show`: about 1 µs).
const TYPE_TEXT = IdDict{Any,String}()
const TYPE_TEXT_LOCK = Threads.SpinLock()
function type_text(@nospecialize(T))
    lock(TYPE_TEXT_LOCK)
    try
        s = get(TYPE_TEXT, T, nothing)
        s === nothing || return s::String
    finally
        unlock(TYPE_TEXT_LOCK)
    end
    s = string(T)
    lock(TYPE_TEXT_LOCK)
    try
        TYPE_TEXT[T] = s
    finally
        unlock(TYPE_TEXT_LOCK)
    end
    return s
end

"""
    Jager.attributes(x) -> tuple (or vector) of `suffix => value` pairs

How a value is described when given as a span attribute (`@jäger f(A) attrs = (:A => A,)`
records `A.eltype`, `A.size`, …). Values are scalars (integers, floats, Bool, strings).
Extend it for your own types — without materialising anything large:

```julia
Jager.attributes(g::Grid) = ("nx" => g.nx, "ny" => g.ny, "spacing" => g.h)
```

Defined here: arrays (`eltype`, `size`, `length`), sparse matrices (`SparseMatrixCSC`:
`eltype`, `size`, `nnz`, `density`), ranges (`first`, `last`, `step`, `length`), strings (a
prefix of $(ATTR_STRING_PREFIX) characters and `length`), numbers, symbols and Bool
(themselves), tuples of integers (such as `size(u)`: `"100×100"`); anything else its type.
"""
attributes(@nospecialize(x)) = ("type" => type_text(typeof(x)),)
attributes(x::Union{Integer,AbstractFloat}) = ("" => x,)
attributes(x::Symbol) = ("" => String(x),)
attributes(x::AbstractString) = ("" => (length(x) <= ATTR_STRING_PREFIX ? String(x) : first(x, ATTR_STRING_PREFIX) * "…"),
                                 "length" => length(x))
attributes(x::Tuple{Vararg{Integer}}) = ("" => dims_text(x),)
attributes(x::AbstractRange) = ("first" => first(x), "last" => last(x), "step" => step(x), "length" => length(x))
function attributes(x::AbstractArray)
    T = typeof(x)
    if T.name.name === :SparseMatrixCSC && hasfield(T, :colptr)   # SparseArrays, without depending on it
        m, n = size(x)
        nz = Int(getfield(x, :colptr)[n+1]) - 1
        return ("eltype" => type_text(eltype(x)), "size" => dims_text((m, n)), "nnz" => nz,
                "density" => m * n == 0 ? 0.0 : nz / (m * n))
    end
    return ("eltype" => type_text(eltype(x)), "size" => dims_text(size(x)), "length" => length(x))
end

# `key => value` → the attribute pairs it stands for: "key" for a value describing itself
# as a scalar (suffix ""), "key.suffix" otherwise.
function expand_attrs(pairs)
    out = Pair{String,Any}[]
    for p in pairs
        k = string(p.first)
        for (s, v) in attributes(p.second)
            push!(out, (isempty(s) ? k : string(k, ".", s)) => v)
        end
    end
    return out
end

"""
Attach `pairs` (`key => value`, values described by `Jager.attributes`) to the open span
`sp`. Never throws: a failing `attributes` method is reported once per span site and skipped.
"""
@noinline function _set_attrs(sp::JagerSpan, pairs)
    sp.site == 0 && return nothing
    own_pause(+1)
    try
        attrs = expand_attrs(pairs)
        with_attrs(attrs) do a, n
            ccall((:jager_span_set_attrs, LIB), Cvoid, (JagerSpan, Ptr{JagerAttr}, Csize_t), sp, a, n)
        end
    catch e
        report_error_latest("Jager: describing span attributes failed", nothing, e, catch_backtrace())
    finally
        own_pause(-1)
    end
    return nothing
end
