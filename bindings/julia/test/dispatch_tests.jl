# dispatch_tests.jl — the dispatch sensor + plugin end to end on Julia: every assertion on
# the recording reads the .jgr file back (JgrReader, reader.jl, decodes the plugin's events
# by their schema). Subjects are the example programs (examples/pic.jl, examples/julia/*.jl),
# each included into its own module; their `main` does not run when included.

using .JgrReader: plugin_events, of_type

const REPO = normpath(joinpath(@__DIR__, "..", "..", ".."))
module PicEx
include(joinpath(Main.REPO, "examples", "pic.jl"))
end
module AccEx
include(joinpath(Main.REPO, "examples", "julia", "unstable_accumulator.jl"))
end
module FieldEx
include(joinpath(Main.REPO, "examples", "julia", "abstract_field_loop.jl"))
end
module GlobalEx
include(joinpath(Main.REPO, "examples", "julia", "nonconst_global.jl"))
end
module ValEx
include(joinpath(Main.REPO, "examples", "julia", "val_specializations.jl"))
end
module CleanEx
include(joinpath(Main.REPO, "examples", "julia", "clean_kernels.jl"))
end
module NestEx
include(joinpath(Main.REPO, "examples", "julia", "nested_sites.jl"))
end
module ErrEx
include(joinpath(Main.REPO, "examples", "julia", "error_path.jl"))
end
module MapEx   # a program function reached only through Base's map and sum
scale = 2.0
h(x) = scale * x
mapped(xs) = map(h, xs)
summed(xs) = sum(h, xs)
end
module VinEx
include(joinpath(Main.REPO, "examples", "julia", "val_inside.jl"))
end
module LinesEx
include(joinpath(Main.REPO, "examples", "julia", "dispatch_lines.jl"))
end

# The plugin folder of the build libjager came from (build/lib → build/plugins).
function dispatch_plugin_dir()
    lib = Jager.libpath()
    dir = normpath(joinpath(dirname(lib), "..", "plugins"))
    return isfile(joinpath(dir, "libjager-dispatch.so")) ? dir : nothing
end

"Record `f()` with the dispatch plugin; return the file's dispatch events and sites."
function dispatch_recorded(f, name::AbstractString)
    path = joinpath(TMP, name * ".jgr")
    dir = dispatch_plugin_dir()
    kw = dir === nothing ? (;) : (plugin_path = dir,)
    Jager.record(f; output = path, env = false, quiet = true, plugins = "dispatch", kw...)
    rec = JgrReader.read(path)
    return plugin_events(rec), rec
end

thread_kernel(x) = x + 1
sum_all(x) = sum(x)
thread_val(::Val{N}) where {N} = N + 1

finals(evs, type) = [e for e in of_type(evs, type) if get(e.fields, "final", false) === true]
# Instability events of function `name` (signatures print as `Tuple{typeof(Main.M.name), …}`).
unstable_for(evs, name) = [e for e in of_type(evs, "dispatch.instability") if occursin("." * name * ")", e.fields["signature"])]

