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

@testset "symbol cache of shared objects" begin
    # An address inside Julia's system image (a Base frame of this backtrace) is looked
    # up once and written to the cache; a process that finds it there does not look it
    # up again (SYMBOL_LOOKUPS) and records the same frames.
    dir = mktempdir()
    intern(ips) = ccall((:jager_stack_intern, Jager.LIB), UInt64, (Ptr{UInt64}, UInt32), ips, length(ips))
    withenv("JAGER_SYMBOL_CACHE" => dir) do
        empty!(Jager.IMAGE_CACHES); empty!(Jager.SYMBOL_CACHE)
        ips = julia_ips()
        images = Dict(ip => Jager.image_cache(ip) for ip in ips)
        sysimg = [ip for ip in ips if images[ip] !== nothing &&
                  realpath(images[ip].image) == realpath(unsafe_string(Base.JLOptions().image_file))]
        @test !isempty(sysimg)
        # One past a return address the symbolizer test above already handed to the core
        # (the core keeps each address it saw): an address in the same function, new here.
        ip = first(sysimg) + 1
        image = images[first(sysimg)].image
        expected = reverse(Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1)))
        empty!(Jager.IMAGE_CACHES)
        n0 = Jager.SYMBOL_LOOKUPS[]
        rec1 = recorded("symcache1"; ips = () -> [ip]) do
            @test intern([ip]) != 0
            @test Jager.symbolize!() == 1
        end
        @test Jager.SYMBOL_LOOKUPS[] == n0 + 1
        file = joinpath(dir, only(filter(f -> startswith(f, basename(image)), readdir(dir))))
        @test length(readlines(file)) == length(expected)
        # A new process's view: nothing in memory, only the file (the core hands each
        # address out once per process, so the symbolizer's lookup is asked directly).
        empty!(Jager.IMAGE_CACHES); empty!(Jager.SYMBOL_CACHE)
        frames = Jager.frames_of(ip)
        @test Jager.SYMBOL_LOOKUPS[] == n0 + 1
        @test [f.func for f in frames] == [string(f.func) for f in expected]
        @test [f.line for f in frames] == [f.line for f in expected]
        @test [(d - 1, f.func, f.file, f.line) for (d, f) in enumerate(frames)] ==
              [(f.depth, f.func, f.file, f.line) for f in rec1.symbols[ip]]
        # JIT code has no image: never cached.
        jit = first(filter(ip -> any(f -> f.func === :marker_outer, Base.StackTraces.lookup(Ptr{Cvoid}(ip - 1))), julia_ips()))
        @test Jager.image_cache(jit) === nothing
        empty!(Jager.IMAGE_CACHES)
    end
end
