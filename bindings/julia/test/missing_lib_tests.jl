# Without libjager, `using Jager` works and every function says how to fix it.

function run_without_lib(pkg::AbstractString, env::Dict)
    script = """
    using Jager
    print("loaded;", Jager.available(), ";")
    f(x) = @jäger sin(x)
    print(f(0.0), ";")
    try
        Jager.start()
    catch e
        print(sprint(showerror, e))
    end
    """
    julia = joinpath(Sys.BINDIR, Base.julia_exename())
    cmd = setenv(`$julia --startup-file=no --project=$pkg -e $script`, env)
    return read(cmd, String)
end

@testset "missing libjager" begin
    base = Dict(k => v for (k, v) in ENV if k != "JAGER_LIB")
    # JAGER_LIB names a file that does not exist: no other library is tried.
    out = run_without_lib(PKGDIR, merge(base, Dict("JAGER_LIB" => "/nonexistent/libjager.so")))
    @test startswith(out, "loaded;false;0.0;")
    @test occursin(Jager.LIB_NOT_FOUND, out)
    @test occursin("JAGER_LIB=/nonexistent/libjager.so: no such file", out)
    # No JAGER_LIB and no build tree next to the package (a copy of it elsewhere).
    copy = joinpath(mktempdir(), "a", "b", "Jager")
    mkpath(dirname(copy))
    cp(PKGDIR, copy)
    out = run_without_lib(copy, base)
    @test startswith(out, "loaded;false;0.0;")
    @test occursin("Jager: libjager not found; set JAGER_LIB=/path/to/libjager.so", out)
    @test occursin("JAGER_LIB is unset; searched", out)
    # Both: a wrong JAGER_LIB and no build tree.
    out = run_without_lib(copy, merge(base, Dict("JAGER_LIB" => "/nonexistent")))
    @test startswith(out, "loaded;false;0.0;")
    @test occursin("Jager: libjager not found; set JAGER_LIB=/path/to/libjager.so (JAGER_LIB=/nonexistent: no such file)", out)
end
