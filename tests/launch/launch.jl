# launch.jl — Julia's part of the launch tests: N spans of site "launch.jl.work" through
# libjager's C API, which zero-code mode preloaded (no binding, no jager_init).
struct Span # jager_span, returned and passed by value
    start_ns::UInt64
    site::UInt32
    id::UInt32
end
n = parse(Int, ARGS[1])
site = ccall(:jager_site_register, UInt32, (Cstring, Cstring, UInt32), "launch.jl.work", @__FILE__, 0)
acc = 0.0
for i in 1:n
    s = ccall(:jager_span_begin, Span, (UInt32,), site)
    global acc += sqrt(Float64(i))
    ccall(:jager_span_end, Cvoid, (Span,), s)
end
acc > 0 || exit(3)
