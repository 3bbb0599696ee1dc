# typed_ir.jl — inferred, optimized IR of a concrete signature and the small helpers that
# read it: shared by the nothrow verdict of @jäger call sites (nothrow.jl) and the dispatch
# sensor's stability verdict (dispatch/verdict.jl). Capability checks cover the API
# differences: 1.5 infers through Core.Compiler.typeinf_code, 1.6 on has
# Base.code_typed_by_type; 1.5 returns method matches as SimpleVectors, later versions as
# MethodMatch objects.

const HAS_CODE_TYPED_BY_TYPE = isdefined(Base, :code_typed_by_type)
const HAS_COMPILER_PARAMS = isdefined(Core.Compiler, :Params)
"Inference's constant lattice element (Core.Const from 1.6 on, Core.Compiler.Const before)."
const CONST_TYPE = isdefined(Core, :Const) ? Core.Const : Core.Compiler.Const

# The matching methods of a signature as (method, specTypes, sparams) — 1.5 returns
# SimpleVectors, later versions MethodMatch objects.
function method_matches(@nospecialize(sig), world::UInt = Base.get_world_counter())
    out = Tuple{Method,Any,Core.SimpleVector}[]
    ms = Base._methods_by_ftype(sig, -1, world)
    ms isa AbstractVector || return out
    for x in ms
        if x isa Core.SimpleVector
            push!(out, (x[3]::Method, x[1], x[2]::Core.SimpleVector))
        else
            push!(out, (x.method::Method, x.spec_types, x.sparams::Core.SimpleVector))
        end
    end
    return out
end

# Optimized, typed IR of the one method a concrete signature calls in `world` (the
# latest by default), with line info: `CodeInfo => rettype`, or `nothing` (no single
# match, inference failed).
function typed_ir(@nospecialize(sig), world::UInt = Base.get_world_counter())
    if HAS_CODE_TYPED_BY_TYPE
        r = Base.code_typed_by_type(sig; optimize = true, debuginfo = :source, world = world)
        return length(r) == 1 ? r[1] : nothing
    end
    HAS_COMPILER_PARAMS || return nothing
    ms = method_matches(sig, world)
    length(ms) == 1 || return nothing
    m, types, sparams = ms[1]
    code, ty = Core.Compiler.typeinf_code(m, types, sparams, true, Core.Compiler.Params(world))
    code === nothing && return nothing
    return code => ty
end

widen(@nospecialize(t)) = Core.Compiler.widenconst(t)

# A callee reference resolved to its value where that is a constant (notes §4's `res`).
function resolve(@nospecialize(x))
    if x isa GlobalRef
        return isdefined(x.mod, x.name) && isconst(x.mod, x.name) ? getfield(x.mod, x.name) : x
    elseif x isa QuoteNode
        return x.value
    end
    return x
end

# The value a callee position holds when inference knows it: a constant global, a quoted
# value, or an SSA value inferred as a constant or a singleton (`typeof(Core.sizeof)`).
function callee_value(ci, @nospecialize(f))
    v = resolve(f)
    if v isa Core.SSAValue && ci.ssavaluetypes isa AbstractVector && v.id <= length(ci.ssavaluetypes)
        t = ci.ssavaluetypes[v.id]
        t isa CONST_TYPE && return t.val
        w = widen(t)
        w isa DataType && isdefined(w, :instance) && return w.instance
    end
    return v
end

# The type of an IR argument, for messages and checks.
function arg_type(ci, @nospecialize(a))
    if a isa Core.SSAValue
        return widen(ci.ssavaluetypes[a.id])
    elseif a isa Core.SlotNumber
        return widen(ci.slottypes[a.id])
    elseif isdefined(Core, :Argument) && a isa Core.Argument
        return widen(ci.slottypes[a.n])
    elseif a isa GlobalRef
        v = resolve(a)
        return v isa GlobalRef ? Any : Core.Typeof(v)
    elseif a isa QuoteNode
        return Core.Typeof(a.value)
    end
    return Core.Typeof(a)
end

