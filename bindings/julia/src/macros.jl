# macros.jl — @jäger, @jäger_block and their ASCII aliases.
#
# Each macro is one line calling `span_expr`, which builds the expansion in the style of
# TimerOutputs' macros: the whole expansion is escaped, its locals are gensyms, and the
# user's code keeps its own line numbers. The span is made exception-safe with the raw
# `trycatch`/`tryfinally` expression heads, which, unlike `try … end`, open no new scope,
# so `@jäger x = f(y)` leaves `x` defined after it; a call proved not to throw runs
# without the handler (nothrow.jl), which is most of a span's cost. While not recording, a
# call site costs one load and one branch (`ENABLED[]`) and runs the user's call
# unchanged; a region (block, method body) keeps its handler and runs its code once.

"True while recording; the only thing a disabled @jäger looks at."
const ENABLED = Ref(false)

# ---- recognising the expression ----------------------------------------------------------

# The called function's name for the site: `f`, `Mod.f`, `+`; anything else is shortened.
function callee_name(f)
    f isa Symbol && return String(f)
    if f isa Expr && f.head === :. && length(f.args) == 2 && f.args[2] isa QuoteNode
        return string(callee_name(f.args[1]), ".", f.args[2].value)
    end
    s = string(f)
    return length(s) > 60 ? first(s, 57) * "..." : s
end

is_splat(a) = a isa Expr && a.head === :...
is_kw(a) = a isa Expr && (a.head === :kw || a.head === :parameters)

# A plain call we can instrument argument by argument: positional arguments without
# splats (keyword arguments are passed through untouched).
function plain_call(ex)
    ex isa Expr && ex.head === :call && length(ex.args) >= 1 || return false
    return !any(is_splat, ex.args[2:end]) &&
           !any(a -> a isa Expr && a.head === :parameters && any(is_splat, a.args), ex.args[2:end])
end

# `lhs = call` (an assignment, not a short function definition `f(x) = …`).
function assigned_call(ex)
    ex isa Expr && ex.head === :(=) && length(ex.args) == 2 || return false
    lhs = ex.args[1]
    lhs isa Expr && lhs.head in (:call, :where) && return false
    lhs isa Expr && lhs.head === :(::) && lhs.args[1] isa Expr && lhs.args[1].head === :call && return false
    return plain_call(ex.args[2])
end

# A method definition: `function f(x) … end` or `f(x) = …` (with `where`/return type).
function method_def(ex)
    ex isa Expr || return false
    ex.head === :function && return length(ex.args) == 2
    ex.head === :(=) && length(ex.args) == 2 || return false
    lhs = ex.args[1]
    lhs isa Expr && lhs.head in (:call, :where) && return true
    return lhs isa Expr && lhs.head === :(::) && lhs.args[1] isa Expr && lhs.args[1].head in (:call, :where)
end

# The name of the function a method definition defines (`nothing` for an anonymous one).
function method_name(sig)
    while sig isa Expr && (sig.head === :where ||
                           (sig.head === :(::) && length(sig.args) == 2 && sig.args[1] isa Expr &&
                            sig.args[1].head in (:call, :where)))
        sig = sig.args[1]                                       # strip `where` and `::Ret`
    end
    sig isa Expr && sig.head === :call || return nothing
    f = sig.args[1]
    f isa Expr && f.head === :curly && (f = f.args[1])          # F{T}(x) = … (a constructor)
    f isa Expr && f.head === :(::) && return string(f.args[end]) # (obj::T)(x): a callable type
    return callee_name(f)
end

# A name for an expression that is not a plain call (do-blocks, broadcasts, splats…).
function implied_name(ex)
    ex isa Expr || return nothing
    ex.head === :call && return callee_name(ex.args[1])
    ex.head === :do && return implied_name(ex.args[1])
    ex.head === :. && length(ex.args) == 2 && ex.args[2] isa Expr && ex.args[2].head === :tuple &&
        return callee_name(ex.args[1])
    ex.head === :(=) && length(ex.args) == 2 && return implied_name(ex.args[2])
    ex.head === :macrocall && return nothing
    return nothing
end

# Does the code leave the span by `return`, `break`, `continue` or `@goto`? Then the span
# must be closed by a `finally`, not only on the normal path. Macros are expanded first so
# that flow control they generate is seen.
function leaves_early(ex)
    ex isa Expr || return false
    ex.head in (:return, :break, :continue, :symbolicgoto) && return true
    ex.head in (:function, :->) && return false # a nested function's return is its own
    ex.head === :(=) && ex.args[1] isa Expr && ex.args[1].head in (:call, :where) && return false
    return any(leaves_early, ex.args)
end

# The check runs on a throw-away expansion; the code spliced is the user's, unexpanded.
function leaves_early_expanded(mod::Module, ex)
    try
        return leaves_early(macroexpand(mod, ex))
    catch
        return true # cannot tell: take the safe form
    end
