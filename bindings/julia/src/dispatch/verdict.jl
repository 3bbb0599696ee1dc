# verdict.jl — a type-stability verdict for one signature, by inference (code_typed).
#
# The rule is the one verified on Julia 1.5.3 (shared/docs/julia-1.5-notes.md §4), applied
# to the optimized, inlined IR of the signature's method:
#   runtime dispatch  a `:call` whose callee is not a `Core.Builtin` (or is `_apply` /
#                     `_apply_iterate`, which dispatch on what they splat);
#   bad union         a statement typed as a union of ≥ 2 non-singleton types — the
#                     iteration protocol's `Union{Nothing, Tuple{…}}` has one, so it passes;
#   Core.Box          a captured variable that inference had to box;
#   abstract return   a non-concrete inferred return type: a weak signal, reported only
#                     alongside one of the others.
# A signature clean at its own level may call (`:invoke`) a method that is not: callees
# are walked breadth-first a few levels deep, skipping calls typed `Union{}` (error paths),
# so the reason names the statement where the dynamic call sits and the chain how it is
# reached. Inference runs again on every verdict (≈ 1 ms per method): never on a hot path.
# The walk stops at the binding (own.jl): statements inlined from Jager's code (the span
# machinery of a @jäger site inside the method), dynamic calls of Jager's functions and
# Jager's methods as callees are not the program's and are never reported.

"Bits of a verdict's flags (the `flags` field of `dispatch.instability`)."
const FLAG_RUNTIME_DISPATCH = UInt64(1)
const FLAG_BAD_UNION = UInt64(2)
const FLAG_BOX = UInt64(4)
const FLAG_ABSTRACT_RETURN = UInt64(8)
const STRONG_FLAGS = FLAG_RUNTIME_DISPATCH | FLAG_BAD_UNION | FLAG_BOX

"""
    Verdict

The type-stability verdict of one signature: `flags` (the `FLAG_*` bits, 0 when stable),
`reason` (the first offending statement, e.g. "runtime dispatch: `+(::Float64, ::Real)` at
pic.jl:42"), `chain` (the methods from the signature down to that statement, "f → g"),
`rettype` (the inferred return type).
"""
struct Verdict
    flags::UInt64
    reason::String
    chain::String
    rettype::Any
    # @nospecialize: a constructor specialized per return type would compile per verdict.
    Verdict(flags::UInt64, reason::String, chain::String, @nospecialize(rettype)) = new(flags, reason, chain, rettype)
end

"True when the verdict has a strong signal (runtime dispatch, bad union, box)."
unstable(v::Verdict) = (v.flags & STRONG_FLAGS) != 0

const MAX_DEPTH = 3      # callee levels walked below the signature
const MAX_METHODS = 24   # methods inferred per verdict at most

function is_dynamic_call(ci, @nospecialize(st))
    st isa Expr && st.head === :call && !isempty(st.args) || return false
    f = callee_value(ci, st.args[1])
    return !(f isa Core.Builtin) || f === Core._apply || (isdefined(Core, :_apply_iterate) && f === Core._apply_iterate)
end

function is_bad_union(@nospecialize(t))
    t = widen(t)
    t isa Union || return false
    return count(u -> !Base.issingletontype(u), Base.uniontypes(t)) >= 2
end

is_box(@nospecialize(t)) = (w = widen(t); w === Core.Box)

function callee_name(ci, @nospecialize(f))
    v = callee_value(ci, f)
    v isa GlobalRef && return string(v.mod, ".", v.name)
    v isa Function && return string(nameof(v))
    v isa Type && return string(v)
    f isa Core.SSAValue && return string("(::", arg_type(ci, f), ")")
    return string(v)
end

# Non-constant globals among a call's arguments: the usual cause of a dynamic call.
function global_args(@nospecialize(st))
    names = String[]
    for a in st.args
        a isa GlobalRef || continue
        resolve(a) isa GlobalRef && push!(names, string(a.name))
    end
    return names
end

# The source file of statement i at its innermost inlining level (the code it came from),
# or nothing when unknown.
function stmt_innermost_file(ci, i::Int)
    try
        if hasfield(typeof(ci), :codelocs) && hasfield(typeof(ci), :linetable)
            loc = ci.codelocs[i]
            lt = ci.linetable
            loc > 0 && loc <= length(lt) && return lt[loc].file
        elseif hasfield(typeof(ci), :debuginfo) && isdefined(Base, :IRShow)
            stack = Base.IRShow.buildLineInfoNode(ci.debuginfo, nothing, i)
            isempty(stack) || return stack[1].file
        end
    catch
    end
    return nothing
end

# A statement of the binding's own code: inlined from one of its files, or a call of one
# of its functions (`_fail`, `signature_slow!`, … spliced into a @jäger site).
function own_stmt(ci, i::Int, @nospecialize(st))
    file = stmt_innermost_file(ci, i)
    file !== nothing && Jager.own_file(file) && return true
    st isa Expr && st.head in (:call, :invoke) && length(st.args) >= 1 || return false
    f = st.head === :invoke ? st.args[1] : callee_value(ci, st.args[1])
    isdefined(Core, :CodeInstance) && f isa Core.CodeInstance && (f = f.def)
    return Jager.own_callee(f)
end

