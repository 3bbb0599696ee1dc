# Jager.Supply — the Julia side of the supply-chain scanner (docs/supply-chain.md): the
# packages of an environment read from its Manifest through Pkg's API (so `dev`'d paths,
# private registries and any DEPOT_PATH work), the tree hash each registry in the depot
# lists for the locked version, the SHA-256 of every file of each package (SHA standard
# library, streamed) and its git tree hash as Pkg computes it. Standard library only: the
# file can be included on its own (`jager lock` runs it through supply_main.jl).
module Supply

import Pkg
import SHA
using UUIDs

export lock, verify, environment, tree_hash, read_lock, SupplyChainError

const LOCK_FORMAT = "jager.lock"
const LOCK_VERSION = 1

"""
    SupplyChainError(problems)

Thrown by `verify(...; strict=true)` when the code differs from the lock: `problems` is a
vector of `(kind, package, file, detail)` named tuples.
"""
struct SupplyChainError <: Exception
    problems::Vector{NamedTuple{(:kind, :package, :file, :detail),NTuple{4,String}}}
end
function Base.showerror(io::IO, e::SupplyChainError)
    print(io, "SupplyChainError: ", length(e.problems), " difference(s) from the lock")
    for p in e.problems
        print(io, "\n  ", p.kind, "  ", p.package, "  ", p.file, "  ", p.detail)
    end
end

"Git tree hash (hex) of `dir`, computed by Pkg itself (`Pkg.GitTools.tree_hash`)."
tree_hash(dir::AbstractString) = bytes2hex(Pkg.GitTools.tree_hash(dir))

function sha256_file(path)
    open(path, "r") do io
        bytes2hex(SHA.sha256(io))   # streamed in blocks by SHA.jl
    end
end

# Does a symlink at `rel` (relative to the package root) pointing at `target` stay inside?
function link_inside(root, rel, target)
    if isabspath(target)
        r = realpath(root)
        t = normpath(target)
        return t == r || startswith(t, r * "/")
    end
    depth = count(==('/'), rel)
    for part in split(target, '/')
        if part == ".."
            depth -= 1
            depth < 0 && return false
        elseif part != "" && part != "."
            depth += 1
        end
    end
    return true
end

"""
    package_files(root; package, problems) -> Dict{String,String}

SHA-256 of every file under `root` (relative paths; symlinks never followed, recorded as
"symlink:TARGET"; ".git" skipped). Escaping symlinks, unreadable files and files that
change while hashed are pushed onto `problems`.
"""
function package_files(root::AbstractString; package::AbstractString="", problems=[])
    files = Dict{String,String}()
    regular = Tuple{String,String,Base.Filesystem.StatStruct}[] # hashed below, on every thread
    function walk(rel)
        dir = rel == "" ? root : joinpath(root, rel)
        names = try
            readdir(dir)
        catch e
            push!(problems, (kind="unreadable", package=String(package), file=rel, detail=sprint(showerror, e)))
            return
        end
        for nm in names
            nm == ".git" && continue
            sub = rel == "" ? nm : rel * "/" * nm
            full = joinpath(root, sub)
            st = lstat(full)
            if islink(st)
                t = readlink(full)
                files[sub] = "symlink:" * t
                link_inside(root, sub, t) || push!(problems, (kind="symlink-escape", package=String(package), file=sub,
                                                              detail="points outside the package: $t (not followed)"))
            elseif isdir(st)
                walk(sub)
            elseif isfile(st)
                push!(regular, (sub, full, st))
            end
        end
    end
    walk("")
    hashes = Vector{Any}(undef, length(regular))
    Threads.@threads for i in eachindex(regular)
        hashes[i] = try
            sha256_file(regular[i][2])
        catch e
            e
        end
    end
    for (i, (sub, full, st)) in enumerate(regular)
        h = hashes[i]
        if h isa Exception
            push!(problems, (kind="unreadable", package=String(package), file=sub, detail=sprint(showerror, h)))
            continue
        end
        st2 = lstat(full)
        (st2.size != st.size || st2.mtime != st.mtime || st2.ctime != st.ctime || st2.inode != st.inode) &&
            push!(problems, (kind="changed-while-hashed", package=String(package), file=sub,
                             detail="the file changed while it was hashed"))
        files[sub] = h
    end
    return files