end

# ---- building the expansion -------------------------------------------------------------

const JagerMod = @__MODULE__
g(sym::Symbol) = GlobalRef(JagerMod, sym)

function literal_name(name, macroname)
    # `@jäger_block $(esc(name)) …` in another macro's expansion: the literal is escaped.
    while name isa Expr && name.head === :escape && length(name.args) == 1
        name = name.args[1]
    end
    name isa String && !isempty(name) && return name
    name isa String && throw(ArgumentError("$macroname: the site name must not be empty"))
    throw(ArgumentError("$macroname: the site name must be a literal string, got `$name` " *
                        "(sites are registered once per expansion, so names cannot vary)"))
end

"""
Build the expansion of `@jäger [name] ex` (block = false) or `@jäger_block name ex`.
`source` and `mod` are the macro's `__source__` and `__module__`.
"""
function span_expr(source::LineNumberNode, mod::Module, args::Tuple, block::Bool, macroname::String)
    # a trailing `attrs = (k => v, …)` (or `attrs = :args`): span attributes
    attrs = nothing
    isattrs(a) = a isa Expr && a.head === :(=) && a.args[1] === :attrs
    if length(args) >= 2 && any(isattrs, args[2:end])
        i = 1 + findfirst(isattrs, args[2:end])
        attrs = args[i].args[2]
        args = (args[1:i-1]..., args[i+1:end]...)
    end
    if block
        length(args) == 2 || throw(ArgumentError("$macroname needs a name and a block: $macroname \"name\" begin … end"))
        name, ex = literal_name(args[1], macroname), args[2]
    elseif length(args) == 1 && method_def(args[1])
        ex = args[1]
        name = method_name(ex.args[1])
        name === nothing && throw(ArgumentError(
            "$macroname: give a name for an anonymous function: $macroname \"name\" function (x) … end"))
    elseif length(args) == 1
        ex = args[1]
        name = assigned_call(ex) ? callee_name(ex.args[2].args[1]) :
               plain_call(ex) ? callee_name(ex.args[1]) : implied_name(ex)
        name === nothing && throw(ArgumentError(
            "$macroname: give a name for an expression that is not a call: $macroname \"name\" expr"))
    elseif length(args) == 2
        name, ex = literal_name(args[1], macroname), args[2]
    else
        throw(ArgumentError("$macroname takes an expression, optionally preceded by a name"))
    end
    file = source.file === nothing ? "" : String(source.file)
    site = Site(name, mod, file, source.line)
    if !block && method_def(ex)
        attrs === nothing || throw(ArgumentError("$macroname: attrs = … is for calls and blocks, not method definitions"))
        out = method_expr(source, mod, site, ex)
    elseif !block && (plain_call(ex) || assigned_call(ex))
        out = call_expr(source, site, ex, attrs)
    else
        (attrs isa QuoteNode && attrs.value === :args) &&
            throw(ArgumentError("$macroname: attrs = :args needs a call"))
        out = region_expr(source, site, ex, leaves_early_expanded(mod, ex), attrs)
    end
    return esc(out)
end

# A call: callee and positional arguments are evaluated once, before the span, into
# locals; the signature `Tuple{typeof(f), typeof.(args)...}` is constant-folded where the
# argument types are inferred, so comparing it with the last one is a pointer comparison.
# A signature proved nothrow (nothrow.jl) runs the call without an exception handler;
# any other runs it inside one that records the exception and rethrows it.
function call_expr(source, site::Site, ex::Expr, attrs = nothing)
    lhs = nothing
    if ex.head === :(=)
        lhs, ex = ex.args[1], ex.args[2]
    end
    fv = gensym(:f)
    pre = Any[:(local $fv = $(ex.args[1]))]
    callargs = Any[]
    argsyms = Any[]
    for a in ex.args[2:end]
        if is_kw(a)
            push!(callargs, a)
        else
            s = gensym(:arg)
            push!(pre, :(local $s = $a))
            push!(callargs, s)
            push!(argsyms, s)
        end
    end
    call = Expr(:call, fv, callargs...)
    typeof_ = GlobalRef(Core, :Typeof)
    sig = Expr(:curly, GlobalRef(Core, :Tuple), :($typeof_($fv)), (:($typeof_($s)) for s in argsyms)...)
    val, v, sp, b0, sg, ung = gensym(:val), gensym(:v), gensym(:span), gensym(:bytes0), gensym(:sig), gensym(:unguarded)
    guarded = Expr(:trycatch, :($v = $call),
                   Expr(:block, :($(g(:_fail_latest))($site, $sp, $b0, $sg, $(Expr(:the_exception)))),
                        :($(g(:rethrow))())))
    # Keyword arguments make the call another signature than `sig` (a kwcall), whose proof
    # we do not have: such sites always keep the handler.
    haskw = length(argsyms) != length(ex.args) - 1
    if attrs isa QuoteNode && attrs.value === :args   # attrs = :args: every positional argument
        attrs = Expr(:tuple, (:($("arg$i") => $s) for (i, s) in enumerate(argsyms))...)
    end
    instrumented = Expr(:block,
        :(local $sg = $(g(:hide_type))($sig)),
        :(local ($sp, $b0, $ung) = $(g(haskw ? :_enter_kw : :_enter))($site, $sg)),
        attrs === nothing ? nothing : :($(g(:_set_attrs))($sp, $attrs)),
        :(local $v),
        haskw ? guarded : Expr(:if, ung, :($v = $call), guarded),
        :($(g(:_leave))($sp, $b0)),
        v)
    # Built without quote blocks, which would add line numbers of this file.
    body = Expr(:block, source, pre...,
        Expr(:local, Expr(:(=), val, Expr(:if, :($(g(:ENABLED))[]), instrumented, call))))
    lhs === nothing || push!(body.args, :($lhs = $val))
    push!(body.args, val)
    return body
