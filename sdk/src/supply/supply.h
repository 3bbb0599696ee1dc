/*
 * supply.h — the supply-chain scanner's engine (docs/supply-chain.md): the lock file
 * (versioned JSON read and written with jansson), streaming SHA-256 of files (OpenSSL's
 * libcrypto) on several threads, the git tree hash of a directory as Pkg computes it, the
 * shared objects a process maps or a program would map, and the comparison of what is on
 * disk with a lock, as a list of problems. A static library linked into libjager (the
 * JAGER_LOCK check at jager_init) and into the `jager` command (lock, verify). Never
 * installed; every symbol hidden.
 */
#ifndef JAGER_SUPPLY_H
#define JAGER_SUPPLY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <jansson.h>

#define JS_HIDDEN __attribute__((visibility("hidden")))

/** The lock file format this code writes and the newest it reads. */
#define JS_LOCK_FORMAT "jager.lock"
#define JS_LOCK_VERSION 1

/** One difference between a lock and what is there. Strings are owned by the report. */
typedef struct js_problem {
    char *kind;    /**< "modified", "added", "removed", "version-drift", "uuid-drift", … */
    char *package; /**< package name, or "(shared objects)" */
    char *file;    /**< file relative to the package, shared object path, or "" */
    char *detail;  /**< locked vs found, or why */
} js_problem;

typedef struct js_report {
    js_problem *v;
    size_t n, cap;
    int oom; /**< a problem could not be recorded (counted as a problem) */
} js_report;