end

# The registries of the depot: (name, uuid, path) of each with a Registry.toml.
function registries()
    regs = Tuple{String,String,String}[]
    for d in DEPOT_PATH
        rd = joinpath(d, "registries")
        isdir(rd) || continue
        for r in readdir(rd)
            f = joinpath(rd, r, "Registry.toml")
            isfile(f) || continue
            t = Pkg.TOML.parsefile(f)
            push!(regs, (get(t, "name", r), get(t, "uuid", ""), joinpath(rd, r)))
        end
    end
    return regs
end

# The tree hash a registry lists for (uuid, version), or nothing.
function registry_entry(regs, uuid::UUID, version)
    version === nothing && return nothing
    for (name, ruuid, path) in regs
        t = Pkg.TOML.parsefile(joinpath(path, "Registry.toml"))
        pk = get(get(t, "packages", Dict()), string(uuid), nothing)
        pk === nothing && continue
        vf = joinpath(path, pk["path"], "Versions.toml")
        isfile(vf) || continue
        v = get(Pkg.TOML.parsefile(vf), string(version), nothing)
        v === nothing && continue
        return Dict("name" => name, "uuid" => ruuid, "tree_hash" => get(v, "git-tree-sha1", ""))
    end
    return nothing
end

function source_dir(ctx, uuid, e)
    Pkg.Types.is_stdlib(uuid) && return Pkg.Types.stdlib_path(e.name)
    e.path !== nothing && return normpath(joinpath(dirname(ctx.env.project_file), e.path))
    e.tree_hash !== nothing && return Pkg.Operations.find_installed(e.name, uuid, e.tree_hash)
    return ""
end

"""
    environment(project=dirname(Base.active_project()); files=true) -> Dict

The lock's "julia" object for the environment at `project`: Julia's version and stdlib
folder, and per package of its Manifest name, UUID, version, source folder, the
Manifest's git-tree-sha1, the registry entry for that version, the recomputed tree hash
and (with `files`) the SHA-256 of every file. Problems met on the way are returned second.
"""
function environment(project::AbstractString=dirname(Base.active_project()); files::Bool=true)
    projfile = isdir(project) ? joinpath(abspath(project), "Project.toml") : abspath(project)
    ctx = Pkg.Types.Context(env=Pkg.Types.EnvCache(projfile))
    regs = registries()
    problems = []
    pkgs = Dict{String,Any}[]
    for (uuid, e) in ctx.env.manifest
        src = source_dir(ctx, uuid, e)
        src = src === nothing ? "" : String(src)
        p = Dict{String,Any}("name" => e.name, "uuid" => string(uuid),
                             "version" => e.version === nothing ? "" : string(e.version),
                             "source" => isdir(src) ? src : "",
                             "git_tree_sha1" => e.tree_hash === nothing ? "" : string(e.tree_hash),
                             "stdlib" => Pkg.Types.is_stdlib(uuid))
        reg = e.tree_hash === nothing ? nothing : registry_entry(regs, uuid, e.version)
        reg === nothing || (p["registry"] = reg)
        if isdir(src) && files
            p["files"] = package_files(src; package=e.name, problems=problems)
            p["tree_hash"] = tree_hash(src)
        end
        push!(pkgs, p)
    end
    sort!(pkgs, by = p -> (p["name"], p["uuid"]))
    jl = Dict{String,Any}("version" => string(VERSION), "stdlib" => Sys.STDLIB,
                          "project" => dirname(projfile), "manifest" => ctx.env.manifest_file,
                          "packages" => pkgs)
    return jl, problems
end

# ---- JSON out (keys sorted, two-space indent: the format of docs/supply-chain.md) ----
function json_str(io, s::AbstractString)
    print(io, '"')
    for c in s
        if c == '"' || c == '\\'
            print(io, '\\', c)
        elseif c < ' ' || c == '\x7f'
            print(io, "\\u", string(UInt32(c), base=16, pad=4))
        elseif UInt32(c) > 0x7f
            for u in transcode(UInt16, string(c))
                print(io, "\\u", string(u, base=16, pad=4))
            end
        else
            print(io, c)
        end
    end
    print(io, '"')
