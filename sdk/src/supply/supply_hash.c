/* supply_hash.c — SHA-256 of files (libcrypto's EVP, streamed in 256 KiB reads), a package
 * directory walked without following symlinks and hashed on several threads, the git tree
 * hash of a directory the way Pkg.GitTools.tree_hash computes it, ELF build ids. */
#include "supply.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JS_CHUNK (256u * 1024u)

/* "a/b" (or "b" when \p a is empty) into \p buf; -1 if it does not fit. */
static int join(char *buf, size_t size, const char *a, const char *b)
{
    int k = snprintf(buf, size, "%s%s%s", a, *a ? "/" : "", b);
    return k < 0 || (size_t)k >= size ? -1 : 0;
}

void js_hex(const unsigned char *d, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = 0;
}

static int same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec && a->st_ino == b->st_ino;
}

static int hash_file(const char *path, int nofollow, char hex[65], char blob[41], int *errno_out, int count)
{
    hex[0] = 0;
    if (blob) blob[0] = 0;
    if (errno_out) *errno_out = 0;
    js_cache *cache = blob ? js_lock_cache : NULL;
    struct timespec started;
    clock_gettime(CLOCK_REALTIME, &started); /* before the open: the racily-clean rule's moment */
    int fd = open(path, O_RDONLY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    struct stat before, after;
    if (fd < 0 || fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) {
        if (errno_out) *errno_out = fd < 0 ? errno : EINVAL;
        if (fd >= 0) close(fd);
        return JS_HASH_UNREADABLE;
    }
    if (cache && js_cache_get(cache, &before, hex, blob, count)) {
        close(fd);
        return JS_HASH_OK;
    }
    unsigned char *buf = malloc(JS_CHUNK);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new(), *sctx = blob ? EVP_MD_CTX_new() : NULL;
    int rc = JS_HASH_UNREADABLE;
    if (!buf || !ctx || (blob && !sctx) || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
        (sctx && EVP_DigestInit_ex(sctx, EVP_sha1(), NULL) != 1)) {
        if (errno_out) *errno_out = ENOMEM;
        goto done;
    }
    if (sctx) { /* git's blob object: "blob SIZE\0" then the bytes */
        char hdr[64];
        int h = snprintf(hdr, sizeof hdr, "blob %lld", (long long)before.st_size);
        EVP_DigestUpdate(sctx, hdr, (size_t)h + 1);
    }
    for (;;) {
        ssize_t k = read(fd, buf, JS_CHUNK);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            if (errno_out) *errno_out = errno;
            goto done;
        }
        if (k == 0) break;
        EVP_DigestUpdate(ctx, buf, (size_t)k);
        if (sctx) EVP_DigestUpdate(sctx, buf, (size_t)k);
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    js_hex(md, mdlen, hex);
    if (sctx) {
        EVP_DigestFinal_ex(sctx, md, &mdlen);
        js_hex(md, mdlen, blob);
    }
    rc = fstat(fd, &after) == 0 && same_stat(&before, &after) ? JS_HASH_OK : JS_HASH_CHANGED;
    if (rc == JS_HASH_OK && cache && count)
        js_cache_put(cache, &before, (long long)started.tv_sec * 1000000000LL + started.tv_nsec, hex, blob);
done:
    EVP_MD_CTX_free(ctx);
    EVP_MD_CTX_free(sctx);
    free(buf);
    close(fd);
    return rc;
}

int js_hash_file(const char *path, int nofollow, char hex[65], char blob[41], int *errno_out)
{
    return hash_file(path, nofollow, hex, blob, errno_out, 1);
}

int js_sha256_file(const char *path, int nofollow, char hex[65], int *errno_out)
{
    return hash_file(path, nofollow, hex, NULL, errno_out, 1);
}

/* ---- ELF build id: the NT_GNU_BUILD_ID note of a PT_NOTE segment (64-bit ELF) ---- */
void js_elf_build_id_file(const char *path, char *hex, size_t size)
{
    hex[0] = 0;
    FILE *f = fopen(path, "rbe");
    if (!f) return;
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        goto out;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (fseeko(f, (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET) || fread(&ph, sizeof ph, 1, f) != 1) goto out;
        if (ph.p_type != PT_NOTE || ph.p_filesz > 65536) continue;
        unsigned char *n = malloc(ph.p_filesz);
        if (!n) goto out;
        if (fseeko(f, (off_t)ph.p_offset, SEEK_SET) == 0 && fread(n, ph.p_filesz, 1, f) == 1) {
            size_t off = 0;
            while (off + sizeof(Elf64_Nhdr) <= ph.p_filesz) {
                Elf64_Nhdr nh;
                memcpy(&nh, n + off, sizeof nh);
                size_t name_off = off + sizeof nh, desc_off = name_off + ((nh.n_namesz + 3u) & ~3u);
                size_t next = desc_off + ((nh.n_descsz + 3u) & ~3u);
                if (next > ph.p_filesz || desc_off > ph.p_filesz) break;
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(n + name_off, "GNU", 4) &&
                    nh.n_descsz * 2 + 1 <= size && desc_off + nh.n_descsz <= ph.p_filesz) {
                    js_hex(n + desc_off, nh.n_descsz, hex);
                    free(n);
                    goto out;
                }
                off = next;
            }
        }
        free(n);
    }
out:
    fclose(f);
}

