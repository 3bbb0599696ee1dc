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
# Error paths are skipped, as JET does: statements in blocks that end in a throw (a
# statement typed `Union{}`, an `unreachable`), or that lead only to such blocks — the
# message built behind a bounds or shape check is dynamic and harmless (error_paths).
# A signature clean at its own level may call (`:invoke`) a method that is not: callees
# are walked breadth-first a few levels deep, skipping error paths,
# so the reason names the statement where the dynamic call sits and the chain how it is
# reached. Methods of Base, Core and the standard library are not the program's: a
# dynamic call inside one is reported only when the program's own call is the cause —
# it passes a type with abstract parameters or fields (`Vector{Real}`, a struct with a
# `::Real` field) — see caused_by_program. Inference runs again on every verdict (≈ 1 ms per method): never on a hot path.
# The walk stops at the binding (own.jl): statements inlined from Jager's code (the span
# machinery of a @jäger site inside the method), dynamic calls of Jager's functions and
# Jager's methods as callees are not the program's and are never reported.

"Bits of a verdict's flags (the `flags` field of `dispatch.instability`)."
const FLAG_RUNTIME_DISPATCH = UInt64(1)
const FLAG_BAD_UNION = UInt64(2)
const FLAG_BOX = UInt64(4)
const FLAG_ABSTRACT_RETURN = UInt64(8)
"The reported statement sits in the signature's own method outside every loop: it runs once per call."
const FLAG_ONCE_PER_CALL = UInt64(16)
"""
Bits 32–63 of a verdict's flags: how many times per call of the signature its offending
statements run, when the IR says (1 each outside loops; a loop with literal bounds,
`for k in 1:1000`, its trip count); 0 when unknown (a loop over `eachindex(u)`). The hunt
prices the problem at that count × calls × a measured dynamic call (docs/hunt.md).
"""
const RUNS_SHIFT = 32
runs_per_call(flags::UInt64) = flags >> RUNS_SHIFT
const STRONG_FLAGS = FLAG_RUNTIME_DISPATCH | FLAG_BAD_UNION | FLAG_BOX
"""
The flags of a real dynamic call (JET's runtime-dispatch analysis): a `:call` the optimizer
did not resolve, or a box. A union alone (flag 2) is split by the compiler into typed
branches of static calls: the hunt reports it as a note with no cost.
"""
const DISPATCH_FLAGS = FLAG_RUNTIME_DISPATCH | FLAG_BOX

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

# Base's standard streams are non-constant globals (`stdout` can be redirected), so every
# `print(stdout, …)`/`@printf` dispatches on them at runtime; the call then does I/O, which
# costs far more than its dispatch, and nothing in the program is to be fixed.
const IO_GLOBALS = (:stdout, :stderr, :stdin)
function io_global(ci, @nospecialize(a))
    if a isa Core.SSAValue && a.id <= length(ci.code)
        a = ci.code[a.id]
    end
    a isa GlobalRef && a.name in IO_GLOBALS || return false
    a.mod === Base && return true
    try
        return Base.binding_module(a.mod, a.name) === Base   # `Printf.stdout` is Base's
    catch
        return false
    end
end
is_io_call(ci, @nospecialize(st)) = any(a -> io_global(ci, a), st.args)

# Non-constant globals among a call's arguments: the usual cause of a dynamic call. The
# optimizer often reads the global in a statement of its own (`%74 = Main.DAMP`, then
# `%75 = %74 * %64`), so an SSA argument is followed to the statement that defines it.
function global_args(ci, @nospecialize(st))
    names = String[]
    for a in st.args
        if a isa Core.SSAValue && 1 <= a.id <= length(ci.code)
            a = ci.code[a.id]
        end
        a isa GlobalRef || continue
        resolve(a) isa GlobalRef && !(string(a.name) in names) && push!(names, string(a.name))
    end
    return names
end

