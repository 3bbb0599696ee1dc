# nothrow.jl — can a call at a @jäger site throw? The verdict lets a site skip Julia's
# exception handler, the largest cost of an exception-safe span.
#
# A `try` costs about 15–20 ns on Julia 1.5 (jl_excstack_state, jl_enter_handler,
# __sigsetjmp, jl_pop_handler on every pass), as much as the rest of the span without the
# clock. A call that provably cannot throw needs no handler to keep its span exception-safe,
# so the call form of @jäger runs such calls unguarded and everything else inside a handler
# that records the exception and rethrows it. The proof is inference's: from Julia 1.8 on
# `Base.infer_effects` says whether a signature is nothrow; before, the optimized IR is
# walked (a few callee levels deep) and only statements known not to throw pass:
# arithmetic and comparison intrinsics, control flow, `new` of a concrete type,
# `getfield`/`setfield!` of existing fields, unchecked (`@inbounds`) array element access of
# bits types, and static calls (`:invoke`) of methods that pass the same test. Anything
# else — a throw, a bounds check, a dynamic call, a foreign call, division — keeps the
# handler. Asynchronous errors (an interrupt at a safepoint, a stack overflow) are outside
# what inference models, as in Julia's own effect analysis. A signature's first call keeps
# the handler; the proof runs at its NOTHROW_AFTER_CALLS-th call in a row (sites.jl), when
# it can pay for itself, after Julia compiled the callee.
#
# A proof is made in the calling task's world (the methods that call will run) and holds
# while the world counter stays where it was: a method definition anywhere moves the
# counter, and a site's fast path compares the counter with the one its decision saw, so
# a redefined callee is never run unguarded on a stale proof. (Swapping the inference
# hook, as the dispatch sensor does, moves the counter too: sites then decide again, from
# the cache; it swaps it only at start and stop, never to pause.) The one case left open
# is another task on the same thread, running in an
# older world, reaching the same site and signature while the proof is current: if a
# redefinition since that older world made the callee nothrow, that task's older,
# throwing method would run unguarded. Its exception would still propagate unchanged;
# only that span would stay open in the core.

const HAS_INFER_EFFECTS = isdefined(Base, :infer_effects) && isdefined(Core.Compiler, :is_nothrow)
const NOTHROW_DEPTH = 3       # callee levels walked below the signature
const NOTHROW_METHODS = 16    # methods inferred per verdict at most
const NOTHROW_STMTS = 2000    # statements examined per verdict at most

"Intrinsics that never throw whatever their (well-typed) arguments."
const NOTHROW_INTRINSICS = Set{Symbol}([
    :add_float, :sub_float, :mul_float, :div_float, :rem_float, :fma_float, :muladd_float,
    :neg_float, :abs_float, :copysign_float, :sqrt_llvm, :sqrt_llvm_fast, :floor_llvm,
    :ceil_llvm, :trunc_llvm, :rint_llvm, :add_float_fast, :sub_float_fast, :mul_float_fast,
    :div_float_fast, :neg_float_fast, :eq_float, :ne_float, :lt_float, :le_float,
    :eq_float_fast, :ne_float_fast, :lt_float_fast, :le_float_fast, :fpiseq, :fpislt,
    :add_int, :sub_int, :mul_int, :neg_int, :and_int, :or_int, :xor_int, :not_int,
    :shl_int, :lshr_int, :ashr_int, :slt_int, :sle_int, :ult_int, :ule_int, :eq_int, :ne_int,
    :bswap_int, :ctpop_int, :ctlz_int, :cttz_int, :flipsign_int, :abs_int,
    :checked_sadd_int, :checked_uadd_int, :checked_ssub_int, :checked_usub_int,
    :checked_smul_int, :checked_umul_int, :sext_int, :zext_int, :trunc_int, :fptrunc,
    :fpext, :sitofp, :uitofp, :fptosi, :fptoui, :bitcast, :arraylen,
])

# Builtins by name where this Julia has them (array builtins went away in 1.11).
core_builtin(name::Symbol) = isdefined(Core, name) ? getfield(Core, name) : nothing

"Builtins that never throw on any arguments."
const NOTHROW_BUILTINS = filter(!isnothing, Any[(===), typeof, Core.tuple, core_builtin(:nfields),
                                                core_builtin(:arraylen)])
const ARRAYREF = Any[core_builtin(:arrayref), core_builtin(:const_arrayref)]
const ARRAYSET = core_builtin(:arrayset)
const ARRAYSIZE = core_builtin(:arraysize)

