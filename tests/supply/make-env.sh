#!/usr/bin/env bash
# make-env.sh DIR JULIA — a throw-away depot and environment with generated packages and no
# registry download: Foo (a path package, `dev`'d), Bar (registered in a hand-made local
# registry, installed in the depot under its slug, tree hash from `git write-tree`).
set -euo pipefail
dir=$1 julia=$2
rm -rf "$dir"; mkdir -p "$dir/env/Foo/src" "$dir/depot" "$dir/bar-src/src"
foo_uuid=11111111-2222-3333-4444-555555555555
bar_uuid=22222222-3333-4444-5555-666666666666
reg_uuid=33333333-4444-5555-6666-777777777777
printf 'name = "Foo"\nuuid = "%s"\nversion = "0.1.0"\n' $foo_uuid > "$dir/env/Foo/Project.toml"
printf 'module Foo\nf() = 1\nend\n' > "$dir/env/Foo/src/Foo.jl"
printf 'helper() = 2\n' > "$dir/env/Foo/src/helper.jl"
printf 'name = "Bar"\nuuid = "%s"\nversion = "1.2.0"\n' $bar_uuid > "$dir/bar-src/Project.toml"
printf 'module Bar\ng() = 3\nend\n' > "$dir/bar-src/src/Bar.jl"
chmod +x "$dir/bar-src/src/Bar.jl" # an executable blob (mode 100755) in the tree hash
tree=$(cd "$dir/bar-src" && git init -q . && git add -A && git write-tree)
rm -rf "$dir/bar-src/.git"
slug=$(JULIA_DEPOT_PATH="$dir/depot" "$julia" --startup-file=no -e "using UUIDs; print(Base.version_slug(UUID(\"$bar_uuid\"), Base.SHA1(\"$tree\")))")
mkdir -p "$dir/depot/packages/Bar"
cp -a "$dir/bar-src" "$dir/depot/packages/Bar/$slug"
mkdir -p "$dir/depot/registries/Local/B/Bar"
printf 'name = "Local"\nuuid = "%s"\nrepo = ""\n\n[packages]\n%s = { name = "Bar", path = "B/Bar" }\n' $reg_uuid $bar_uuid \
  > "$dir/depot/registries/Local/Registry.toml"
printf '["1.2.0"]\ngit-tree-sha1 = "%s"\n' "$tree" > "$dir/depot/registries/Local/B/Bar/Versions.toml"
printf '[deps]\nBar = "%s"\nFoo = "%s"\n' $bar_uuid $foo_uuid > "$dir/env/Project.toml"
printf '# This file is machine-generated - editing it directly is not advised\n\n[[Bar]]\ngit-tree-sha1 = "%s"\nuuid = "%s"\nversion = "1.2.0"\n\n[[Foo]]\npath = "Foo"\nuuid = "%s"\nversion = "0.1.0"\n' \
  "$tree" $bar_uuid $foo_uuid > "$dir/env/Manifest.toml"
echo "$tree" > "$dir/bar-tree"
echo "$dir/depot/packages/Bar/$slug" > "$dir/bar-dir"
