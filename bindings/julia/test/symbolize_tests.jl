# The symbolizer names JIT frames of interned stacks: outermost first (depth 0), then
# the frames inlined into it.

@inline inlined_leaf() = backtrace()
@noinline marker_outer() = inlined_leaf()

function julia_ips()
    bt = marker_outer()
    return UInt64[UInt64(UInt(ip)) for ip in bt if ip isa Ptr{Cvoid}]
end

@testset "symbolizer" begin
    ips = julia_ips()
    # The return address in marker_outer, found as Julia sees it (innermost inlined first).
    ip = first(filter(ips) do ip
        fr = Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1))
        any(f -> f.func === :marker_outer, fr)
    end)
    expected = reverse(Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1)))
    @test length(expected) >= 2            # inlined_leaf is inlined into marker_outer
    local resolved
    rec = recorded("symbols"; ips = () -> ips) do
        id = ccall((:jager_stack_intern, Jager.LIB), UInt64, (Ptr{UInt64}, UInt32), ips, length(ips))
        @test id != 0
        resolved = Jager.symbolize!()
        @test Jager.symbolize!() == 0      # each address is handed out once
    end
    @test resolved >= 1
    frames = rec.symbols[ip]
    @test [f.depth for f in frames] == collect(0:length(expected)-1)
    @test [f.func for f in frames] == [string(f.func) for f in expected]
    @test frames[1].func == "marker_outer"
    @test frames[end].func == "inlined_leaf"
    @test frames[end].file == string(expected[end].file)
    @test frames[end].line == expected[end].line
end