# Where the non-concrete type of an IR value comes from: the result of a dynamic call
# (TRACE_DYN), or something else (TRACE_ORIGIN) — a non-constant global, an abstract field
# or argument, a call inferred to return an abstract type (`Val(n)`), a φ of differently
# typed values; 0 for a concrete value. Followed through φ, π and the operands of the
# statements that are not dynamic calls.
const TRACE_ORIGIN = 0x01
const TRACE_DYN = 0x02
const TRACE_CYCLE = 0x04   # reached round a loop back to a value still being traced: no origin of its own

function value_trace(ci, @nospecialize(a), dyn::BitVector, memo::Dict{Int,UInt8})
    if a isa GlobalRef
        return resolve(a) isa GlobalRef ? TRACE_ORIGIN : 0x00
    elseif a isa Core.SlotNumber || (isdefined(Core, :Argument) && a isa Core.Argument)
        return isconcretetype(arg_type(ci, a)) ? 0x00 : TRACE_ORIGIN
    elseif !(a isa Core.SSAValue)
        return 0x00
    end
    id = a.id
    1 <= id <= length(ci.code) || return 0x00
    r = get(memo, id, nothing)
    r === nothing || return r
    types = ci.ssavaluetypes
    t = types isa AbstractVector && id <= length(types) ? widen(types[id]) : Any
    (isconcretetype(t) || t === Union{}) && return (memo[id] = 0x00)
    dyn[id] && return (memo[id] = TRACE_DYN)
    memo[id] = TRACE_CYCLE   # a φ cycle through itself adds no origin
    st = ci.code[id]
    r = 0x00
    if st isa Core.PhiNode
        for k in 1:length(st.values)
            isassigned(st.values, k) && (r |= value_trace(ci, st.values[k], dyn, memo))
        end
    elseif st isa Core.PiNode
        r = value_trace(ci, st.val, dyn, memo)
    elseif st isa Expr
        for x in st.args
            r |= value_trace(ci, x, dyn, memo)
        end
    else
        r = value_trace(ci, st, dyn, memo)
    end
    r == 0x00 && (r = TRACE_ORIGIN)
    return (memo[id] = r)
end

"""
    dispatch_source(ci, spots) -> Int

Of the dynamic calls at statements `spots` (in code order), the first that is a *source*:
one of its operands is non-concrete for a reason other than another dynamic call's result
(`pick(Val(k % 200), x)` in a loop, not the `<(::Float64, ::Any)` earlier in the loop body
that only sees `pick`'s result carried round the loop); the first call when none is.
"""
function dispatch_source(ci, spots::Vector{Int})
    isempty(spots) && return 0
    dyn = falses(length(ci.code))
    for i in spots
        dyn[i] = true
    end
    memo = Dict{Int,UInt8}()
    for i in spots
        st = ci.code[i]
        any(a -> (value_trace(ci, a, dyn, memo) & TRACE_ORIGIN) != 0, st.args) && return i
    end
    return spots[1]
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
            chain = Any[]          # innermost first
            while loc > 0 && loc <= length(lt) && length(chain) < 64
                node = lt[loc]
                push!(chain, node)
                up = node.inlined_at
                (up == 0 || !(up isa Integer)) && break
                loc = up
            end
            isempty(chain) && return ""
            # The method's own level, then down through the macro expansions of its body
            # (`@simd for` puts the loop body two levels in: the header's line is the
            # outermost, the statement's line is the expansion in the method's own file).
            k = length(chain)
            best = chain[k]
            while k > 1 && chain[k-1].method === Symbol("macro expansion")
                k -= 1
                chain[k].file === best.file && chain[k].line > 0 && (best = chain[k])
            end
            return string(basename(string(best.file)), ":", best.line)
        elseif hasfield(typeof(ci), :debuginfo) && isdefined(Base, :IRShow)
            stack = Base.IRShow.buildLineInfoNode(ci.debuginfo, nothing, i)
            isempty(stack) || return string(basename(string(stack[end].file)), ":", stack[end].line)
        end
    catch
    end
    return ""
end

at(loc::String) = isempty(loc) ? "" : " at " * loc

