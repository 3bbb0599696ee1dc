# supply_run.jl — JAGER_LOCK at Jager.start (and so at `using Jager` when JAGER_OUTPUT or
# JAGER_PLUGINS start a recording): the environment checked against the lock file by
# Jager.Supply.verify (docs/supply-chain.md). Not strict: on a task of its own once
# recording is on, each difference a log event (severity error, security=true,
# supply.kind/package/file/detail); stop() waits for it. JAGER_STRICT=1: checked before
# recording, a SupplyChainError thrown and nothing recorded; JAGER_STRICT=abort: the
# process exits (status 78) with the table on stderr.

const SupplyChainError = Supply.SupplyChainError
const SUPPLY_TASK = Ref{Union{Nothing,Task}}(nothing)
const SUPPLY_EXIT = 78

function supply_strict_mode()
    s = lowercase(get(ENV, "JAGER_STRICT", ""))
    s in ("", "0", "false") && return 0
    return s == "abort" ? 2 : 1
end

# verify, with an unusable lock turned into one problem (it must never pass silently).
function supply_check(lockfile)
    try
        return Supply.verify(lockfile)
    catch e
        e isa InterruptException && rethrow()
        return [Supply.problem("lock-unreadable", "(lock)", lockfile, sprint(showerror, e))]
    end
end

function supply_log(problems)
    for p in problems
        body = cstr("supply chain: $(p.kind): $(p.package)$(isempty(p.file) ? "" : " " * p.file): $(p.detail)")
        keep = String[]
        attrs = [attr_of(pointer(cstr_keep!(keep, "security")), true, keep),
                 attr_of(pointer(cstr_keep!(keep, "supply.kind")), p.kind, keep),
                 attr_of(pointer(cstr_keep!(keep, "supply.package")), p.package, keep),
                 attr_of(pointer(cstr_keep!(keep, "supply.file")), p.file, keep),
                 attr_of(pointer(cstr_keep!(keep, "supply.detail")), p.detail, keep)]
        GC.@preserve body keep attrs begin
            ccall((:jager_log, LIB), Cvoid, (Cint, Ptr{UInt8}, Ptr{JagerAttr}, Csize_t), Int32(17), pointer(body),
                  attrs, length(attrs))
        end
    end
end
cstr_keep!(keep, s) = (c = cstr(s); push!(keep, c); c)

# Before jager_init: strict mode decides here (throws, or exits).
# The check itself runs through invokelatest: inference of `start` then stops here, and
# a recording without JAGER_LOCK never infers the lock-file code (1.2 s on Julia 1.5, the
# larger part of `using Jager` with JAGER_OUTPUT set; issue 9 item 10).
function supply_before_start()
    lockfile = get(ENV, "JAGER_LOCK", "")
    (isempty(lockfile) || supply_strict_mode() == 0) && return
    Base.invokelatest(supply_strict!, lockfile)
    return
end

function supply_strict!(lockfile::String)
    problems = supply_check(lockfile)
    isempty(problems) && return
    err = SupplyChainError(problems)
    if supply_strict_mode() == 2
        println(stderr, "jager: supply chain: ", sprint(showerror, err))
        println(stderr, "jager: supply chain: JAGER_STRICT=abort: exiting before the program runs (status $SUPPLY_EXIT)")
        flush(stderr)
        ccall(:_exit, Cvoid, (Cint,), SUPPLY_EXIT)
    end
    throw(err)
end

# Once recording is on, not strict: the check on a task of its own (another thread when
# Julia has more than one).
function supply_after_start()
    lockfile = get(ENV, "JAGER_LOCK", "")
    (isempty(lockfile) || supply_strict_mode() != 0) && return
    SUPPLY_TASK[] = Threads.@spawn begin
        try
            supply_log(supply_check(lockfile))
        catch e
            report_error_latest("Jager: the supply-chain check failed", nothing, e, catch_backtrace())
        end
    end
    return
end

# At stop, while recording: the check's events must be in the file.
function supply_wait()
    t = SUPPLY_TASK[]
    t === nothing && return
    SUPPLY_TASK[] = nothing
    wait(t)
    return
end
