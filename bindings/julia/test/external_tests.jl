# A recording started outside Julia (libjager preloaded, configured by JAGER_* variables):
# `using Jager` attaches to it, @jäger sites record into it, and the Julia side (stop
# hooks, symbols) is finished at exit, before the core closes the file.

@testset "attach to a preloaded libjager" begin
    path = joinpath(TMP, "preloaded.jgr")
    script = """
    using Jager
    f(x) = @jäger sin(x)
    for i in 1:3
        f(1.0)
    end
    print(Jager.isrecording(), ";", Jager.libpath() == ENV["LD_PRELOAD"])
    """
    julia = joinpath(Sys.BINDIR, Base.julia_exename())
    env = merge(Dict(k => v for (k, v) in ENV if !startswith(k, "JAGER_")),
                Dict("LD_PRELOAD" => Jager.libpath(), "JAGER_OUTPUT" => path, "JAGER_QUIET" => "1"))
    out = read(setenv(`$julia --startup-file=no --project=$PKGDIR -e $script`, env), String)
    @test out == "true;true"
    rec = JgrReader.read(path)
    @test rec.clean_end
    id = site_id(rec, "sin")
    @test length(spans(rec, id)) == 3
    @test rec.meta["julia.site.$id.module"] == "Main"
end