end
function json_out(io, x, ind=0)
    pad = "  "^(ind + 1)
    if x isa AbstractDict
        isempty(x) && return print(io, "{}")
        println(io, "{")
        ks = sort!(collect(keys(x)))
        for (i, k) in enumerate(ks)
            print(io, pad); json_str(io, string(k)); print(io, ": ")
            json_out(io, x[k], ind + 1)
            println(io, i < length(ks) ? "," : "")
        end
        print(io, "  "^ind, "}")
    elseif x isa AbstractVector
        isempty(x) && return print(io, "[]")
        println(io, "[")
        for (i, v) in enumerate(x)
            print(io, pad); json_out(io, v, ind + 1)
            println(io, i < length(x) ? "," : "")
        end
        print(io, "  "^ind, "]")
    elseif x isa Bool
        print(io, x ? "true" : "false")
    elseif x isa Integer
        print(io, x)
    elseif x === nothing
        print(io, "null")
    else
        json_str(io, string(x))
    end
end


# ---- JSON in: a small strict reader for lock files (Julia 1.5 has no JSON standard library) ----
struct LockFormatError <: Exception
    msg::String
end
Base.showerror(io::IO, e::LockFormatError) = print(io, "LockFormatError: ", e.msg)

mutable struct JReader
    s::Vector{UInt8}
    i::Int
end
function jerr(r::JReader, what)
    line = count(==(UInt8('\n')), view(r.s, 1:min(r.i, length(r.s)) - 1)) + 1
    throw(LockFormatError("malformed or truncated lock file: $what (byte $(r.i), line $line)"))
end
function jskip(r::JReader)
    while r.i <= length(r.s) && r.s[r.i] in (0x20, 0x09, 0x0a, 0x0d)
        r.i += 1
    end
end
function jpeek(r::JReader)
    jskip(r)
    r.i <= length(r.s) || jerr(r, "unexpected end of input")
    return r.s[r.i]
end
function jexpect(r::JReader, c::UInt8)
    jpeek(r) == c || jerr(r, "expected '$(Char(c))'")
    r.i += 1
end
function jstring(r::JReader)
    jexpect(r, UInt8('"'))
    io = IOBuffer()
    while true
        r.i <= length(r.s) || jerr(r, "unterminated string")
        c = r.s[r.i]; r.i += 1
        if c == UInt8('"')
            break
        elseif c == UInt8('\\')
            r.i <= length(r.s) || jerr(r, "unterminated string")
            e = r.s[r.i]; r.i += 1
            if e == UInt8('u')
                r.i + 3 <= length(r.s) || jerr(r, "short \\u escape")
                u = parse(UInt16, String(r.s[r.i:r.i+3]); base=16); r.i += 4
                if 0xd800 <= u <= 0xdbff && r.i + 5 <= length(r.s) && r.s[r.i] == UInt8('\\') && r.s[r.i+1] == UInt8('u')
                    lo = parse(UInt16, String(r.s[r.i+2:r.i+5]); base=16); r.i += 6
                    print(io, transcode(String, UInt16[u, lo]))
                else
                    print(io, Char(u))
                end
            else
                m = Dict(UInt8('"') => '"', UInt8('\\') => '\\', UInt8('/') => '/', UInt8('b') => '\b',
                         UInt8('f') => '\f', UInt8('n') => '\n', UInt8('r') => '\r', UInt8('t') => '\t')
                haskey(m, e) || jerr(r, "bad escape")
                print(io, m[e])
            end
        else
            write(io, c)
        end
    end
    return String(take!(io))
