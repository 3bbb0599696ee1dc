# dispatch_lines.jl — where a dynamic call is reported, and what fix it gets.
#
# Expected findings (dispatch plugin):
#  - `type_instability` in `damped!`: `DAMP` is a non-constant global read inside an
#    `@simd` loop. Inlining the three-factor `*` reads it in a statement of its own
#    (`%74 = Main.DAMP`, then `%75 = %74 * %64`: the call has no global among its arguments),
#    so the fix is "make the global const", and the location is the statement's line (23),
#    not the `@simd for` header's (21) — Julia's line table holds both, the statement's
#    one level in, as a macro expansion in this file.
#  - `type_instability` in `picked`: `pick(Val(k % 50), t)` (line 38) is the source of the
#    dispatch; its result, carried round the loop in `t`, makes the comparison at line 35
#    dynamic too, which comes first in code order. The reported statement is line 38.
#
#   JAGER_PLUGINS=dispatch JAGER_OUTPUT=dl.jgr julia --project=bindings/julia examples/julia/dispatch_lines.jl
using Jager

DAMP = 1.0

function damped!(U, B)
    for j in axes(U, 2)
        @simd for i in axes(U, 1)
            @inbounds begin
                U[i, j] += DAMP * B[i, j] * 0.5f0
            end
        end
    end
    return U
end

pick(::Val{N}, x) where {N} = x * N

function picked(n)
    t = 1.0
    for k in 1:n
        if t < 3.0
            t += 0.5
        end
        t = pick(Val(k % 50), t) / (k % 50 == 0 ? 1 : k % 50)
    end
    return t
end

function main()
    U = zeros(Float32, 256, 256)
    B = ones(Float32, 256, 256)
    for _ in 1:5
        @jäger damped!(U, B)
        @jäger picked(2000)
    end
end

abspath(PROGRAM_FILE) == (@__FILE__) && main()