/* ---- a package directory ---- */
typedef struct entry {
    char *rel;   /* relative path */
    char *value; /* filled by the walk (symlinks) or the hashers (files) */
    int state;   /* JS_HASH_* */
    int err;
} entry;

typedef struct walk {
    const char *root;
    size_t root_len;
    const char *package;
    js_report *r;
    entry *v;
    size_t n, cap;
    int oom;
    atomic_size_t next;
} walk;

static entry *push(walk *w, const char *rel)
{
    if (w->n == w->cap) {
        size_t c = w->cap ? 2 * w->cap : 256;
        entry *nv = realloc(w->v, c * sizeof *nv);
        if (!nv) return w->oom = 1, NULL;
        w->v = nv;
        w->cap = c;
    }
    entry *e = &w->v[w->n];
    memset(e, 0, sizeof *e);
    if (!(e->rel = strdup(rel))) return w->oom = 1, NULL;
    w->n++;
    return e;
}

/* Does the symlink at \p rel (relative to the root) pointing at \p target stay inside the
 * root? Judged lexically: an absolute target must lie under the root's path; a relative
 * one must not climb above it. */
static int link_stays_inside(const walk *w, const char *rel, const char *target)
{
    if (target[0] == '/') {
        char real[PATH_MAX];
        if (!realpath(w->root, real)) return 0;
        size_t n = strlen(real);
        return !strncmp(target, real, n) && (target[n] == '/' || target[n] == 0) && !strstr(target + n, "/../");
    }
    int depth = 0; /* the link's folder depth below the root */
    for (const char *p = rel; *p; p++)
        if (*p == '/') depth++;
    const char *p = target;
    while (*p) {
        const char *s = strchr(p, '/');
        size_t len = s ? (size_t)(s - p) : strlen(p);
        if (len == 2 && !strncmp(p, "..", 2)) {
            if (--depth < 0) return 0;
        } else if (len && !(len == 1 && *p == '.'))
            depth++;
        p += len;
        while (*p == '/') p++;
    }
    return 1;
}

static void walk_dir(walk *w, const char *rel)
{
    char path[PATH_MAX];
    if (join(path, sizeof path, w->root, rel)) return;
    DIR *d = opendir(path);
    if (!d) {
        js_report_add(w->r, "unreadable", w->package, rel, "cannot open the folder: %s", strerror(errno));
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, ".git")) continue;
        char sub[PATH_MAX], full[PATH_MAX];
        if (join(sub, sizeof sub, rel, nm) || join(full, sizeof full, w->root, sub)) {
            js_report_add(w->r, "unreadable", w->package, nm, "path too long");
            continue;
        }
        struct stat st;
        if (lstat(full, &st) != 0) {
            js_report_add(w->r, "unreadable", w->package, sub, "%s", strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            walk_dir(w, sub);
        } else if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t k = readlink(full, target, sizeof target - 1);
            if (k < 0) {
                js_report_add(w->r, "unreadable", w->package, sub, "readlink: %s", strerror(errno));
                continue;
            }
            target[k] = 0;
            entry *e = push(w, sub);
            if (!e) break;
            size_t vl = (size_t)k + 9;
            if ((e->value = malloc(vl))) snprintf(e->value, vl, "symlink:%s", target);
            e->state = -1; /* not hashed */
            if (!link_stays_inside(w, sub, target))
                js_report_add(w->r, "symlink-escape", w->package, sub, "points outside the package: %s (not followed)", target);
        } else if (S_ISREG(st.st_mode)) {
            if (!push(w, sub)) break;
        } else {
            js_report_add(w->r, "unreadable", w->package, sub, "not a regular file (mode %o)", (unsigned)st.st_mode);
        }
    }
    closedir(d);
}