end
function jvalue(r::JReader)
    c = jpeek(r)
    if c == UInt8('{')
        r.i += 1
        d = Dict{String,Any}()
        jpeek(r) == UInt8('}') && (r.i += 1; return d)
        while true
            k = jstring(r)
            jexpect(r, UInt8(':'))
            haskey(d, k) && jerr(r, "duplicate key \"$k\"")
            d[k] = jvalue(r)
            c = jpeek(r); r.i += 1
            c == UInt8('}') && return d
            c == UInt8(',') || jerr(r, "expected ',' or '}'")
        end
    elseif c == UInt8('[')
        r.i += 1
        v = Any[]
        jpeek(r) == UInt8(']') && (r.i += 1; return v)
        while true
            push!(v, jvalue(r))
            c = jpeek(r); r.i += 1
            c == UInt8(']') && return v
            c == UInt8(',') || jerr(r, "expected ',' or ']'")
        end
    elseif c == UInt8('"')
        return jstring(r)
    else
        j = r.i
        while r.i <= length(r.s) && !(r.s[r.i] in b",]} \t\r\n")
            r.i += 1
        end
        tok = String(r.s[j:r.i-1])
        tok == "true" && return true
        tok == "false" && return false
        tok == "null" && return nothing
        n = tryparse(Int64, tok)
        n === nothing && (n = tryparse(Float64, tok))
        n === nothing && (r.i = j; jerr(r, "unexpected token"))
        return n
    end
end

"""
    read_lock(path) -> Dict

Read and check a lock file. Throws a `LockFormatError` with a clear message for a
malformed or truncated file, another format or a newer version.
"""
function read_lock(path::AbstractString)
    r = JReader(read(path), 1)
    doc = jvalue(r)
    jskip(r)
    r.i <= length(r.s) && jerr(r, "trailing data")
    doc isa Dict || throw(LockFormatError("$path: not a lock file: the top level is not a JSON object"))
    get(doc, "format", nothing) == LOCK_FORMAT || throw(LockFormatError("$path: not a lock file: \"format\" is not \"$LOCK_FORMAT\""))
    v = get(doc, "version", nothing)
    v isa Int64 && v >= 1 || throw(LockFormatError("$path: lock file without a valid \"version\""))
    v > LOCK_VERSION && throw(LockFormatError("$path: lock file version $v is newer than this Jager reads ($LOCK_VERSION): upgrade Jager"))
    jl = get(doc, "julia", nothing)
    if jl !== nothing
        jl isa Dict && get(jl, "packages", nothing) isa Vector ||
            throw(LockFormatError("$path: julia.packages is not an array"))
        for p in jl["packages"]
            p isa Dict && get(p, "name", nothing) isa String && get(p, "uuid", nothing) isa String ||
                throw(LockFormatError("$path: a package needs string fields \"name\" and \"uuid\""))
        end
    end
    return doc
end

const Problem = NamedTuple{(:kind, :package, :file, :detail),NTuple{4,String}}
problem(kind, package, file, detail) = (kind=String(kind), package=String(package), file=String(file), detail=String(detail))
sget(d, k) = (v = get(d, k, ""); v isa String ? v : "")

# The UUIDs verify never calls "loaded but not locked": Jäger's own binding.
const SELF_UUIDS = Set(["8bb98aa5-e333-4ae7-8a1b-a549fadd33b9"])