end

# A method definition: the same signature, its whole body a span (a region: `return`
# inside closes it through a finally). Each call of the method is one span at the site of
# the definition, named after the function.
function method_expr(source, mod::Module, site::Site, ex::Expr)
    sig, body = ex.args[1], ex.args[2]
    inner = region_expr(source, site, body, leaves_early_expanded(mod, body))
    return Expr(ex.head, sig, Expr(:block, source, inner))
end

# Any other expression or block: run it inside a span. The user's code appears once (a
# region holds other sites, and a copy per enabled/disabled path would double the code at
# every level of nesting — and the JIT time with it): whether the region records is read
# once at its start, and the handler is always there (a region is coarse: ≈ 20 ns).
function region_expr(source, site::Site, ex, early::Bool, attrs = nothing)
    val, sp, b0, done, on = gensym(:val), gensym(:span), gensym(:bytes0), gensym(:done), gensym(:on)
    fail = Expr(:block, Expr(:&&, on, :($(g(:_fail_latest))($site, $sp, $b0, nothing, $(Expr(:the_exception))))))
    open_ = Expr(:block,
        :(local $on = $(g(:ENABLED))[]),
        :(local ($sp, $b0) = $on ? $(g(:_enter))($site) : ($(g(:INERT_SPAN)), $(Int64(-1)))),
        attrs === nothing ? nothing : Expr(:&&, on, :($(g(:_set_attrs))($sp, $attrs))),
        :(local $val))
    if early
        # return/break/continue/@goto: close the span in a finally; _fail closes it on error.
        push!(fail.args, :($done = true), :($(g(:rethrow))()))
        push!(open_.args, :(local $done = false),
              Expr(:tryfinally,
                   Expr(:trycatch, :($val = $ex), fail),
                   Expr(:||, done, Expr(:&&, on, :($(g(:_leave))($sp, $b0))))))
    else
        push!(fail.args, :($(g(:rethrow))()))
        push!(open_.args, Expr(:trycatch, :($val = $ex), fail),
              Expr(:&&, on, :($(g(:_leave))($sp, $b0))))
    end
    push!(open_.args, val)
    return Expr(:block, source, open_)
end

"""
    @jäger f(args...)
    @jäger x = f(args...)
    @jäger "name" expr
    @jäger function f(args...) … end
    @jäger f(args...) = …

Record a span around a call or an expression. In front of a method definition, every
call of that method is a span named after the function (or the name given), at the
definition's line; `return` inside closes it. The site (name, module, file, line) is
registered once, at its first call while recording; the name of `@jäger f(x)` is `"f"`.
The span records its duration and the bytes Julia allocated inside it. For a call, the
concrete argument signature is counted per site (see [`signature_counts`](@ref)). An
exception thrown inside is recorded on the span (type, message, argument signature) and
rethrown unchanged, with its backtrace. `@jäger x = f(y)` defines `x` in the caller's
scope. While not recording the cost is one branch.
"""
macro jäger(args...)
    span_expr(__source__, __module__, args, false, "@jäger")
end

"""
    @jäger_block "name" begin … end

Record a span around a block; `return`, `break` and `continue` inside close it too.
"""
macro jäger_block(args...)
    span_expr(__source__, __module__, args, true, "@jäger_block")
end

"ASCII alias of [`@jäger`](@ref)."
macro jaeger(args...)
    span_expr(__source__, __module__, args, false, "@jaeger")
end

"ASCII alias of [`@jäger_block`](@ref)."
macro jaeger_block(args...)
    span_expr(__source__, __module__, args, true, "@jaeger_block")
end