# A statement that never returns: typed `Union{}` (a throw, a call that always throws) or
# an `unreachable` marker.
function throws_stmt(ci, i::Int, @nospecialize(st))
    st isa Expr && st.head === :unreachable && return true
    types = ci.ssavaluetypes
    t = types isa AbstractVector && i <= length(types) ? types[i] : Any
    return t === Union{} && !(st isa Core.GotoNode) && !(st isa Expr && st.head === :gotoifnot)
end

"""
    error_paths(ci) -> BitVector

True for the statements of `ci` that run only on the way to a throw: the basic blocks
that end in a throw, and the blocks whose every successor is one (a message built in a
loop before the throw). Never throws; all false when the blocks cannot be computed.
"""
function error_paths(ci)
    code = ci.code
    out = falses(length(code))
    blocks = try
        Core.Compiler.compute_basic_blocks(code).blocks
    catch
        return out
    end
    nb = length(blocks)
    err = falses(nb)
    for (b, blk) in enumerate(blocks)
        for i in blk.stmts
            throws_stmt(ci, i, code[i]) && (err[b] = true; break)
        end
    end
    changed = true
    while changed
        changed = false
        for (b, blk) in enumerate(blocks)
            err[b] && continue
            succs = blk.succs
            isempty(succs) && continue
            if all(s -> 1 <= s <= nb && err[s], succs)
                err[b] = true
                changed = true
            end
        end
    end
    for (b, blk) in enumerate(blocks)
        err[b] || continue
        for i in blk.stmts
            i <= length(out) && (out[i] = true)
        end
    end
    return out
end

"""
    outside_loops(ci, stmts) -> Bool

True when every statement in `stmts` lies in a basic block that cannot reach itself (no
loop runs it more than once per call); false when the blocks cannot be computed (the
safe answer for costing).
"""
function outside_loops(ci, stmts)
    blocks = try
        Core.Compiler.compute_basic_blocks(ci.code).blocks
    catch
        return false
    end
    return !any(i -> in_loop(blocks, i), stmts)
end

function in_loop(blocks, i::Int)
    b = findfirst(blk -> i in blk.stmts, blocks)
    b === nothing && return true
    seen = falses(length(blocks))
    stack = copy(blocks[b].succs)
    while !isempty(stack)
        x = pop!(stack)
        1 <= x <= length(blocks) || continue
        x == b && return true
        seen[x] && continue
        seen[x] = true
        append!(stack, blocks[x].succs)
    end
    return false
end

"""
    statement_runs(ci, stmts) -> Int

How many times per call the statements `stmts` run together: 1 each outside loops, the
trip count of a loop with literal bounds (`for k in 1:1000`: 1000) for one inside it; 0
(unknown) when any sits in a loop whose trip count the IR does not fix — a bound known
only at run time, nested loops, a `while`. An upper bound when a loop may exit early.
"""
function statement_runs(ci, stmts)
    isempty(stmts) && return 0
    blocks = try
        Core.Compiler.compute_basic_blocks(ci.code).blocks
    catch
        return 0
    end
    total = 0
    for i in stmts
        n = loop_trips(ci, blocks, i)
        n > 0 || return 0
        total += n
    end
    return total
end

function reach(blocks, b::Int, next)
    seen = falses(length(blocks))
    stack = copy(next(blocks[b]))
    while !isempty(stack)
        x = pop!(stack)
        1 <= x <= length(blocks) && !seen[x] || continue
        seen[x] = true
        append!(stack, next(blocks[x]))
    end
    return seen
end

# The trip count of the one loop holding statement i: 1 outside loops, 0 when unknown.
function loop_trips(ci, blocks, i::Int)
    b = findfirst(blk -> i in blk.stmts, blocks)
    b === nothing && return 0
    fwd = reach(blocks, b, blk -> blk.succs)
    fwd[b] || return 1
    bwd = reach(blocks, b, blk -> blk.preds)
    scc = fwd .& bwd
    # One back edge (IR blocks are in source order: a loop jumps back): one loop, no nest.
    backs = [(u, v) for u in findall(scc) for v in blocks[u].succs if 1 <= v <= length(scc) && scc[v] && v <= u]
    length(backs) == 1 || return 0
    header = backs[1][2]
    code = ci.code
    found = 0
    for x in findall(scc), k in blocks[x].stmts
        st = code[k]
        st isa Expr && st.head === :call && length(st.args) == 3 || continue
        callee_value(ci, st.args[1]) === (===) || continue
        n = counted_loop(ci, blocks, scc, header, st.args[2], st.args[3])
        n < 0 && continue            # not the induction variable's exit test
        found == 0 || return 0       # two exit tests: not a plain counted loop
        found = n
    end
    return found
