# attrs.jl — Julia values as jager_attr arrays (for span attributes and log records).
#
# Bool → bool, integers that fit Int64 → i64, AbstractFloat → f64, strings and symbols →
# str; anything else is turned into a string with `string(value)`. The core copies every
# attribute during the call, so the arrays only have to live while `f` runs.

# A NUL-terminated copy of `s` that C may read up to its first NUL: embedded NULs are
# written as "\0" so that nothing after them is lost.
cstr(s::AbstractString) = (t = String(s); occursin('\0', t) ? replace(t, '\0' => "\\0") : t)
cstr(s) = cstr(string(s))

"""
    Jager.InternedString(text)

A string attribute value stored once in the recording's string table
(`jager_string_intern`): events carry its 4-byte id instead of a copy of the text. For
values that repeat over many events (the binding's `code.method`).
"""
struct InternedString
    id::UInt32
end
InternedString(s::AbstractString) = InternedString(ccall((:jager_string_intern, LIB), UInt32, (Cstring,), cstr(s)))

# `key` must stay valid during the C call: a String kept alive by the caller, or the name
# of a Symbol (symbols are never freed).
function attr_of(key::Ptr{UInt8}, @nospecialize(v), keep::Vector{String})
    if v isa Int64 # the common cases first, without dynamic calls
        return JagerAttr(key, ATTR_I64, 0, reinterpret(UInt64, v))
    elseif v isa Float64
        return JagerAttr(key, ATTR_F64, 0, reinterpret(UInt64, v))
    elseif v isa String
        s = cstr(v)
        push!(keep, s)
        return JagerAttr(key, ATTR_STR, 0, UInt64(UInt(pointer(s))))
    elseif v isa Bool
        return JagerAttr(key, ATTR_BOOL, 0, UInt64(v))
    elseif v isa InternedString
        return JagerAttr(key, ATTR_STR_ID, 0, UInt64(v.id))
    elseif v isa Integer && typemin(Int64) <= v <= typemax(Int64)
        return JagerAttr(key, ATTR_I64, 0, reinterpret(UInt64, Int64(v)))
    elseif v isa AbstractFloat
        return JagerAttr(key, ATTR_F64, 0, reinterpret(UInt64, Float64(v)))
    else
        s = v isa AbstractString ? cstr(v) : v isa Symbol ? cstr(String(v)) : cstr(string(v))
        push!(keep, s)
        return JagerAttr(key, ATTR_STR, 0, UInt64(UInt(pointer(s))))
    end
end

"The NUL-terminated name of a symbol, valid for the process's lifetime."
symbol_cstr(s::Symbol) = Ptr{UInt8}(Base.unsafe_convert(Ptr{UInt8}, s))

"""
    with_attrs(f, pairs)

Call `f(ptr::Ptr{JagerAttr}, n::Int)` with `pairs` (key => value) encoded as jager_attr;
the pointers stay valid until `f` returns.
"""
function with_attrs(f, pairs)
    keep = String[]
    attrs = Vector{JagerAttr}(undef, length(pairs))
    for (i, (k, v)) in enumerate(pairs)
        key = cstr(k)
        push!(keep, key)
        attrs[i] = attr_of(pointer(key), v, keep)
    end
    GC.@preserve keep attrs begin
        return f(pointer(attrs), length(attrs))
    end
end