JS_HIDDEN void js_report_add(js_report *r, const char *kind, const char *package, const char *file,
                             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
JS_HIDDEN void js_report_free(js_report *r);
/** Print the report as a table (control bytes escaped) to \p out. */
JS_HIDDEN void js_report_print(const js_report *r, FILE *out);
/** Copy \p s into \p buf with control bytes and DEL as \xNN (for terminals and logs). */
JS_HIDDEN void js_escape(const char *s, char *buf, size_t size);

/* ---- hashing ---- */
/** Result of hashing one file. */
enum { JS_HASH_OK = 0, JS_HASH_UNREADABLE = 1, JS_HASH_CHANGED = 2 };
/** \p n bytes of \p d as lower-case hex into \p hex (2n + 1 bytes). */
JS_HIDDEN void js_hex(const unsigned char *d, size_t n, char *hex);
/** SHA-256 of the file at \p path (opened without following a final symlink when
 *  \p nofollow), streamed. \p hex receives 64 hex digits. Returns JS_HASH_*; errno_out
 *  gets the errno of an unreadable file. */
JS_HIDDEN int js_sha256_file(const char *path, int nofollow, char hex[65], int *errno_out);
/** SHA-256 (\p sha256) and, when \p blob is not NULL, the git blob SHA-1 (\p blob, 40 hex) of
 *  the file at \p path in one streamed pass. With \p blob and js_lock_cache set, a file whose
 *  (device, inode, size, mtime, ctime) match a valid cache entry is not read. JS_HASH_*. */
JS_HIDDEN int js_hash_file(const char *path, int nofollow, char sha256[65], char blob[41], int *errno_out);
/** Build id (hex) of the ELF file at \p path, "" when it has none. */
JS_HIDDEN void js_elf_build_id_file(const char *path, char *hex, size_t size);

/* ---- packages (directories) ---- */
/**
 * Walk \p root (never following symlinks; ".git" skipped) and hash every file on
 * \p threads threads (0: the available cores). Returns a JSON object { "rel/path": value }
 * where value is the SHA-256 hex of a regular file, "symlink:<target>" for a symlink,
 * "unreadable" for a file that cannot be read; symlinks escaping \p root, unreadable
 * files and files that change while hashed are added to \p r under \p package.
 * NULL (with a problem) if \p root itself cannot be opened.
 */
JS_HIDDEN json_t *js_dir_files(const char *root, const char *package, unsigned threads, js_report *r);
/** Git tree hash (SHA-1 hex) of \p root as Pkg.GitTools.tree_hash computes it (".git"
 *  skipped, directories without files skipped, symlinks as blobs of their target).
 *  Returns 0, or -1 if a file could not be read. */
JS_HIDDEN int js_tree_hash(const char *root, char hex[41]);

/* ---- shared objects ---- */
/** The shared objects this process maps (dl_iterate_phdr; the executable included):
 *  a JSON array of { "path", "build_id", "sha256" }, sorted by path. */
JS_HIDDEN json_t *js_objects_self(unsigned threads);
/** The shared objects \p argv[0] maps at start-up (the dynamic loader's
 *  LD_TRACE_LOADED_OBJECTS list, the program not run) and the program itself. NULL with
 *  \p err filled on failure. */
JS_HIDDEN json_t *js_objects_program(char *const argv[], unsigned threads, char *err, size_t errlen);
/** The file-backed executable mappings of process \p pid (/proc/PID/maps). */
JS_HIDDEN json_t *js_objects_pid(int pid, unsigned threads, char *err, size_t errlen);
/** Hash the paths of \p paths (JSON array of strings) into an objects array. */
JS_HIDDEN json_t *js_objects_from_paths(json_t *paths, unsigned threads);

/* ---- the lock step's cache (supply_cache.c) ---- */
/** (device, inode, size, mtime_ns, ctime_ns) -> SHA-256 and git blob SHA-1, each entry
 *  HMAC-SHA256'd under a per-user key. For `jager lock` only: never for a trust decision. */
typedef struct js_cache js_cache;
typedef struct js_cache_stats {
    size_t hits;     /**< files not read: a valid entry matched */
    size_t misses;   /**< files hashed */
    size_t rejected; /**< entries whose key matched the file but whose MAC did not (edited) */
    size_t stored;   /**< entries written for files hashed now */
    size_t racy;     /**< files hashed but not stored: changed less than 1 s before hashing */
} js_cache_stats;
/** The cache at \p path (NULL: $JAGER_SUPPLY_CACHE, else $XDG_CACHE_HOME/jager/supply-cache.json
 *  or ~/.cache/jager/…; "off" disables). Its key is PATH.key. NULL with \p err when off or unusable. */
JS_HIDDEN js_cache *js_cache_open(const char *path, char *err, size_t errlen);
/** 1 and the hashes if \p st matches a valid entry; 0 otherwise (counted in the stats when
 *  \p count: the tree hash's second look at a file is not). */
JS_HIDDEN int js_cache_get(js_cache *c, const struct stat *st, char sha256[65], char blob[41], int count);
/** Store the hashes of a file with \p st whose hashing began at \p started_ns (CLOCK_REALTIME),
 *  unless it is racily clean. */
JS_HIDDEN void js_cache_put(js_cache *c, const struct stat *st, long long started_ns, const char *sha256, const char *blob);
JS_HIDDEN int js_cache_save(js_cache *c, char *err, size_t errlen);
JS_HIDDEN js_cache_stats js_cache_get_stats(const js_cache *c);
JS_HIDDEN const char *js_cache_path(const js_cache *c);
JS_HIDDEN void js_cache_close(js_cache *c);
/** The cache js_hash_file, js_dir_files, js_tree_hash and the objects' hashing use: set by
 *  `jager lock` only (NULL everywhere else). */
JS_HIDDEN extern js_cache *js_lock_cache;

/* ---- an output file (supply_write.c) ---- */
/** An output being written: "-" is standard output; a device, FIFO, socket or symbolic link
 *  is written straight; a regular file or a missing path atomically (a temporary made with
 *  O_EXCL|O_NOFOLLOW beside it, fsync'ed, renamed onto it). As tools/util/outfile.h. */
typedef struct js_out {
    FILE *f;    /**< write here */
    char *path; /**< the destination (owned copy) */
    char *tmp;  /**< the temporary when atomic, else NULL */
} js_out;
/** Open \p path for writing. 0, or -1 with \p err ("<path>: <why>"), nothing created. */
JS_HIDDEN int js_out_open(js_out *o, const char *path, char *err, size_t errlen);
/** Flush and close; when \p ok and atomic, rename the temporary onto the path, else remove
 *  it. 0 when the output is complete at its path; -1 with \p err when a write, close or
 *  rename failed (\p err untouched when only \p ok was 0). */
JS_HIDDEN int js_out_close(js_out *o, int ok, char *err, size_t errlen);

/* ---- the lock file ---- */
/** A new empty lock document ("format", "version", "created_by"). */
JS_HIDDEN json_t *js_lock_new(void);
/** Read and check a lock file. NULL with \p err ("<path>: <why>") on any error: unreadable,
 *  malformed or truncated JSON (with line and column), another format, a newer version. */
JS_HIDDEN json_t *js_lock_load(const char *path, char *err, size_t errlen);
/** Check a parsed document the same way. 0 or -1 with \p err. */
JS_HIDDEN int js_lock_check(json_t *doc, char *err, size_t errlen);
/** Write \p doc to \p path (sorted keys, two-space indent, trailing newline) with js_out:
 *  atomically onto a regular file, straight onto a device, FIFO or link, "-" standard output. */
JS_HIDDEN int js_lock_save(const char *path, json_t *doc, char *err, size_t errlen);

/* ---- comparison ---- */
/** Locked shared objects against those of \p mapped (same shape). \p mapped NULL: each
 *  locked object is rehashed from its path (offline). \p report_unlocked: mapped objects
 *  missing from the lock are "added". */
JS_HIDDEN void js_compare_objects(json_t *locked, json_t *mapped, int report_unlocked, unsigned threads, js_report *r);
/** Each locked Julia package rehashed from its source directory: files modified, added,
 *  removed; tree hash against the Manifest's and the registry's. */
JS_HIDDEN void js_verify_packages(json_t *julia, unsigned threads, js_report *r);
/** The environment as it is now (a "julia" object from Jager.Supply, files optional)
 *  against the locked one: version and UUID drift, packages added or removed, moved
 *  source directories, another Julia. */
JS_HIDDEN void js_compare_environment(json_t *locked, json_t *now, js_report *r);

#endif /* JAGER_SUPPLY_H */