end

# `(%phi === C)` where %phi is the header's induction variable (literal start, steps of 1
# by add_int) and C a literal Int: the trip count; -1 when it is not such a test, 0 when
# the bound is not literal.
function counted_loop(ci, blocks, scc, header::Int, @nospecialize(a), @nospecialize(c))
    a isa Core.SSAValue && a.id in blocks[header].stmts || return -1
    phi = ci.code[a.id]
    phi isa Core.PhiNode || return -1
    lo = nothing
    step_ok = false
    for (e, v) in zip(phi.edges, phi.values)
        # A CodeInfo's φ edges are statement numbers (the predecessor's last statement).
        eb = findfirst(blk -> e in blk.stmts, blocks)
        eb === nothing && return -1
        if !scc[eb]
            v isa Int || return 0
            lo = v
        else
            step_ok = steps_by_one(ci, v, a)
        end
    end
    (lo === nothing || !step_ok) && return -1
    c isa Int || return 0
    return c >= lo ? c - lo + 1 : 0
end

# v is `add_int(phi, 1)`, possibly through single-valued φ nodes.
function steps_by_one(ci, @nospecialize(v), phi::Core.SSAValue)
    for _ in 1:4
        v isa Core.SSAValue || return false
        st = ci.code[v.id]
        if st isa Core.PhiNode
            length(st.values) == 1 && isassigned(st.values, 1) || return false
            v = st.values[1]
            continue
        end
        return st isa Expr && st.head === :call && length(st.args) == 3 &&
               callee_value(ci, st.args[1]) === Base.add_int && st.args[2] == phi && st.args[3] === 1
    end
    return false
end

# The first strong finding in one method's IR: (flags of all findings, reason of the most
# telling one). Runtime dispatch explains more than a union, and a box more than both.
function scan(ci, @nospecialize(rettype))
    flags = UInt64(0)
    dyn = ""
    uni = ""
    box = ""
    spots = Int[]
    code = ci.code
    types = ci.ssavaluetypes
    errs = error_paths(ci)
    dyncalls = Int[]
    for i in 1:length(code)
        st = code[i]
        errs[i] && continue
        own_stmt(ci, i, st) && continue
        t = types isa AbstractVector && i <= length(types) ? types[i] : Any
        if is_dynamic_call(ci, st) && !is_io_call(ci, st)
            flags |= FLAG_RUNTIME_DISPATCH
            push!(spots, i)
            push!(dyncalls, i)
        end
        if is_box(t)
            flags |= FLAG_BOX
            isempty(box) && (box = string("captured variable boxed (Core.Box)", at(stmt_location(ci, i))))
        elseif is_bad_union(t)
            flags |= FLAG_BAD_UNION
            isempty(uni) && (uni = string("non-concrete value `%", i, "::", widen(t), "`", at(stmt_location(ci, i))))
            push!(spots, i)
        end
    end
    # Several dynamic calls: name the source (the one whose operand is not inferred for a
    # reason of its own), not the first in code order, which may only consume its result.
    if !isempty(dyncalls)
        i = dispatch_source(ci, dyncalls)
        st = code[i]
        args = join(["::" * string(arg_type(ci, a)) for a in st.args[2:end]], ", ")
        globals = global_args(ci, st)
        note = isempty(globals) ? "" : string(" (non-constant global ", join(globals, ", "), ")")
        dyn = string("runtime dispatch: `", callee_name(ci, st.args[1]), "(", args, ")`", note,
                     at(stmt_location(ci, i)))
    end
    rt = widen(rettype)
    if !(isconcretetype(rt) || rt === Union{} || Base.issingletontype(rt) || rt isa DataType && rt <: Type)
        flags |= FLAG_ABSTRACT_RETURN
    end
    reason = !isempty(box) ? box : !isempty(dyn) ? dyn : uni
    return flags, reason, spots
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
    errs = error_paths(ci)
    for i in 1:length(ci.code)
        st = ci.code[i]
        st isa Expr && st.head === :invoke && !isempty(st.args) || continue
        errs[i] && continue                 # on the way to a throw: an error path, not the kernel
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

