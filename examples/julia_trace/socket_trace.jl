# socket_trace.jl — one trace across two Julia processes over a TCP socket.
#
#   julia --project=bindings/julia socket_trace.jl receive PORTFILE OUT.jgr   # listens, writes its port
#   julia --project=bindings/julia socket_trace.jl send    PORTFILE OUT.jgr   # connects, sends one request
#   jager merge send.jgr receive.jgr -o both.jgr                            # one trace in both parts
#
# The sender's request is a header block ("name: value" lines, then an empty line) and a
# body, like HTTP: `Jager.inject(headers)` puts the sender's trace context in it as
# `traceparent`, and the receiver's `Jager.extract(headers)` makes it current, so the spans
# and logs the receiver records while handling the request belong to the sender's trace.
using Jager, Sockets, Logging

role, portfile, out = ARGS
Jager.start(output = out, env = false, quiet = true)
global_logger(JagerLogger())

function receive(portfile)
    port, server = listenany(ip"127.0.0.1", 20000)
    write(portfile * ".tmp", string(Int(port)))
    mv(portfile * ".tmp", portfile; force = true)       # the sender waits for this file
    sock = accept(server)
    headers = Dict{String,String}()
    while true
        line = readline(sock)
        isempty(line) && break
        k, v = split(line, ':'; limit = 2)
        headers[strip(k)] = strip(v)
    end
    body = read(sock, parse(Int, headers["Content-Length"]))
    ctx = Jager.extract(headers)                        # the sender's trace is ours now
    @jäger_block "handle request" begin
        @info "request" bytes = length(body) traceparent = Jager.traceparent()
        @jäger sum(body)
    end
    write(sock, "ok\n")
    close(sock)
    close(server)
    ctx === nothing && error("no traceparent received")
end

function send(portfile)
    for _ in 1:600                                      # up to 60 s for the receiver to listen
        isfile(portfile) && break
        sleep(0.1)
    end
    port = parse(Int, read(portfile, String))
    @jäger_block "send request" begin
        headers = Dict{String,String}("Content-Type" => "application/octet-stream")
        tp = Jager.inject(headers)                      # starts a trace: none was current
        @info "sending" traceparent = tp
        body = rand(UInt8, 1000)
        headers["Content-Length"] = string(length(body))
        sock = connect(ip"127.0.0.1", port)
        write(sock, join(("$k: $v\r\n" for (k, v) in headers)), "\r\n", body)
        reply = readline(sock)
        close(sock)
        reply == "ok" || error("unexpected reply $(repr(reply))")
    end
end

role == "receive" ? receive(portfile) : send(portfile)
Jager.stop()