static void *hasher(void *arg)
{
    walk *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->n) break;
        entry *e = &w->v[i];
        if (e->state == -1) continue;
        char path[PATH_MAX], hex[65];
        if (join(path, sizeof path, w->root, e->rel)) {
            e->state = JS_HASH_UNREADABLE;
            e->err = ENAMETOOLONG;
            continue;
        }
        char blob[41];
        e->state = js_hash_file(path, 1, hex, js_lock_cache ? blob : NULL, &e->err);
        e->value = strdup(e->state == JS_HASH_UNREADABLE ? "unreadable" : hex);
    }
    return NULL;
}

unsigned js_threads(unsigned threads);
unsigned js_threads(unsigned threads)
{
    if (threads) return threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

/* Hash entries [0, w->n) on \p threads threads (the caller is one of them). */
static void hash_all(walk *w, unsigned threads)
{
    threads = js_threads(threads);
    if (threads > w->n) threads = w->n ? (unsigned)w->n : 1;
    pthread_t tid[16];
    unsigned started = 0;
    for (unsigned t = 1; t < threads && t < 16; t++)
        if (pthread_create(&tid[started], NULL, hasher, w) == 0) started++;
    hasher(w);
    for (unsigned t = 0; t < started; t++) pthread_join(tid[t], NULL);
}

json_t *js_dir_files(const char *root, const char *package, unsigned threads, js_report *r)
{
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        js_report_add(r, "removed", package, "", "the package folder %s is missing: %s", root,
                      errno ? strerror(errno) : "not a folder");
        return NULL;
    }
    walk w = {.root = root, .root_len = strlen(root), .package = package, .r = r};
    atomic_init(&w.next, 0);
    walk_dir(&w, "");
    hash_all(&w, threads);
    json_t *files = json_object();
    for (size_t i = 0; i < w.n; i++) {
        entry *e = &w.v[i];
        if (e->state == JS_HASH_UNREADABLE)
            js_report_add(r, "unreadable", package, e->rel, "%s", strerror(e->err));
        else if (e->state == JS_HASH_CHANGED)
            js_report_add(r, "changed-while-hashed", package, e->rel, "the file changed while it was hashed");
        if (files && e->value) json_object_set_new(files, e->rel, json_string(e->value));
        free(e->rel);
        free(e->value);
    }
    if (w.oom) r->oom = 1;
    free(w.v);
    return files;
}

/* ---- git tree hash (SHA-1), as Pkg.GitTools.tree_hash ---- */
typedef struct tentry {
    char *name;
    char *key; /* name, with '/' appended for a tree */
    unsigned mode; /* 040000 100644 100755 120000 */
    unsigned char sha[20];
} tentry;

static int contains_files(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 1;
    if (!S_ISDIR(st.st_mode)) return 1;
    DIR *d = opendir(path);
    if (!d) return 1;
    struct dirent *de;
    int found = 0;
    while (!found && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char sub[PATH_MAX];
        if (join(sub, sizeof sub, path, de->d_name)) continue;
        found = contains_files(sub);
    }
    closedir(d);
    return found;
}

static int sort_key_cmp(const void *x, const void *y)
{
    /* git's order (and Pkg's): a tree sorts as if its name ended in '/' */
    const tentry *a = x, *b = y;
    return strcmp(a->key, b->key);
}

