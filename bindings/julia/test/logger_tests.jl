# JagerLogger: levels → severity numbers, message, attributes, code location, the
# enclosing span, maxlog, minimum level and forwarding.

struct Opaque
    x::Int
end

@testset "severity numbers" begin
    @test Jager.severity(Logging.Debug) == 5
    @test Jager.severity(Logging.Info) == 9
    @test Jager.severity(Logging.Warn) == 13
    @test Jager.severity(Logging.Error) == 17
    @test Jager.severity(Logging.LogLevel(500)) == 11
    @test Jager.severity(Logging.LogLevel(-1500)) == 3
    @test Jager.severity(Logging.LogLevel(-5000)) == 1
    @test Jager.severity(Logging.LogLevel(3000)) == 21
    @test Jager.severity(Logging.LogLevel(10^6)) == 24
end

log_in_span() = @jäger_block "logging span" begin
    @info "inside a span"
end

@testset "JagerLogger" begin
    forward = Test.TestLogger(min_level = Logging.Debug)
    logger = JagerLogger(forward; min_level = Logging.Info)
    @test Logging.min_enabled_level(logger) == Logging.Debug
    @test Logging.catch_exceptions(logger)
    local hello_line
    rec = recorded("logs") do
        with_logger(logger) do
            @debug "below the minimum" a = 1
            @info "hello" n = 42 x = 1.5 flag = true name = "abc" sym = :s v = [1, 2] o = Opaque(3); hello_line = @__LINE__
            for i in 1:5
                @warn "limited" maxlog = 2 i = i
            end
            @logmsg Logging.LogLevel(500) "custom level"
            @error "bad" exception = (ErrorException("inner"), backtrace())
            log_in_span()
        end
    end
    ls = logs(rec)
    bodies = [l.body for l in ls]
    @test !("below the minimum" in bodies)
    @test count(==("limited"), bodies) == 2
    @test sort(bodies) == sort(["hello", "limited", "limited", "custom level", "bad", "inside a span"])
    hello = only(filter(l -> l.body == "hello", ls))
    @test hello.severity == 9
    a = hello.attrs
    @test a["n"] === Int64(42)
    @test a["x"] === 1.5
    @test a["flag"] === true
    @test a["name"] == "abc"
    @test a["sym"] == "s"
    @test a["v"] == "[1, 2]"
    @test a["o"] == string(Opaque(3))
    @test a["code.namespace"] == string(@__MODULE__)
    @test a["code.filepath"] == @__FILE__
    @test a["code.lineno"] === Int64(hello_line)
    @test !haskey(a, "maxlog")
    @test hello.span_id == 0
    lim = filter(l -> l.body == "limited", ls)
    @test [l.attrs["i"] for l in lim] == [1, 2]
    @test all(l -> l.severity == 13 && !haskey(l.attrs, "maxlog"), lim)
    @test only(filter(l -> l.body == "custom level", ls)).severity == 11
    bad = only(filter(l -> l.body == "bad", ls))
    @test bad.severity == 17
    @test bad.attrs["exception"] == "inner"
    # The core attached the enclosing span.
    insp = only(filter(l -> l.body == "inside a span", ls))
    span = only(spans(rec, site_id(rec, "logging span")))
    @test insp.span_id == span.span_id
    @test insp.site == span.site
    @test span.start_ns <= insp.time_ns <= span.end_ns

    # Forwarding: the forward logger saw what its level admits, maxlog honoured once.
    fwd = [r.message for r in forward.logs]
    @test "below the minimum" in fwd
    @test count(==("limited"), fwd) == 2
    @test "hello" in fwd && "bad" in fwd

    # Not recording: nothing recorded, still forwarded.
    forward2 = Test.TestLogger()
    with_logger(JagerLogger(forward2)) do
        @info "not recorded"
    end
    @test [r.message for r in forward2.logs] == ["not recorded"]
end