# Modules of the standard library: roots whose source lies under a `stdlib/` folder of
# the Julia installation (where this Julia was built or where it is installed).
const STDLIB_ROOTS = IdDict{Module,Bool}()

"True for a method of Base, Core or a standard library (not the program's)."
function library_method(m::Method)
    root = Base.moduleroot(m.module)
    (root === Base || root === Core) && return true
    return get!(STDLIB_ROOTS, root) do
        file = string(m.file)
        occursin("/share/julia/stdlib/", file) || startswith(file, Sys.STDLIB)
    end
end

# A type that carries abstract parameters or fields: `Vector{Real}`, `Dict{Symbol,Any}`,
# a struct with a `::Real` field. Passing one into a library method is the program's
# choice, and the dynamic calls it causes there are the program's problem.
function abstract_inside(@nospecialize(T), depth::Int = 0)
    T isa DataType || return !(T isa Type && isconcretetype(T))
    T <: Type && return false
    isconcretetype(T) || return true
    depth > 2 && return false
    for q in T.parameters
        q isa Type || continue
        q === Union{} && continue   # an empty container's element type (`Pairs{Union{},…}`)
        (q isa DataType && q <: Type) && continue
        isconcretetype(q) || return true
        abstract_inside(q, depth + 1) && return true
    end
    if isstructtype(T) && !(T <: Tuple) && !(T <: Array)
        for i in 1:fieldcount(T)
            ft = fieldtype(T, i)
            ft isa Type && !isconcretetype(ft) && !(ft isa DataType && ft <: Type) && return true
        end
    end
    return false
end

"""
True when the program's call `sig` into a library method hands it abstract types: a
concrete argument whose type parameters or fields are abstract. An argument abstract
at the top (`::Any`, `Vararg{Any}`) is the library's choice not to specialize
(`@nospecialize`, varargs), not the program's: had the program held an abstract value,
its own call would be the dynamic one, reported in its own code.
"""
function caused_by_program(@nospecialize(sig))
    sig isa DataType && sig <: Tuple || return true
    ps = sig.parameters
    for k in 2:length(ps)
        p = ps[k]
        p isa DataType && isconcretetype(p) || continue
        abstract_inside(p) && return true
    end
    return false
end

"True for a module of Base, Core, a standard library or the binding (not the program's)."
function library_module(mod::Module)
    Jager.own_module(mod) && return true
    root = Base.moduleroot(mod)
    (root === Base || root === Core) && return true
    return get!(STDLIB_ROOTS, root) do
        file = something(pathof(root), "")
        occursin("/share/julia/stdlib/", file) || startswith(file, Sys.STDLIB)
    end
end

"""
True when a type defined by the program appears anywhere in `T` (its parameters, union
members, the function type of a signature): a closure, a function passed to `map`, a
struct whose methods a library method may call back.
"""
function mentions_program_type(@nospecialize(T), depth::Int = 0)
    depth > 6 && return true    # too deep to tell: assume it does (walk, as before)
    T isa UnionAll && return mentions_program_type(Base.unwrap_unionall(T), depth + 1)
    T isa Union && return mentions_program_type(T.a, depth + 1) || mentions_program_type(T.b, depth + 1)
    T isa DataType || return false
    library_module(T.name.module) || return true
    for q in T.parameters
        (q isa Type || q isa TypeVar) || continue
        q isa TypeVar && (q = q.ub)
        mentions_program_type(q, depth + 1) && return true
    end
    return false