# "file.jl:42" of statement i, taken at the outermost inlining level (the method's own
# source line, not the line inside an inlined Base function). "" when unknown.
function stmt_location(ci, i::Int)
    try
        if hasfield(typeof(ci), :codelocs) && hasfield(typeof(ci), :linetable)
            loc = ci.codelocs[i]
            lt = ci.linetable
            seen = 0
            while loc > 0 && loc <= length(lt) && seen < 64
                node = lt[loc]
                up = node.inlined_at
                if up == 0 || !(up isa Integer)
                    return string(basename(string(node.file)), ":", node.line)
                end
                loc = up
                seen += 1
            end
        elseif hasfield(typeof(ci), :debuginfo) && isdefined(Base, :IRShow)
            stack = Base.IRShow.buildLineInfoNode(ci.debuginfo, nothing, i)
            isempty(stack) || return string(basename(string(stack[end].file)), ":", stack[end].line)
        end
    catch
    end
    return ""
end

at(loc::String) = isempty(loc) ? "" : " at " * loc

# The first strong finding in one method's IR: (flags of all findings, reason of the most
# telling one). Runtime dispatch explains more than a union, and a box more than both.
function scan(ci, @nospecialize(rettype))
    flags = UInt64(0)
    dyn = ""
    uni = ""
    box = ""
    code = ci.code
    types = ci.ssavaluetypes
    for i in 1:length(code)
        st = code[i]
        own_stmt(ci, i, st) && continue
        t = types isa AbstractVector && i <= length(types) ? types[i] : Any
        if is_dynamic_call(ci, st)
            flags |= FLAG_RUNTIME_DISPATCH
            if isempty(dyn)
                args = join(["::" * string(arg_type(ci, a)) for a in st.args[2:end]], ", ")
                globals = global_args(st)
                note = isempty(globals) ? "" : string(" (non-constant global ", join(globals, ", "), ")")
                dyn = string("runtime dispatch: `", callee_name(ci, st.args[1]), "(", args, ")`", note,
                             at(stmt_location(ci, i)))
            end
        end
        if is_box(t)
            flags |= FLAG_BOX
            isempty(box) && (box = string("captured variable boxed (Core.Box)", at(stmt_location(ci, i))))
        elseif is_bad_union(t)
            flags |= FLAG_BAD_UNION
            isempty(uni) && (uni = string("non-concrete value `%", i, "::", widen(t), "`", at(stmt_location(ci, i))))
        end
    end
    rt = widen(rettype)
    if !(isconcretetype(rt) || rt === Union{} || Base.issingletontype(rt) || rt isa DataType && rt <: Type)
        flags |= FLAG_ABSTRACT_RETURN
    end
    reason = !isempty(box) ? box : !isempty(dyn) ? dyn : uni
    return flags, reason
end

# Display name of a method instance for chains: "deposit!(::Vector{Float64}, …)".
function mi_label(@nospecialize(sig))
    sig isa DataType && sig <: Tuple || return string(sig)
    ps = sig.parameters
    isempty(ps) && return string(sig)
    ft = ps[1]
    fname = ft isa DataType && isdefined(ft, :instance) ? string(nameof(ft.instance)) : string(ft)
    return string(fname, "(", join(["::" * string(p) for p in ps[2:end]], ", "), ")")
end

# The callees an IR invokes statically, with their location, skipping error paths.
function invoked(ci)
    out = Tuple{Any,String}[]
    for i in 1:length(ci.code)
        st = ci.code[i]
        st isa Expr && st.head === :invoke && !isempty(st.args) || continue
        t = ci.ssavaluetypes isa AbstractVector ? ci.ssavaluetypes[i] : Any
        widen(t) === Union{} && continue   # throws: an error path, not the kernel
        mi = st.args[1]
        if isdefined(Core, :CodeInstance) && mi isa Core.CodeInstance
            mi = mi.def
        end
        mi isa Core.MethodInstance || continue
        Jager.own_callee(mi) && continue   # the binding's own methods: not the program's
        push!(out, (mi.specTypes, stmt_location(ci, i)))
    end
    return out
end

"""
    verdict(sig::Type) -> Union{Verdict,Nothing}

Infer the concrete signature `sig` (`Tuple{typeof(f), ArgTypes...}`) and apply the
stability rule to it and to the methods it invokes (≤ $(MAX_DEPTH) levels). `nothing` when
the signature has no single matching method or inference fails. Never throws.
"""
function verdict(@nospecialize(sig))
    try
        return verdict_unsafe(sig)
    catch
        return nothing
    end
end

function verdict_unsafe(@nospecialize(sig))
    root = typed_ir(sig)
    root === nothing && return nothing
    ci, rettype = root
    flags, reason = scan(ci, rettype)
    rootlabel = mi_label(sig)
    if (flags & STRONG_FLAGS) != 0
        return Verdict(flags, reason, rootlabel, rettype)
    end
    # Clean at its own level: look for the dynamic call in what it invokes.
    # An IdDict, not a Set: Set's push!/in would specialize on each signature's Type{…}
    # and compile anew for every signature (the sensor would feed the explosion it watches).
    visited = IdDict{Any,Nothing}()
    visited[sig] = nothing
    frontier = [(c, string(rootlabel, " → ", mi_label(c), at(loc))) for (c, loc) in invoked(ci)]
    budget = MAX_METHODS
    for depth in 1:MAX_DEPTH
        next = Tuple{Any,String}[]
        for (callee, chain) in frontier
            haskey(visited, callee) && continue
            visited[callee] = nothing
            (budget -= 1) < 0 && break
            r = typed_ir(callee)
            r === nothing && continue
            cflags, creason = scan(r[1], r[2])
            if (cflags & STRONG_FLAGS) != 0
                return Verdict(flags | (cflags & STRONG_FLAGS), creason, chain, rettype)
            end
            depth < MAX_DEPTH || continue
            for (c, loc) in invoked(r[1])
                push!(next, (c, string(chain, " → ", mi_label(c), at(loc))))
            end
        end
        frontier = next
        isempty(frontier) && break
    end
    return Verdict(flags, "", rootlabel, rettype)
end
