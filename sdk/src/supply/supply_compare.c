/* supply_compare.c — what is there against the lock: shared objects (mapped or on disk),
 * the files and tree hash of each locked Julia package, and the environment's packages
 * (version and UUID drift, added, removed, moved). Each difference one js_problem. */
#include "supply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJECTS "(shared objects)"

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) if (!strcmp(str(o, key), value)) return o;
    return NULL;
}

void js_compare_objects(json_t *locked, json_t *mapped, int report_unlocked, unsigned threads, js_report *r)
{
    json_t *now = mapped;
    if (!now) { /* offline: rehash every locked path */
        json_t *paths = json_array();
        size_t i;
        json_t *o;
        json_array_foreach(locked, i, o) json_array_append_new(paths, json_string(str(o, "path")));
        now = js_objects_from_paths(paths, threads);
        json_decref(paths);
        if (!now) {
            r->oom = 1;
            return;
        }
    }
    size_t i;
    json_t *o;
    json_array_foreach(locked, i, o) {
        const char *path = str(o, "path");
        json_t *n = find_by(now, "path", path);
        if (!n) {
            if (!mapped) js_report_add(r, "removed", OBJECTS, path, "locked shared object is missing");
            continue;
        }
        const char *want = str(o, "sha256"), *got = str(n, "sha256");
        if (!strcmp(got, "unreadable"))
            js_report_add(r, mapped ? "unreadable" : "removed", OBJECTS, path, "locked shared object cannot be read");
        else if (strcmp(want, got))
            js_report_add(r, "modified", OBJECTS, path, "sha256 %.16s… locked, %.16s… found%s%s%s", want, got,
                          strcmp(str(o, "build_id"), str(n, "build_id")) ? " (build id " : "",
                          strcmp(str(o, "build_id"), str(n, "build_id")) ? str(n, "build_id") : "",
                          strcmp(str(o, "build_id"), str(n, "build_id")) ? ")" : "");
    }
    if (report_unlocked) {
        json_array_foreach(now, i, o) {
            if (!find_by(locked, "path", str(o, "path")))
                js_report_add(r, "added", OBJECTS, str(o, "path"), "mapped but not locked (sha256 %.16s…)", str(o, "sha256"));
        }
    }
    if (!mapped) json_decref(now);
}

/* The folder of \p unread (relative paths the walk could not open) that holds \p file, or NULL. */
static const char *unread_folder(json_t *unread, const char *file)
{
    size_t i;
    json_t *d;
    json_array_foreach(unread, i, d) {
        const char *f = json_string_value(d);
        size_t n = strlen(f);
        if (!n || (!strncmp(file, f, n) && file[n] == '/')) return f;
    }
    return NULL;
}

static void compare_files(const char *pkg, json_t *want, json_t *got, json_t *unread, js_report *r)
{
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v) {
        json_t *g = json_object_get(got, k);
        const char *dir = g ? NULL : unread_folder(unread, k);
        if (dir) js_report_add(r, "unreadable", pkg, k, "locked file not checked: the folder %s cannot be read", *dir ? dir : "(the package)");
        else if (!g) js_report_add(r, "removed", pkg, k, "locked file is missing");
        else if (!strcmp(json_string_value(g), "unreadable")) continue; /* reported by the walk */
        else if (strcmp(json_string_value(v), json_string_value(g)))
            js_report_add(r, "modified", pkg, k, "%.24s… locked, %.24s… found", json_string_value(v), json_string_value(g));
    }
    json_object_foreach(got, k, v) {
        if (!json_object_get(want, k)) js_report_add(r, "added", pkg, k, "file not in the lock (%.24s…)", json_string_value(v));
    }
}

