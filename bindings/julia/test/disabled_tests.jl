# Not recording, a @jäger call site costs one branch: nothing is recorded, nothing is
# allocated, and the lowered code holds a single conditional branch (on Jager.ENABLED). A
# region (@jäger_block, a @jäger method) holds the user's code once — not a copy per path,
# which doubled the code (and its JIT time) at every level of nesting — and its branches
# all test the one load of Jager.ENABLED made at its start.

disabled_call(x) = @jäger "disabled call" sqrt_sum(x)
disabled_block(x) = @jäger_block "disabled block" begin
    x + 1
end

# Conditional branches of lowered code: `gotoifnot` on 1.5, Core.GotoIfNot from 1.6.
const HAS_GOTOIFNOT = isdefined(Core, :GotoIfNot)
isbranch(st) = HAS_GOTOIFNOT ? st isa Core.GotoIfNot : (st isa Expr && st.head === :gotoifnot)
branch_dest(st) = HAS_GOTOIFNOT ? st.dest : st.args[2]

# The conditional branches the not-recording path passes: those before the first one
# (which tests Jager.ENABLED) and those from its "false" target on. The recording path
# may branch more (a call proved nothrow runs without the exception handler).
function disabled_path_branches(f, types)
    code = code_lowered(f, types)[1].code
    first = findfirst(isbranch, code)
    first === nothing && return 0
    return 1 + count(isbranch, code[1:first-1]) + count(isbranch, code[branch_dest(code[first]):end])
end

# @allocated inside a function: at top level the interpreter boxes the result.
allocated_call(f, x) = @allocated f(x)

@testset "disabled mode" begin
    @test !Jager.isrecording()
    disabled_call(10); disabled_block(1)
    allocated_call(disabled_call, 10); allocated_call(disabled_block, 1)
    @test allocated_call(disabled_call, 10) == 0
    @test allocated_call(disabled_block, 1) == 0
    @test disabled_path_branches(disabled_call, (Int,)) == 1
    rhs(st) = st isa Expr && st.head === :(=) ? st.args[2] : st
    block = map(rhs, code_lowered(disabled_block, (Int,))[1].code)
    isplus(st) = st isa Expr && st.head === :call && (st.args[1] === :+ || st.args[1] == GlobalRef(@__MODULE__, :+))
    @test count(isplus, block) == 1                        # the user's `x + 1`, once
    @test count(isbranch, block) == 3                      # enter?, fail?, leave? on one load
    loads = [st for st in block if st isa Expr && st.head === :call && length(st.args) == 2 &&
             st.args[1] == GlobalRef(Base, :getindex) && st.args[2] == GlobalRef(Jager, :ENABLED)]
    @test length(loads) == 1

    # Calls made before a recording starts leave nothing in it.
    for _ in 1:10
        disabled_call(10)
        disabled_block(1)
    end
    rec = recorded("disabled") do
        nothing
    end
    @test isempty(spans(rec))

    # A configuration that disables recording: start returns false, spans stay off.
    @test Jager.start(output = joinpath(TMP, "off.jgr"), env = false, quiet = true, disable = 1) == false
    @test !Jager.isrecording()
    disabled_call(10)
    Jager.stop()
    @test !isfile(joinpath(TMP, "off.jgr")) || isempty(spans(JgrReader.read(joinpath(TMP, "off.jgr"))))
end
