# kernels.jl — a multi-kernel numerical program (stdlib only) for bench/julia/binding_cost.jl.
#
#   julia --project=bindings/julia bench/julia/kernels.jl <mode> [size]
#
# mode "plain": the kernels as written; "jager": every kernel call and phase is a @jäger
# site (recording per JAGER_OUTPUT/JAGER_PLUGINS: `using Jager` starts it). It prints one
# line `key=value …` of process CPU seconds (clock(), less disturbed by a loaded machine
# than wall time): load (`using`), first (the first main() call: mostly JIT), second (a
# second call: the run), when recording stop (Jager.stop()) split into hooks/symbolize/rest
# and the hook's final drain into its phases (drain_compiles/verdicts/counts/census),
# and ir (statements of main's optimized IR: the code the JIT compiles).
const MODE = ARGS[1]
const SIZE = length(ARGS) >= 2 ? parse(Int, ARGS[2]) : 1
cpu() = ccall(:clock, Clong, ()) / 1e6   # CLOCKS_PER_SEC is 10^6 on POSIX
const T_START = cpu()
if MODE == "jager"
    using Jager
    macro site(ex)
        esc(:($Jager.@jäger $ex))
    end
    macro phase(name, ex)
        esc(:($Jager.@jäger_block $name $ex))
    end
else
    macro site(ex)
        esc(ex)
    end
    macro phase(name, ex)
        esc(ex)
    end
end
using LinearAlgebra, Random
const T_LOADED = cpu()

function matmul!(C, A, B)
    n = size(A, 1)
    fill!(C, 0.0)
    @inbounds for j in 1:n, k in 1:n
        b = B[k, j]
        for i in 1:n
            C[i, j] += A[i, k] * b
        end
    end
    return C
end

function jacobi!(u, f, h2, iters)
    n = length(u)
    v = similar(u)
    for _ in 1:iters
        @inbounds for i in 2:n-1
            v[i] = 0.5 * (u[i-1] + u[i+1] - h2 * f[i])
        end
        v[1] = u[1]; v[n] = u[n]
        u, v = v, u
    end
    return u
end

function nbody_energy(x, v, m)
    e = 0.0
    n = length(m)
    for i in 1:n
        e += 0.5 * m[i] * sum(abs2, view(v, :, i))
        for j in i+1:n
            d = sqrt(sum(abs2, view(x, :, i) .- view(x, :, j)))
            e -= m[i] * m[j] / d
        end
    end
    return e
end

function mandel(w, h, maxit)
    count = 0
    for j in 1:h, i in 1:w
        c = complex(-2.0 + 3.0 * i / w, -1.0 + 2.0 * j / h)
        z = 0.0im
        k = 0
        while k < maxit && abs2(z) <= 4.0
            z = z * z + c
            k += 1
        end
        count += k
    end
    return count
end

spectral_a(i, j) = 1.0 / ((i + j) * (i + j + 1) / 2 + i + 1)
function spectral_norm(n, iters)
    u = ones(n); v = zeros(n)
    for _ in 1:iters
        for i in 1:n
            v[i] = sum(spectral_a(i - 1, j - 1) * u[j] for j in 1:n)
        end
        for i in 1:n
            u[i] = sum(spectral_a(j - 1, i - 1) * v[j] for j in 1:n)
        end
    end
    return sqrt(dot(u, v) / dot(v, v))
end

function histogram(xs, nb)
    h = zeros(Int, nb)
    lo, hi = extrema(xs)
    for x in xs
        b = min(nb, 1 + floor(Int, (x - lo) / (hi - lo) * nb))
        h[b] += 1
    end
    return h
end

solve_dense(A, b) = A \ b
sorted_median(xs) = (s = sort(xs); s[length(s) ÷ 2 + 1])

function main(scale::Int)
    rng = MersenneTwister(1)
    n = 40 * scale
    A = rand(rng, n, n); B = rand(rng, n, n); C = zeros(n, n)
    s = 0.0
    @phase "linear algebra" for _ in 1:4
        @site matmul!(C, A, B)
        x = @site solve_dense(A + n * I, B[:, 1])
        s += x[1] + C[1, 1]
    end
    @phase "pde" begin
        u = zeros(200 * scale); f = ones(200 * scale)
        for _ in 1:4
            u = @site jacobi!(u, f, 1e-4, 50)
        end
        s += u[2]
    end
    @phase "particles" begin
        x = rand(rng, 3, 30 * scale); v = rand(rng, 3, 30 * scale); m = rand(rng, 30 * scale)
        for _ in 1:3
            s += @site nbody_energy(x, v, m)
        end
    end
    @phase "fractal" for _ in 1:2
        s += @site mandel(60 * scale, 40 * scale, 50)
    end
    @phase "spectral" s += @site spectral_norm(30 * scale, 3)
    @phase "statistics" begin
        xs = rand(rng, 5000 * scale)
        s += sum(@site histogram(xs, 64)) + @site sorted_median(xs)
    end
    return s
end

t0 = cpu(); main(SIZE); t1 = cpu(); main(SIZE); t2 = cpu()
ir = length(code_typed(main, (Int,))[1].first.code)
out = ["load=$(T_LOADED - T_START)", "first=$(t1 - t0)", "second=$(t2 - t1)", "ir=$ir"]
if MODE == "jager" && Jager.isrecording()
    S = Jager.DispatchSensor
    c0 = cpu()
    Jager.run_hooks(Jager.STOP_HOOKS, "Jager: a stop hook failed")
    t_hooks = cpu() - c0
    empty!(Jager.STOP_HOOKS)   # ran above, timed on their own
    ccall((:jager_flush, Jager.LIB), Int32, ())
    c0 = cpu(); Jager.symbolize!(); t_sym = cpu() - c0
    c0 = cpu(); Jager.stop(); t_rest = cpu() - c0
    push!(out, "stop=$(t_hooks + t_sym + t_rest)", "stop_hooks=$t_hooks", "stop_symbolize=$t_sym", "stop_rest=$t_rest")
    if isdefined(S, :DRAIN_NS)   # the stop hook's final drain, per phase (CPU seconds)
        d = S.DRAIN_NS
        push!(out, "drain_compiles=$(d.compiles / 1e9)", "drain_verdicts=$(d.verdicts / 1e9)",
              "drain_counts=$(d.counts / 1e9)", "drain_census=$(d.census / 1e9)")
    end
end
println(join(out, " "))