"""
    verify(lockfile=ENV["JAGER_LOCK"]; project=nothing, strict=false, loaded=true) -> Vector

Check the environment at `project` (default: the one locked) against the lock file: every
file of every package rehashed (modified, added, removed, unreadable, escaping symlinks,
files changing while hashed), version and UUID drift and packages added to or removed from
the Manifest, the tree hash recomputed as Pkg computes it against the Manifest's, the
registry's and the locked one, and (with `loaded`) packages this session has loaded that
the lock does not list. Returns the differences as `(kind, package, file, detail)` named
tuples; with `strict=true` throws a [`SupplyChainError`](@ref) listing them instead. A
malformed, truncated or newer lock file throws a `LockFormatError` (also when not strict).
"""
function verify(lockfile::AbstractString=get(ENV, "JAGER_LOCK", ""); project=nothing, strict::Bool=false,
                loaded::Bool=true)
    isempty(lockfile) && throw(ArgumentError("Jager.Supply.verify: no lock file (pass one or set JAGER_LOCK)"))
    doc = read_lock(lockfile)
    problems = Problem[]
    jl = get(doc, "julia", nothing)
    if jl !== nothing
        proj = project === nothing ? sget(jl, "project") : String(project)
        isempty(proj) && (proj = dirname(Base.active_project()))
        now, walk = environment(proj; files=true)
        for w in walk
            push!(problems, problem(w.kind, w.package, w.file, w.detail))
        end
        lv, nv = sget(jl, "version"), now["version"]
        !isempty(lv) && lv != nv && push!(problems, problem("version-drift", "julia", "", "Julia $lv locked, $nv running"))
        nowd = Dict(p["name"] => p for p in now["packages"])
        locked = Dict(p["name"] => p for p in jl["packages"])
        for name in sort!(collect(keys(locked)))
            p = locked[name]
            q = get(nowd, name, nothing)
            if q === nothing
                push!(problems, problem("removed", name, "", "locked package is not in the environment"))
                continue
            end
            sget(p, "uuid") != q["uuid"] && push!(problems, problem("uuid-drift", name, "", "UUID $(sget(p, "uuid")) locked, $(q["uuid"]) in the Manifest"))
            sget(p, "version") != q["version"] && push!(problems, problem("version-drift", name, "", "version $(sget(p, "version")) locked, $(q["version"]) in the Manifest"))
            sget(p, "git_tree_sha1") != q["git_tree_sha1"] && push!(problems, problem("version-drift", name, "", "git-tree-sha1 $(sget(p, "git_tree_sha1")) locked, $(q["git_tree_sha1"]) in the Manifest"))
            sget(p, "source") != q["source"] && push!(problems, problem("source-moved", name, "", "source $(sget(p, "source")) locked, $(q["source"]) now"))
            want = get(p, "files", nothing)
            got = get(q, "files", nothing)
            if want isa Dict && got isa Dict
                for f in sort!(collect(keys(want)))
                    g = get(got, f, nothing)
                    g === nothing && (push!(problems, problem("removed", name, f, "locked file is missing")); continue)
                    g != want[f] && push!(problems, problem("modified", name, f, "$(first(string(want[f]), 24))… locked, $(first(g, 24))… found"))
                end
                for f in sort!(collect(keys(got)))
                    haskey(want, f) || push!(problems, problem("added", name, f, "file not in the lock"))
                end
            end
            th = get(q, "tree_hash", "")
            if !isempty(th)
                lt, mt = sget(p, "tree_hash"), sget(p, "git_tree_sha1")
                reg = get(p, "registry", nothing)
                rt = reg isa Dict ? sget(reg, "tree_hash") : ""
                !isempty(lt) && lt != th && push!(problems, problem("tree-hash", name, "", "git tree hash $th, $lt locked"))
                !isempty(mt) && mt != th && push!(problems, problem("tree-hash", name, "", "git tree hash $th, the Manifest says $mt"))
                !isempty(rt) && rt != th && push!(problems, problem("tree-hash-registry", name, "", "git tree hash $th, registry $(sget(reg, "name")) lists $rt"))
            end
        end
        for name in sort!(collect(keys(nowd)))
            haskey(locked, name) || push!(problems, problem("not-locked", name, "", "package in the environment but not in the lock ($(nowd[name]["uuid"]))"))
        end
        if loaded
            lu = Set(sget(p, "uuid") for p in jl["packages"])
            for id in sort!(collect(keys(Base.loaded_modules)), by = id -> id.name)
                id.uuid === nothing && continue
                u = string(id.uuid)
                (u in lu || u in SELF_UUIDS || Pkg.Types.is_stdlib(id.uuid)) && continue
                push!(problems, problem("loaded-not-locked", id.name, "", "loaded in this session but not in the lock ($u)"))
            end
        end
    end
    strict && !isempty(problems) && throw(SupplyChainError(problems))
    return problems
end

"""
    lock(project=dirname(Base.active_project()); output="jager.lock") -> output

Write the lock file of the environment at `project` (docs/supply-chain.md). Problems
met while hashing (escaping symlinks, unreadable files) are printed as warnings.
"""
function lock(project::AbstractString=dirname(Base.active_project()); output::AbstractString="jager.lock",
              files::Bool=true)
    jl, problems = environment(project; files=files)
    for p in problems
        @warn "supply chain: $(p.kind): $(p.package) $(p.file): $(p.detail)"
    end
    doc = Dict{String,Any}("format" => LOCK_FORMAT, "version" => LOCK_VERSION,
                           "created_by" => "Jager.Supply (Julia $(VERSION))", "julia" => jl)
    tmp = output * ".tmp"
    open(tmp, "w") do io
        json_out(io, doc)
        println(io)
    end
    mv(tmp, output; force=true)
    return output
end

end # module
