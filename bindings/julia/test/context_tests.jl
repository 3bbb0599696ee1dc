# W3C trace context helpers over the core's parser and formatter.

const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

@testset "trace context" begin
    ctx = Jager.parse_traceparent(TP)
    @test ctx.trace_id == Tuple(hex2bytes("4bf92f3577b34da6a3ce929d0e0e4736"))
    @test ctx.span_id == Tuple(hex2bytes("00f067aa0ba902b7"))
    @test ctx.flags == 0x01
    @test Jager.format_traceparent(ctx) == TP
    for bad in ("", "00-xyz", uppercase(TP), replace(TP, "4bf92f3577b34da6a3ce929d0e0e4736" => "0"^32),
                "ff" * TP[3:end], TP * "x")
        err = try
            Jager.parse_traceparent(bad)
            nothing
        catch e
            e
        end
        @test err isa ArgumentError
        @test occursin("invalid traceparent", err.msg) && occursin(repr(bad), err.msg)
    end
    fresh = Jager.new_trace_context()
    @test any(!=(0x00), fresh.trace_id) && any(!=(0x00), fresh.span_id)
    @test Jager.parse_traceparent(Jager.format_traceparent(fresh)) == fresh

    local inside, after
    rec = recorded("context") do
        with_logger(JagerLogger()) do
            Jager.with_traceparent(TP) do
                inside = Jager.traceparent()
                @info "traced"
            end
            after = Jager.traceparent()
            @info "untraced"
        end
        @test_throws ArgumentError Jager.with_traceparent(() -> error("must not run"), "00-bad")
    end
    @test inside == TP
    @test after === nothing
    ls = logs(rec)
    traced = only(filter(l -> l.body == "traced", ls))
    @test traced.trace_id == hex2bytes("4bf92f3577b34da6a3ce929d0e0e4736")
    @test traced.ctx_span_id == hex2bytes("00f067aa0ba902b7")
    @test all(iszero, only(filter(l -> l.body == "untraced", ls)).trace_id)
end