end

"""
Whether the verdict walk infers a library callee: only when the program's call into it
is the cause of its problems (caused_by_program) or it can lead back into the program's
code (a program type in its signature). A library method called with library types only
reaches library code, whose dynamic calls are not reported: inferring it again (a few
milliseconds to 0.1 s for `\` on matrices) found nothing. On bench/julia/kernels.jl the verdicts
now infer 11 methods instead of 49 (0.05 s of inference instead of 0.43 s); the verdict
phase of a process's first stop went from 0.42 s to 0.27 s, the rest being the compile of
the verdict code itself (issue 9 item 10).
"""
walk_library_callee(@nospecialize(sig)) = caused_by_program(sig) || mentions_program_type(sig)

"The method a concrete signature calls, or nothing."
function single_method(@nospecialize(sig))
    ms = method_matches(sig)
    return length(ms) == 1 ? ms[1][1] : nothing
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
    flags, reason, spots = scan(ci, rettype)
    rootlabel = mi_label(sig)
    if (flags & DISPATCH_FLAGS) != 0 || ((flags & FLAG_BAD_UNION) != 0 && !has_callees(ci))
        return judged_verdict(ci, flags, reason, spots, rootlabel, rettype)
    end
    # No dynamic call at its own level (clean, or a union the compiler splits into typed
    # branches): look for the dynamic call in what it invokes. A split union is reported
    # only when no dynamic call is found below it (the hunt makes it a note).
    split_union = (flags & FLAG_BAD_UNION) != 0 ? (flags, reason, spots, ci) : nothing
    flags &= ~FLAG_BAD_UNION
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
            # A library method's own dynamic calls are not the program's unless its call
            # hands it abstract types; its callees are still walked when they can reach
            # the program (a user's function passed to `map` is reached through Base).
            m = single_method(callee)
            lib = m !== nothing && library_method(m)
            lib && !walk_library_callee(callee) && continue
            (budget -= 1) < 0 && break
            r = typed_ir(callee)
            r === nothing && continue
            judged = !lib || caused_by_program(callee)
            cflags, creason, _ = judged ? scan(r[1], r[2]) : (UInt64(0), "", Int[])
            if (cflags & DISPATCH_FLAGS) != 0
                return Verdict(flags | (cflags & STRONG_FLAGS), creason, chain, rettype)
            elseif (cflags & FLAG_BAD_UNION) != 0 && split_union === nothing
                split_union = (flags | FLAG_BAD_UNION, creason, Int[], nothing, chain)
            end
            depth < MAX_DEPTH || continue
            for (c, loc) in invoked(r[1])
                push!(next, (c, string(chain, " → ", mi_label(c), at(loc))))
            end
        end
        frontier = next
        isempty(frontier) && break
    end
    split_union === nothing && return Verdict(flags, "", rootlabel, rettype)
    if split_union[4] === nothing     # a callee's union: its runs per call are not known here
        return Verdict(split_union[1], split_union[2], split_union[5], rettype)
    end
    return judged_verdict(split_union[4], split_union[1], split_union[2], split_union[3], rootlabel, rettype)
end

has_callees(ci) = !isempty(invoked(ci))

# The verdict of a problem in the signature's own method: its flags with the runs per call
# of its statements.
function judged_verdict(ci, flags::UInt64, reason::String, spots::Vector{Int}, rootlabel::String, @nospecialize(rettype))
    # Outside loops the problem costs one dynamic call per call (the hunt's estimate);
    # a box is left out: every use of the boxed variable pays, wherever it sits.
    once = !isempty(spots) && (flags & FLAG_BOX) == 0 && outside_loops(ci, spots)
    runs = (flags & FLAG_BOX) == 0 ? statement_runs(ci, spots) : 0
    runs = min(runs, 0xffffffff)
    f = (once ? flags | FLAG_ONCE_PER_CALL : flags) | (UInt64(runs) << RUNS_SHIFT)
    return Verdict(f, reason, rootlabel, rettype)
end