static int blob_sha1(const char *path, int is_link, unsigned char out[20])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) return -1;
    int rc = -1;
    EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
    char hdr[64];
    if (is_link) {
        char target[PATH_MAX];
        ssize_t k = readlink(path, target, sizeof target);
        if (k < 0) goto out;
        int h = snprintf(hdr, sizeof hdr, "blob %zd", k);
        EVP_DigestUpdate(ctx, hdr, (size_t)h + 1);
        EVP_DigestUpdate(ctx, target, (size_t)k);
    } else if (js_lock_cache) { /* the lock step: one pass gives both hashes, maybe cached */
        char sha[65], hex[41];
        if (hash_file(path, 1, sha, hex, NULL, 0) != JS_HASH_OK) goto out; /* not counted twice */
        for (int i = 0; i < 20; i++) {
            unsigned v;
            if (sscanf(hex + 2 * i, "%2x", &v) != 1) goto out;
            out[i] = (unsigned char)v;
        }
        EVP_MD_CTX_free(ctx);
        return 0;
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0) goto out;
        if (fstat(fd, &st) != 0) {
            close(fd);
            goto out;
        }
        int h = snprintf(hdr, sizeof hdr, "blob %lld", (long long)st.st_size);
        EVP_DigestUpdate(ctx, hdr, (size_t)h + 1);
        unsigned char *buf = malloc(JS_CHUNK);
        ssize_t k = 0;
        while (buf && (k = read(fd, buf, JS_CHUNK)) > 0) EVP_DigestUpdate(ctx, buf, (size_t)k);
        free(buf);
        close(fd);
        if (!buf || k < 0) goto out;
    }
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, out, &len);
    rc = 0;
out:
    EVP_MD_CTX_free(ctx);
    return rc;
}

static int tree_sha1(const char *dir, unsigned char out[20])
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    tentry *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, ".git")) continue;
        char path[PATH_MAX];
        if (join(path, sizeof path, dir, nm)) {
            rc = -1;
            break;
        }
        struct stat st;
        if (lstat(path, &st) != 0) {
            rc = -1;
            break;
        }
        tentry t = {0};
        if (S_ISLNK(st.st_mode)) {
            t.mode = 0120000;
            rc = blob_sha1(path, 1, t.sha);
        } else if (S_ISDIR(st.st_mode)) {
            if (!contains_files(path)) continue;
            t.mode = 040000;
            rc = tree_sha1(path, t.sha);
        } else {
            t.mode = (st.st_mode & 0100) ? 0100755 : 0100644;
            rc = blob_sha1(path, 0, t.sha);
        }
        if (rc) break;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            tentry *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = -1;
                break;
            }
            v = nv;
        }
        size_t nl = strlen(nm);
        if (!(t.name = strdup(nm)) || !(t.key = malloc(nl + 2))) {
            free(t.name);
            rc = -1;
            break;
        }
        memcpy(t.key, nm, nl);
        t.key[nl] = t.mode == 040000 ? '/' : 0;
        t.key[nl + 1] = 0;
        v[n++] = t;
    }
    closedir(d);
    if (rc == 0) {
        qsort(v, n, sizeof *v, sort_key_cmp);
        size_t size = 0;
        char mode[16];
        for (size_t i = 0; i < n; i++) size += (size_t)snprintf(mode, sizeof mode, "%o", v[i].mode) + 1 + strlen(v[i].name) + 1 + 20;
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        if (!ctx) rc = -1;
        else {
            EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
            char hdr[64];
            int h = snprintf(hdr, sizeof hdr, "tree %zu", size);
            EVP_DigestUpdate(ctx, hdr, (size_t)h + 1);
            for (size_t i = 0; i < n; i++) {
                int m = snprintf(mode, sizeof mode, "%o ", v[i].mode);
                EVP_DigestUpdate(ctx, mode, (size_t)m);
                EVP_DigestUpdate(ctx, v[i].name, strlen(v[i].name) + 1);
                EVP_DigestUpdate(ctx, v[i].sha, 20);
            }
            unsigned int len = 0;
            EVP_DigestFinal_ex(ctx, out, &len);
            EVP_MD_CTX_free(ctx);
        }
    }
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].key);
    }
    free(v);
    return rc;
}

int js_tree_hash(const char *root, char hex[41])
{
    unsigned char sha[20];
    hex[0] = 0;
    if (tree_sha1(root, sha) != 0) return -1;
    js_hex(sha, 20, hex);
    return 0;
}
