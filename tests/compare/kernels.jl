# kernels.jl — the Julia program `jager bench` measures in tests/compare: two kernels at
# @jäger sites; ARGS[1] is smooth!'s work in percent (100 = base, more = a slower "build").
using Jager

function smooth!(v, u, work)
    n = length(u)
    for rep in 1:work
        @inbounds for i in 2:n-1
            v[i] = 0.25 * u[i-1] + 0.5 * u[i] + 0.25 * u[i+1] + 1e-12 * rep
        end
    end
    return v
end

function norm2(u)
    s = 0.0
    for rep in 1:40
        @inbounds for x in u
            s += x * x
        end
    end
    return sqrt(s)
end

function main(work)
    u = collect(range(0.0, 1.0; length = 4096))
    v = similar(u)
    smooth!(v, u, 1); norm2(v)     # compiled before the recording, as any benchmark warms up
    Jager.start()
    for _ in 1:60
        @jäger smooth!(v, u, work)
        @jäger norm2(v)
    end
    Jager.stop()
end

main(parse(Int, get(ARGS, 1, "100")))
