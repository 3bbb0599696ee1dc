# The receiving side of otel_propagate in Julia: the sender's traceparent arrives on
# standard input (a socket); putting it into TRACEPARENT before recording starts makes this
# process's spans part of the sender's trace. It is read before `using Jager`, because with
# JAGER_PLUGINS set in the environment `using Jager` itself starts the recording.
ENV["TRACEPARENT"] = strip(readline(stdin))
push!(LOAD_PATH, joinpath(@__DIR__, "..", "..", "bindings", "julia"))
using Jager, Logging

handle(x) = x + 1
Jager.start()
@jäger handle(1)
with_logger(JagerLogger()) do
    @info "handled in julia"
end
Jager.stop()