void js_verify_packages(json_t *julia, unsigned threads, js_report *r)
{
    json_t *pk = json_object_get(julia, "packages");
    size_t i;
    json_t *p;
    json_array_foreach(pk, i, p) {
        const char *name = str(p, "name"), *src = str(p, "source");
        if (!*src) continue; /* not installed when locked */
        json_t *want = json_object_get(p, "files");
        js_report sub = {0};
        json_t *got = js_dir_files(src, name, threads, &sub);
        json_t *unread = json_array(); /* folders the walk could not open: their files are not "removed" */
        for (size_t k = 0; k < sub.n; k++) {
            js_report_add(r, sub.v[k].kind, sub.v[k].package, sub.v[k].file, "%s", sub.v[k].detail);
            if (!strcmp(sub.v[k].kind, "unreadable") && !strncmp(sub.v[k].detail, "cannot open the folder", 22))
                json_array_append_new(unread, json_string(sub.v[k].file));
        }
        if (sub.oom) r->oom = 1;
        js_report_free(&sub);
        if (!got) {
            json_decref(unread);
            continue;
        }
        if (json_is_object(want)) compare_files(name, want, got, unread, r);
        json_decref(unread);
        json_decref(got);
        const char *mtree = str(p, "git_tree_sha1");
        json_t *reg = json_object_get(p, "registry");
        const char *rtree = json_is_object(reg) ? str(reg, "tree_hash") : "", *ltree = str(p, "tree_hash");
        if (*mtree || *rtree || *ltree) {
            char hex[41];
            if (js_tree_hash(src, hex) != 0)
                js_report_add(r, "unreadable", name, "", "the tree hash of %s could not be computed", src);
            else {
                if (*ltree && strcmp(ltree, hex))
                    js_report_add(r, "tree-hash", name, "", "git tree hash %s, %s locked", hex, ltree);
                if (*mtree && strcmp(mtree, hex))
                    js_report_add(r, "tree-hash", name, "", "git tree hash %s, the Manifest says %s", hex, mtree);
                if (*rtree && strcmp(rtree, hex))
                    js_report_add(r, "tree-hash-registry", name, "", "git tree hash %s, registry %s lists %s", hex,
                                  str(reg, "name"), rtree);
            }
        }
    }
}

void js_compare_environment(json_t *locked, json_t *now, js_report *r)
{
    const char *lv = str(locked, "version"), *nv = str(now, "version");
    if (*lv && *nv && strcmp(lv, nv)) js_report_add(r, "version-drift", "julia", "", "Julia %s locked, %s running", lv, nv);
    json_t *lp = json_object_get(locked, "packages"), *np = json_object_get(now, "packages");
    size_t i;
    json_t *p;
    json_array_foreach(lp, i, p) {
        const char *name = str(p, "name");
        json_t *q = find_by(np, "name", name);
        if (!q) {
            js_report_add(r, "removed", name, "", "locked package is not in the environment");
            continue;
        }
        if (strcmp(str(p, "uuid"), str(q, "uuid")))
            js_report_add(r, "uuid-drift", name, "", "UUID %s locked, %s in the Manifest", str(p, "uuid"), str(q, "uuid"));
        if (strcmp(str(p, "version"), str(q, "version")))
            js_report_add(r, "version-drift", name, "", "version %s locked, %s in the Manifest", str(p, "version"), str(q, "version"));
        if (strcmp(str(p, "git_tree_sha1"), str(q, "git_tree_sha1")))
            js_report_add(r, "version-drift", name, "", "git-tree-sha1 %s locked, %s in the Manifest", str(p, "git_tree_sha1"),
                          str(q, "git_tree_sha1"));
        if (strcmp(str(p, "source"), str(q, "source")))
            js_report_add(r, "source-moved", name, "", "source %s locked, %s now", str(p, "source"), str(q, "source"));
    }
    json_array_foreach(np, i, p) {
        if (!find_by(lp, "name", str(p, "name")))
            js_report_add(r, "not-locked", str(p, "name"), "", "package in the environment but not in the lock (%s)", str(p, "uuid"));
    }
}
