# pic.jl — 1-D electrostatic particle-in-cell, with a dispatch bug for Jäger to find.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=pic.jgr julia --project=bindings/julia examples/pic.jl
#   jager summary pic.jgr        # both weight signatures of `scatter!` with exact counts
#   jager hunt pic.jgr           # `deposit!` flagged: runtime dispatch on `p.weight`
#
# The particles were loaded from two sources, one in single and one in double precision,
# and `Particle.weight` is declared `::AbstractFloat` so that both fit. That costs a
# run-time dispatch per particle in the charge deposition. Expected in the recording:
#   * site `scatter!` sees two signatures, `Tuple{typeof(scatter!), Vector{Float64}, Float64,
#     Float32}` and the same with `Float64`, called exactly N32 × STEPS and N64 × STEPS times;
#   * `dispatch.instability` for `deposit!(::Vector{Float64}, ::Vector{Particle})`, flag 1,
#     reason "runtime dispatch: `scatter!(…, ::AbstractFloat)` at pic.jl:<line>" — while its
#     return type, `Vector{Float64}`, is concrete;
#   * `push_particles!` and `solve_field!` (concrete types only) not flagged.
# The fix: `weight::Float64` (or a type parameter), converting single-precision weights at load.
using Jager

"A macro-particle: position in [0, L), velocity, and charge weight."
mutable struct Particle
    x::Float64
    v::Float64
    weight::AbstractFloat   # the bug: Float32 and Float64 weights behind an abstract field
end

const NG = 64             # grid cells
const LEN = 1.0           # domain length (periodic)
const DX = LEN / NG
const N32 = 600           # particles with Float32 weights
const N64 = 400           # particles with Float64 weights
const STEPS = 10
const DT = 0.05

"Cloud-in-cell: spread one particle's weight over the two nearest grid points."
function scatter!(rho::Vector{Float64}, x::Float64, w::AbstractFloat)
    s = x / DX
    i = floor(Int, s)
    f = s - i
    i1 = mod(i, NG) + 1
    i2 = mod(i + 1, NG) + 1
    rho[i1] += (1 - f) * w
    rho[i2] += f * w
    return rho
end

"Charge density of all particles: one `scatter!` per particle, dispatched on its weight."
function deposit!(rho::Vector{Float64}, ps::Vector{Particle})
    fill!(rho, 0.0)
    for p in ps
        @jäger scatter!(rho, p.x, p.weight)
    end
    return rho
end

"Electric field from the density: E' = ρ - mean(ρ), integrated on the periodic grid."
function solve_field!(E::Vector{Float64}, rho::Vector{Float64})
    mean = sum(rho) / NG
    acc = 0.0
    for i in eachindex(E, rho)
        acc += (rho[i] - mean) * DX
        E[i] = acc
    end
    return E
end

"Leapfrog push with the field at each particle's nearest grid point."
function push_particles!(xs::Vector{Float64}, vs::Vector{Float64}, E::Vector{Float64}, dt::Float64)
    for i in eachindex(xs, vs)
        g = mod(floor(Int, xs[i] / DX), NG) + 1
        vs[i] -= E[g] * dt
        xs[i] = mod(xs[i] + vs[i] * dt, LEN)
    end
    return xs
end

function load_particles()
    ps = Particle[]
    for k in 1:N32
        push!(ps, Particle((k - 0.5) / N32 * LEN, 0.01 * sin(k), Float32(1 / N32)))
    end
    for k in 1:N64
        push!(ps, Particle((k - 0.25) / N64 * LEN, -0.01 * cos(k), 1 / N64))
    end
    return ps
end

function main()
    Jager.start()
    ps = load_particles()
    xs = [p.x for p in ps]
    vs = [p.v for p in ps]
    rho = zeros(NG)
    E = zeros(NG)
    for step in 1:STEPS
        for (p, x, v) in zip(ps, xs, vs)
            p.x = x
            p.v = v
        end
        @jäger deposit!(rho, ps)
        @jäger solve_field!(E, rho)
        @jäger push_particles!(xs, vs, E, DT)
    end
    println("pic: total charge ", round(sum(rho); digits = 6), " after ", STEPS, " steps")
    Jager.stop()
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
