# census.jl — counting the MethodInstances (specializations) of methods.
#
# Julia 1.5 keeps `m.specializations` as a SimpleVector with unset slots (a plain loop
# throws UndefRefError; notes §5); 1.10+ offers `Base.specializations(m)`. A census costs
# microseconds per method, so it runs at every drain for the methods seen at @jäger sites
# and the functions registered with `Jager.watch`.

const HAS_BASE_SPECIALIZATIONS = isdefined(Base, :specializations)

"The number of specializations (MethodInstances, compiled or only inferred) of `m`."
function count_specializations(m::Method)
    if HAS_BASE_SPECIALIZATIONS
        n = 0
        for mi in Base.specializations(m)
            mi isa Core.MethodInstance && (n += 1)
        end
        return n
    end
    isdefined(m, :specializations) || return 0
    s = m.specializations
    if s isa Core.SimpleVector
        return count(i -> isassigned(s, i) && s[i] isa Core.MethodInstance, 1:length(s))
    elseif s isa Core.MethodInstance
        return 1
    elseif s !== nothing && isdefined(Base, :visit)
        n = 0
        Base.visit(s) do x
            x isa Core.MethodInstance && (n += 1)
        end
        return n
    end
    return 0
end

"The methods of `f`: a MethodList's contents, empty for things that have none."
function methods_of(@nospecialize(f))
    try
        return collect(Method, methods(f))
    catch
        return Method[]   # `methods` throws on some Types (notes §5)
    end
end

"""
    specializations(f) -> Int

The number of specializations Julia holds for all methods of `f`: one per concrete
signature it compiled or inferred. A function that keeps growing it (a `Val{N}` loop,
a type parameter taken from data) recompiles at run time.
"""
function specializations(@nospecialize(f))
    n = 0
    for m in methods_of(f)
        n += count_specializations(m)
    end
    return n
end