@testset "dispatch sensor" begin
    @test dispatch_plugin_dir() !== nothing

    @testset "mixed weights: two signatures with exact counts; deposit! unstable" begin
        ps = PicEx.load_particles()
        rho = zeros(PicEx.NG)
        evs, rec = dispatch_recorded("dispatch_pic") do
            @test Jager.DispatchSensor.SENSOR.active
            for _ in 1:3
                @jäger PicEx.deposit!(rho, ps)
            end
        end
        sigs = [e for e in finals(evs, "dispatch.signature") if occursin("scatter!", e.fields["signature"])]
        @test length(sigs) == 2
        bytype = Dict((endswith(e.fields["signature"], "Float32}") ? Float32 : Float64) => e for e in sigs)
        @test bytype[Float32].fields["calls"] == PicEx.N32 * 3
        @test bytype[Float64].fields["calls"] == PicEx.N64 * 3
        @test bytype[Float32].fields["site"] == bytype[Float64].fields["site"]
        @test rec.sites[bytype[Float32].fields["site"]].name == "scatter!"
        @test all(e.fields["distinct"] == 2 for e in sigs)
        # First sights: one each, calls 0.
        firsts = [e for e in of_type(evs, "dispatch.signature") if !e.fields["final"] && occursin("scatter!", e.fields["signature"])]
        @test length(firsts) == 2
        @test all(e.fields["calls"] == 0 for e in firsts)

        u = unstable_for(evs, "deposit!")
        @test length(u) == 1
        @test u[1].fields["flags"] & 1 == 1                # runtime dispatch
        @test u[1].fields["flags"] & 8 == 0                # …while the return type is concrete
        @test occursin("runtime dispatch: `scatter!(", u[1].fields["reason"])
        @test occursin("::AbstractFloat)`", u[1].fields["reason"])
        @test occursin(r"at pic\.jl:\d+$", u[1].fields["reason"])
        @test startswith(u[1].fields["chain"], "deposit!(")
        @test isempty(unstable_for(evs, "scatter!"))      # each scatter! signature is concrete and clean

        s = only(of_type(evs, "dispatch.summary")).fields
        @test s["unstable"] == 1
        @test s["polymorphic_sites"] == 1
        @test s["rejected"] == 0
    end

    @testset "instability: flagged and not flagged" begin
        xs = rand(1000); y = zeros(1000)
        n = 200
        bs = [FieldEx.Body(isodd(i) ? 1.0 : 2, i / n) for i in 1:n]
        ts = [FieldEx.TypedBody(1.0, i / n) for i in 1:n]
        out = zeros(n)
        d = Dict(i => Float64(i) for i in 1:50)
        evs, _ = dispatch_recorded("dispatch_stability") do
            @jäger AccEx.unstable_sum(xs)
            @jäger AccEx.stable_sum(xs)
            @jäger FieldEx.moments!(out, bs)
            @jäger FieldEx.moments_typed!(out, ts)
            @jäger GlobalEx.scaled_sum(xs)
            @jäger GlobalEx.scaled_sum_arg(xs, 2.0)
            @jäger CleanEx.axpy!(2.0, xs, y)
            @jäger CleanEx.triangle_sum(10)
            @jäger CleanEx.weighted_index_sum(xs)
            @jäger CleanEx.dict_dot(d)
        end
        acc = unstable_for(evs, "unstable_sum")
        @test length(acc) == 1
        @test acc[1].fields["flags"] & 2 == 2              # Union{Float64, Int64} accumulator
        @test occursin("Union{Float64, Int64}", acc[1].fields["reason"])
        @test occursin("unstable_accumulator.jl:", acc[1].fields["reason"])

        fld = unstable_for(evs, "moments!")
        @test length(fld) == 1
        @test fld[1].fields["flags"] == 1                  # dispatch only: the return type is concrete
        @test occursin("`*(::Real, ::Float64)`", fld[1].fields["reason"])
        @test occursin("abstract_field_loop.jl:", fld[1].fields["reason"])

        glb = unstable_for(evs, "scaled_sum")
        @test length(glb) == 1
        @test glb[1].fields["flags"] & 1 == 1
        @test occursin("non-constant global scale", glb[1].fields["reason"])

        for clean in ("stable_sum", "moments_typed!", "scaled_sum_arg", "axpy!", "triangle_sum",
                      "weighted_index_sum", "dict_dot")
            @test isempty(unstable_for(evs, clean))
        end
        @test length(of_type(evs, "dispatch.instability")) == 3
    end

    @testset "the reported statement: the global, its line in @simd, the source (issue 9)" begin
        # `DAMP * B[i, j] * 0.5f0` reads the global in a statement of its own; the call is
        # in an @simd loop whose header is line 21, the statement line 23.
        v = Jager.stability(LinesEx.damped!, Tuple{Matrix{Float32},Matrix{Float32}})
        @test v !== nothing && v.flags & 1 == 1
        @test occursin("(non-constant global DAMP)", v.reason)
        @test endswith(v.reason, "at dispatch_lines.jl:23")
        # pick(Val(k % 50), t) at line 38 is the source; `t < 3.0` at line 35 only sees its
        # result carried round the loop.
        v = Jager.stability(LinesEx.picked, Tuple{Int})
        @test v !== nothing && v.flags & 1 == 1
        @test occursin("runtime dispatch: `pick(", v.reason)
        @test endswith(v.reason, "at dispatch_lines.jl:38")
        # A split union alone keeps flag 2 without flag 1: the hunt makes it a note.
        @test Jager.stability(AccEx.unstable_sum, Tuple{Vector{Float64}}).flags & 3 == 2
    end

    @testset "the iteration protocol's Union{Nothing,Tuple} is not an instability" begin
        filt(v) = (s = 0.0; for x in Iterators.filter(>(0.5), v); s += x; end; s)
        lines(io) = (n = 0; for l in eachline(io); n += length(l); end; n)
        v = Jager.stability(filt, Tuple{Vector{Float64}})
        @test v !== nothing && v.flags & 7 == 0
        v = Jager.stability(lines, Tuple{IOBuffer})
        @test v !== nothing && v.flags & 2 == 0
        @test Jager.DispatchSensor.is_bad_union(Union{Nothing,Tuple{Float64,Int}}) == false
        @test Jager.DispatchSensor.is_bad_union(Union{Float64,Int}) == true
    end

    @testset "Val{N} over 300 values: ≥ 300 specializations" begin
        evs, _ = dispatch_recorded("dispatch_val") do
            Jager.watch(ValEx.hk)
            @jäger ValEx.sum_vals(300)
        end
        @test Jager.specializations(ValEx.hk) >= 300
        hk = [e for e in finals(evs, "dispatch.specializations") if startswith(e.fields["method"], "hk(")]
        @test length(hk) == 1
        @test hk[1].fields["count"] >= 300
        @test endswith(hk[1].fields["file"], "val_specializations.jl")
        @test hk[1].fields["line"] > 0
        u = unstable_for(evs, "sum_vals")
        @test length(u) == 1 && u[1].fields["flags"] & 1 == 1
        # 300 specializations compiled during the recording: ≥ 300 compile events of hk.
        @test count(e -> occursin("ValEx.hk), Base.Val{", e.fields["signature"]) && e.fields["duration_ns"] > 0,
                    of_type(evs, "dispatch.compile")) >= 300
    end

    @testset "compile events: first call yes, second call no" begin
        name = Symbol("jager_fresh_", rand(UInt32))
        fresh = Core.eval(Main, :($name(x) = x * 3 + 1))
        sig = "Tuple{typeof(Main.$name), Float64}"
        local t_mid
        evs, _ = dispatch_recorded("dispatch_compile") do
            @test Base.invokelatest(fresh, 1.5) == 5.5
            Jager.dispatch_drain()
            t_mid = time_ns()
            @test Base.invokelatest(fresh, 2.5) == 8.5
        end
        c = [e for e in of_type(evs, "dispatch.compile") if e.fields["signature"] == sig]
        @test length(c) == 1
        @test c[1].fields["duration_ns"] > 0
        @test c[1].fields["inference_ns"] > 0
        @test 0 < c[1].time_ns < t_mid
        # The sensor's own first-use compilation is not reported as the program's.
        @test !any(e -> occursin("DispatchSensor", e.fields["signature"]), of_type(evs, "dispatch.compile"))
        s = only(of_type(evs, "dispatch.summary")).fields
        @test s["compiles"] == length(of_type(evs, "dispatch.compile"))
    end

    @testset "threads: concurrent new signatures, exact counts" begin
        nt = Threads.nthreads()
        evs, rec = dispatch_recorded("dispatch_threads") do
            Threads.@threads for i in 1:1000
                @jäger thread_kernel(iseven(i) ? 1.0 : 1)
            end
            Threads.@threads for t in 1:8nt
                @jäger thread_val(Val(t))   # a new signature per iteration, on every thread
            end
        end
        ker = [e for e in finals(evs, "dispatch.signature") if occursin("thread_kernel", e.fields["signature"])]
        @test sort([e.fields["calls"] for e in ker]) == [500, 500]
        vals = [e for e in finals(evs, "dispatch.signature") if occursin("thread_val", e.fields["signature"])]
        @test length(vals) == 8nt
        @test all(e -> e.fields["calls"] == 1 && e.fields["distinct"] == 8nt, vals)
        @test only(of_type(evs, "dispatch.summary")).fields["rejected"] == 0
    end

    @testset "nested sites: no finding names Jäger" begin
        # A phase recorded at its call whose kernels are recorded at theirs (call form and a
        # @jäger method): before, the verdict of `phase` walked into the binding's
        # `signature_slow!` and reported "runtime dispatch `_on_new_signature(::UInt32, ::Any)`".
        evs, rec = dispatch_recorded(() -> (NestEx.main(4); NestEx.main(3)), "dispatch_nested")
        @test length(spans(rec, site_id(rec, "phase"))) == 10
        @test length(spans(rec, site_id(rec, "kernel!"))) == 35
        @test length(spans(rec, site_id(rec, "smooth!"))) == 35
        @test isempty(of_type(evs, "dispatch.instability"))
        sigs = [e.fields["signature"] for e in of_type(evs, "dispatch.signature")]
        @test any(s -> occursin("typeof(Main.NestEx.phase)", s), sigs)
        @test !any(s -> occursin("Jager", s), sigs)
        compiles = [e.fields["signature"] for e in of_type(evs, "dispatch.compile")]
        @test !any(s -> occursin("Jager", s), compiles)
        @test only(of_type(evs, "dispatch.summary")).fields["compiles"] == length(compiles)
        v = Jager.stability(NestEx.phase, Tuple{Vector{Float64},Vector{Float64},Int})
        @test v !== nothing && v.flags == 0 && v.reason == ""
        @test Jager.stability(NestEx.smooth!, Tuple{Vector{Float64}}).flags == 0
        # What the rule still sees in the program's own code next to a site.
        @test Jager.DispatchSensor.unstable(Jager.stability(AccEx.unstable_sum, Tuple{Vector{Float64}}))
        # Stack frames of the binding's files are marked for the tools (`jager_` prefix).
        own = Base.StackTraces.StackFrame(:timed_typeinf, Symbol(joinpath(Jager.OWN_SRC, "dispatch", "compile.jl")), 57)
        @test Jager.frame_func(own) == "jager_jl:timed_typeinf"
        user = Base.StackTraces.StackFrame(:phase, Symbol(joinpath(Main.REPO, "examples", "julia", "nested_sites.jl")), 28)
        @test Jager.frame_func(user) == "phase"
        @test Jager.own_signature_text("Tuple{typeof(Jager.stop)}")
        @test Jager.own_signature_text("Tuple{typeof(Base.lock), Jager.var\"#15#17\"{DataType}, Base.ReentrantLock}")
        @test !Jager.own_signature_text("Tuple{typeof(Main.MyJager.f), Int64}")
        @test !Jager.own_signature_text("Tuple{typeof(Main.NestEx.phase), Array{Float64,1}}")
    end

    @testset "error paths and library callees are not the program's" begin
        # The only dynamic calls are in messages built behind a throw (print_to_string's
        # `print(::IO, ::Any)`) — before, both were "runtime dispatch … at io.jl:135".
        @test Jager.stability(ErrEx.checked_dot, Tuple{Vector{Float64},Vector{Float64}}).flags == 0
        @test Jager.stability(ErrEx.solve_spd, Tuple{Matrix{Float64},Vector{Float64}}).flags == 0
        ci = Jager.typed_ir(Tuple{typeof(ErrEx.checked_dot),Vector{Float64},Vector{Float64}})[1]
        errs = Jager.DispatchSensor.error_paths(ci)
        @test 0 < count(errs) < length(ci.code)
        @test any(i -> errs[i] && ci.code[i] isa Expr && ci.code[i].head === :invoke, 1:length(ci.code))
        # The program's abstract types handed to Base stay the program's problem.
        @test Jager.DispatchSensor.caused_by_program(Tuple{typeof(sum),Vector{Real}})
        @test !Jager.DispatchSensor.caused_by_program(Tuple{typeof(sum),Vector{Float64}})
        @test Jager.DispatchSensor.unstable(Jager.stability(sum_all, Tuple{Vector{Real}}))
        @test !Jager.DispatchSensor.unstable(Jager.stability(sum_all, Tuple{Vector{Float64}}))
        @test Jager.DispatchSensor.library_method(first(methods(Base.print_to_string)))
        @test !Jager.DispatchSensor.library_method(first(methods(ErrEx.checked_dot)))
        # A library callee is inferred only when it can lead back to the program (a program
        # type in its signature) or the program's call is its cause: `\` on Float64 arrays is
        # not walked (it was 0.1 s of every verdict that reached it), `map(h, …)` is.
        S = Jager.DispatchSensor
        @test !S.walk_library_callee(Tuple{typeof(\),Matrix{Float64},Vector{Float64}})
        @test !S.walk_library_callee(Tuple{typeof(sort!),Vector{Float64}})
        @test S.walk_library_callee(Tuple{typeof(map),typeof(MapEx.h),Vector{Float64}})
        @test S.walk_library_callee(Tuple{typeof(sum),Base.Generator{UnitRange{Int},typeof(MapEx.h)}})
        @test S.walk_library_callee(Tuple{typeof(sum),Vector{Real}})
        # …and the program's dynamic call behind Base's map/sum is still found.
        for f in (MapEx.mapped, MapEx.summed)
            v = Jager.stability(f, Tuple{Vector{Float64}})
            @test S.unstable(v)
            @test occursin("non-constant global scale", v.reason)
            @test occursin("h(::Float64)", v.chain)
        end
    end

    @testset "census: every method of the program's modules" begin
        # vk is called inside the region only (no site, no watch): counted all the same.
        evs, rec = dispatch_recorded(() -> VinEx.main(), "dispatch_val_inside")
        specs = [e for e in of_type(evs, "dispatch.specializations") if startswith(e.fields["method"], "vk(")]
        @test !isempty(specs)
        @test maximum(e.fields["count"] for e in specs) >= 200
        @test all(e -> endswith(e.fields["file"], "val_inside.jl"), specs)
        @test !any(e -> occursin("Jager", e.fields["method"]) || occursin(" in Base", e.fields["method"]),
                   of_type(evs, "dispatch.specializations"))
    end

    @testset "inactive without the dispatch plugin" begin
        path = joinpath(TMP, "dispatch_off.jgr")
        Jager.record(output = path, env = false, quiet = true) do
            @jäger AccEx.unstable_sum(rand(10))
            @test !Jager.DispatchSensor.SENSOR.active
            @test Jager.DispatchSensor.CAPTURE.io === nothing
        end
        @test isempty(plugin_events(path))
        # And after a recording with it, everything is unhooked again.
        dispatch_recorded(() -> @jäger(AccEx.stable_sum(rand(10))), "dispatch_unhook")
        @test !Jager.DispatchSensor.SENSOR.active
        @test !Jager.DispatchSensor.CAPTURE.hooked
        @test Jager.DispatchSensor.CAPTURE.io === nothing
    end
end