"""
    nothrow(sig::Type, world = latest) -> Bool

True when inference proves that calling the concrete signature `sig`
(`Tuple{typeof(f), ArgTypes...}`) cannot throw, with the methods of `world`. False when it
can, when it cannot tell, or when the callee is not a singleton function. Never throws.
"""
function nothrow(@nospecialize(sig), world::UInt = Base.get_world_counter())
    try
        sig isa DataType && sig <: Tuple && !isempty(sig.parameters) || return false
        ft = sig.parameters[1]
        ft isa DataType && isdefined(ft, :instance) || return false
        isconcretetype(sig) || return false
        if HAS_INFER_EFFECTS
            f = ft.instance
            types = Tuple{sig.parameters[2:end]...}
            return Core.Compiler.is_nothrow(Base.infer_effects(f, types; world = world))
        end
        return nothrow_walk(sig, world)
    catch
        return false
    end
end

mutable struct WalkBudget
    world::UInt
    methods::Int
    stmts::Int
end

function nothrow_walk(@nospecialize(sig), world::UInt)
    seen = IdDict{Any,Bool}()
    return method_nothrow(sig, 0, seen, WalkBudget(world, NOTHROW_METHODS, NOTHROW_STMTS))
end

# `seen` maps a method signature to its verdict, `false` while it is being walked: a
# recursive call finds `false` (recursion is not bounded here) and a repeated one the result.
function method_nothrow(@nospecialize(sig), depth::Int, seen::IdDict{Any,Bool}, b::WalkBudget)
    v = get(seen, sig, nothing)
    v === nothing || return v
    seen[sig] = false
    (b.methods -= 1) < 0 && return false
    r = typed_ir(sig, b.world)
    r === nothing && return false
    ci, rettype = r
    widen(rettype) === Union{} && return false   # always throws
    (b.stmts -= length(ci.code)) < 0 && return false
    for st in ci.code
        stmt_nothrow(ci, st, depth, seen, b) || return false
    end
    seen[sig] = true
    return true
end

# Statement kinds that carry no operation: markers, scopes, loop hints.
const INERT_HEADS = (:meta, :inbounds, :loopinfo, :code_coverage_effect, :gc_preserve_begin,
                     :gc_preserve_end, :aliasscope, :popaliasscope, :boundscheck, :line,
                     :simdloop, :return)

function stmt_nothrow(ci, @nospecialize(st), depth::Int, seen, b::WalkBudget)
    st isa Expr || return value_nothrow(ci, st)
    h = st.head
    h in INERT_HEADS && return true
    if h === :gotoifnot
        return arg_type(ci, st.args[1]) === Bool
    elseif h === :new
        T = resolve(st.args[1])
        return T isa DataType && isconcretetype(T)     # inference checked the field types
    elseif h === :invoke
        depth < NOTHROW_DEPTH || return false
        mi = st.args[1]
        if isdefined(Core, :CodeInstance) && mi isa Core.CodeInstance
            mi = mi.def
        end
        mi isa Core.MethodInstance || return false
        return method_nothrow(mi.specTypes, depth + 1, seen, b)
    elseif h === :call
        return call_nothrow(ci, st)
    elseif h === :(=)
        return length(st.args) == 2 && stmt_nothrow(ci, st.args[2], depth, seen, b)
    end
    return false   # foreigncall, throw_undef_if_not, enter/leave, static_parameter, …
end

# Non-Expr statements: control flow nodes, SSA/slot references, constants.
function value_nothrow(ci, @nospecialize(st))
    n = nameof(typeof(st))
    n === :GotoIfNot && return arg_type(ci, st.cond) === Bool
    n === :ReturnNode && return isdefined(st, :val)   # a bare ReturnNode marks unreachable code
    st isa GlobalRef && return isdefined(st.mod, st.name)
    return true     # GotoNode, PhiNode, PiNode, NewvarNode, LineNumberNode, SSAValue, literals
end

function call_nothrow(ci, st::Expr)
    isempty(st.args) && return false
    f = callee_value(ci, st.args[1])
    args = st.args[2:end]
    if f isa Core.IntrinsicFunction
        return nameof_intrinsic(f) in NOTHROW_INTRINSICS
    end
    f isa Core.Builtin || return false
    any(x -> x === f, NOTHROW_BUILTINS) && return true
    if f === isa
        return length(args) == 2 && arg_type(ci, args[2]) <: Type
    elseif f === Core.ifelse
        return length(args) == 3 && arg_type(ci, args[1]) === Bool
    elseif f === getfield
        return 2 <= length(args) <= 3 && field_ok(arg_type(ci, args[1]), resolve(args[2]))
    elseif f === setfield!
        length(args) == 3 || return false
        T = arg_type(ci, args[1])
        T isa DataType && is_mutable_type(T) || return false
        field_ok(T, resolve(args[2])) || return false
        return arg_type(ci, args[3]) <: fieldtype(T, resolve(args[2]))
    elseif f !== nothing && any(x -> x === f, ARRAYREF)
        # arrayref(boundscheck, A, i...): unchecked, of an element type that is never #undef
        return length(args) >= 3 && resolve(args[1]) === false && bits_array(arg_type(ci, args[2]))
    elseif f === ARRAYSIZE
        # arraysize(A, d) fails only for d < 1
        d = resolve(args[end])
        return length(args) == 2 && arg_type(ci, args[1]) <: Array && d isa Int && d >= 1
    elseif f === ARRAYSET
        length(args) >= 4 && resolve(args[1]) === false || return false
        A = arg_type(ci, args[2])
        return bits_array(A) && arg_type(ci, args[3]) <: eltype(A)
    end
    return false
