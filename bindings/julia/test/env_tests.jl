# JAGER_OUTPUT (or JAGER_PLUGINS) in the environment: `using Jager` records a script that
# never calls start(), plugins loaded, finished at exit; an explicit start() afterwards
# joins that recording (no second file, nothing of the first lost).

const ENV_SCRIPT = raw"""
using Jager
env_kernel(x) = x * 2
env_loop(n) = (s = 0; for i in 1:n; s += @jäger env_kernel(i); end; s)
print(Jager.isrecording(), ";", env_loop(10), ";")
GC.gc(true)
if length(ARGS) == 1                      # an explicit start() after the automatic one
    print(Jager.start(output = ARGS[1], env = false), ";")
    env_loop(5)
    Jager.stop()
    print(Jager.isrecording(), ";")
end
"""

function run_env_script(env::Dict, args...)
    dir = mktempdir()
    script = joinpath(dir, "app.jl")
    write(script, ENV_SCRIPT)
    julia = joinpath(Sys.BINDIR, Base.julia_exename())
    cmd = setenv(`$julia --startup-file=no --project=$PKGDIR $script $args`, env)
    return read(cmd, String)
end

@testset "JAGER_OUTPUT records without start()" begin
    base = Dict(k => v for (k, v) in ENV if !startswith(k, "JAGER_") || k in ("JAGER_LIB", "JAGER_PLUGIN_PATH"))
    base["JAGER_QUIET"] = "1"
    base["JAGER_PLUGIN_PATH"] = normpath(joinpath(dirname(Jager.libpath()), "..", "plugins"))
    out1 = joinpath(TMP, "env_auto.jgr")
    @test run_env_script(merge(base, Dict("JAGER_OUTPUT" => out1, "JAGER_PLUGINS" => "gc"))) == "true;110;"
    rec = JgrReader.read(out1)
    @test rec.clean_end                                  # finished at exit
    k = site_id(rec, "env_kernel")
    @test length(spans(rec, k)) == 10
    @test rec.stats[k].calls == 10
    requested = [e for e in JgrReader.plugin_events(rec; prefix = "gc.pause") if e.fields["requested"] == 1]
    @test length(requested) == 1                         # the gc plugin was loaded: GC.gc(true)

    # An explicit start() joins the recording the environment started.
    out2 = joinpath(TMP, "env_joined.jgr")
    other = joinpath(TMP, "env_other.jgr")
    @test run_env_script(merge(base, Dict("JAGER_OUTPUT" => out2)), other) == "true;110;true;false;"
    @test !isfile(other)
    rec2 = JgrReader.read(out2)
    @test rec2.clean_end
    @test length(spans(rec2, site_id(rec2, "env_kernel"))) == 15

    # Without either variable nothing records.
    @test run_env_script(base) == "false;110;"
end
