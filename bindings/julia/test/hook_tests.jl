# START_HOOKS, FLUSH_HOOKS and STOP_HOOKS run on the calling task in order, while the core
# records; a failing hook is reported and does not stop the others or the recording.

@testset "lifecycle hooks" begin
    calls = String[]
    h_start = () -> push!(calls, "start:" * string(Jager.isrecording()))
    h_flush = () -> push!(calls, "flush")
    h_stop = () -> push!(calls, "stop:" * string(ccall((:jager_is_enabled, Jager.LIB), Cint, ())))
    h_bad = () -> error("hook failure on purpose")
    push!(Jager.START_HOOKS, h_start); push!(Jager.FLUSH_HOOKS, h_flush)
    push!(Jager.STOP_HOOKS, h_bad); push!(Jager.STOP_HOOKS, h_stop)
    try
        rec = with_logger(NullLogger()) do
            recorded("hooks") do
                @test Jager.drain()
                push!(calls, "body")
            end
        end
        @test rec.clean_end
    finally
        filter!(h -> h !== h_start, Jager.START_HOOKS)
        filter!(h -> h !== h_flush, Jager.FLUSH_HOOKS)
        filter!(h -> h !== h_bad && h !== h_stop, Jager.STOP_HOOKS)
    end
    @test calls == ["start:true", "flush", "body", "stop:1"]
    @test !Jager.isrecording()
end