end

nameof_intrinsic(f::Core.IntrinsicFunction) = Symbol(string(f))

bits_array(@nospecialize(A)) = A isa DataType && A <: Array && isbitstype(eltype(A))

# A field read that cannot fail: the field exists (by constant name or index) and holds a
# bits value or sits in an immutable object (never left #undef by a constructor we see).
function field_ok(@nospecialize(T), @nospecialize(name))
    T isa DataType && isconcretetype(T) || return false
    name isa Symbol || name isa Int || return false
    i = name isa Symbol ? Base.fieldindex(T, name, false) : name
    1 <= i <= fieldcount(T) || return false
    return isbitstype(fieldtype(T, i)) || !is_mutable_type(T)
end

is_mutable_type(T::DataType) = isdefined(Base, :ismutabletype) ? Base.ismutabletype(T) : T.mutable

# ---- the verdicts a site uses --------------------------------------------------------------

"Verdicts by signature: (verdict, world whose methods it was proved for, proofs made)."
const NOTHROW_CACHE = IdDict{Any,Tuple{Bool,UInt,Int}}()
"""
Proofs per signature at most: a program that keeps defining methods and calling a site
from the newer worlds (eval in a loop, invokelatest) would otherwise pay inference again
each time; past this the signature keeps its handler.
"""
const NOTHROW_MAX_PROOFS = 32
const NOTHROW_LOCK = ReentrantLock()

"""
Whether libjulia exports its world counter (checked by the Julia that loads the package):
without it every site keeps its handler. Native code is generated in the running process,
so the hot path reads the counter at a constant address.
"""
const HAS_WORLD_COUNTER = try
    cglobal(:jl_world_counter, UInt) != C_NULL
catch
    false
end

"Whether libjulia tells the calling task's world (proofs are made only in the latest)."
const HAS_TLS_WORLD = Ref(false)

function find_tls_world!()
    HAS_TLS_WORLD[] = try
        cglobal(:jl_get_tls_world_age) != C_NULL
    catch
        false
    end
    return nothing
end

"The world counter now (a plain load; 0 when unknown: no proof is made in world 0)."
@inline function world_now()
    @static if HAS_WORLD_COUNTER
        return unsafe_load(cglobal(:jl_world_counter, UInt))
    else
        return UInt(0)
    end
end

"The calling task's world (the latest when libjulia does not tell)."
caller_world() = HAS_TLS_WORLD[] ? ccall(:jl_get_tls_world_age, UInt, ()) : Base.get_world_counter()

"""
The world counter after proving `sig` nothrow in the caller's world, or 0 when it cannot
be proved (or the counter is unknown). Proofs are cached per signature and world.
"""
function nothrow_world(@nospecialize(sig))
    HAS_WORLD_COUNTER || return UInt(0)
    t = caller_world()
    hit = lock(() -> get(NOTHROW_CACHE, sig, nothing), NOTHROW_LOCK)
    proofs = hit === nothing ? 0 : hit[3]
    if hit !== nothing && hit[2] == t
        ok = hit[1]
    elseif proofs >= NOTHROW_MAX_PROOFS
        ok = false
    else
        ok = analysis_shell(sig, t)
        lock(() -> (NOTHROW_CACHE[sig] = (ok, t, proofs + 1)), NOTHROW_LOCK)
    end
    # Read after the proof (a definition during it would move the counter; pausing the
    # sensor's capture no longer does, see pause_capture!).
    return ok ? world_now() : UInt(0)
end

# With the dispatch sensor capturing compiles, the proof's inference runs outside the
# capture: it is not the program's.
function analysis_shell(@nospecialize(sig), world::UInt)
    f = () -> nothrow(sig, world)
    return isdefined(@__MODULE__, :DispatchSensor) ? DispatchSensor.without_capture(f)::Bool : f()::Bool
end
