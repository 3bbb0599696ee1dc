/* supply_cache.c — the lock step's hash cache (docs/supply-chain.md "The lock step's cache"):
 * `jager lock` skips rehashing a file whose (device, inode, size, mtime, ctime) are those it
 * had when it was last hashed. Never used for a trust decision (`jager verify`, JAGER_LOCK,
 * Jager.Supply.verify always rehash). Each entry carries an HMAC-SHA256 under a per-user
 * key (a file of 32 random bytes, mode 0600, beside the cache), so an entry edited or forged
 * by anyone who cannot read the key is not trusted but rehashed (counted as rejected). An
 * entry is stored only when the file's ctime is more than JS_CACHE_RACY_NS older than the
 * moment its hashing began ("racily clean", as git says): a change after that moment gives
 * the file a later ctime, so it cannot keep the key of the stored entry. */
#include "supply.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JS_CACHE_FORMAT "jager.supply-cache"
#define JS_CACHE_VERSION 1
#define JS_CACHE_RACY_NS 1000000000LL /* ctime this much older than the hashing's start */
#define JS_CACHE_MAX 500000           /* entries kept (those used by this run first) */

struct js_cache {
    char path[PATH_MAX], key_path[PATH_MAX + 8];
    unsigned char key[32];
    json_t *old;  /* "dev:ino" -> [size, mtime_ns, ctime_ns, sha256, blob, mac] as loaded */
    json_t *used; /* entries this run used or stored (written first) */
    pthread_mutex_t mu;
    js_cache_stats st;
};

js_cache *js_lock_cache;

static long long ns_of(const struct timespec *t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

static void entry_mac(const js_cache *c, const char *id, long long size, long long mt, long long ct, const char *sha256,
                      const char *blob, char hex[65])
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, JS_CACHE_FORMAT " %d\n%s %lld %lld %lld %s %s", JS_CACHE_VERSION, id, size, mt, ct, sha256, blob);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (n < 0 || !HMAC(EVP_sha256(), c->key, sizeof c->key, (const unsigned char *)msg, (size_t)n, md, &len) || len != 32) {
        hex[0] = 0;
        return;
    }
    js_hex(md, 32, hex);
}

static void default_path(char *out, size_t size)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && x[0] == '/') snprintf(out, size, "%s/jager/supply-cache.json", x);
    else if (home && home[0] == '/') snprintf(out, size, "%s/.cache/jager/supply-cache.json", home);
    else out[0] = 0;
}

static int mkdirs_for(const char *file)
{
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", file);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) return 0;
    *slash = 0;
    for (char *p = d + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(d, 0700) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(d, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The per-user key: read it (ours, 0600 or stricter, 32 bytes) or make one. */
static int load_key(js_cache *c, char *err, size_t errlen)
{
    int fd = open(c->key_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
        if (getrandom(c->key, sizeof c->key, 0) != (ssize_t)sizeof c->key)
            return snprintf(err, errlen, "no random bytes for the cache key: %s", strerror(errno)), -1;
        fd = open(c->key_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            ssize_t w = write(fd, c->key, sizeof c->key);
            close(fd);
            if (w == (ssize_t)sizeof c->key) return 0;
            unlink(c->key_path);
        }
        if (errno != EEXIST) return snprintf(err, errlen, "%s: %s", c->key_path, strerror(errno)), -1;
        fd = open(c->key_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* another lock made it first */
    }
    if (fd < 0) return snprintf(err, errlen, "%s: %s", c->key_path, strerror(errno)), -1;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077) &&
             read(fd, c->key, sizeof c->key) == (ssize_t)sizeof c->key;
    close(fd);
    if (!ok) return snprintf(err, errlen, "%s: not a key of this user's (32 bytes, mode 0600): cache not used", c->key_path), -1;
    return 0;
}

js_cache *js_cache_open(const char *path, char *err, size_t errlen)
{
    err[0] = 0;
    const char *env = getenv("JAGER_SUPPLY_CACHE");
    if (!path && env && (!strcmp(env, "off") || !strcmp(env, "0"))) return snprintf(err, errlen, "off (JAGER_SUPPLY_CACHE)"), NULL;
    js_cache *c = calloc(1, sizeof *c);
    if (!c) return snprintf(err, errlen, "out of memory"), NULL;
    if (path) snprintf(c->path, sizeof c->path, "%s", path);
    else if (env && *env) snprintf(c->path, sizeof c->path, "%s", env);
    else default_path(c->path, sizeof c->path);
    if (!c->path[0]) {
        free(c);
        return snprintf(err, errlen, "no cache folder (neither XDG_CACHE_HOME nor HOME is set)"), NULL;
    }
    snprintf(c->key_path, sizeof c->key_path, "%s.key", c->path);
    if (mkdirs_for(c->path) != 0) {
        snprintf(err, errlen, "%s: cannot make its folder: %s", c->path, strerror(errno));
        free(c);
        return NULL;
    }
    if (load_key(c, err, errlen) != 0) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->used = json_object();
    int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022)) {
        FILE *f = fdopen(fd, "r");
        json_error_t je;
        json_t *doc = f ? json_loadf(f, 0, &je) : NULL;
        if (f) fclose(f);
        else close(fd);
        json_t *fmt = json_object_get(doc, "format"), *ver = json_object_get(doc, "version"), *ent = json_object_get(doc, "entries");
        if (json_is_string(fmt) && !strcmp(json_string_value(fmt), JS_CACHE_FORMAT) && json_integer_value(ver) == JS_CACHE_VERSION &&
            json_is_object(ent))
            c->old = json_incref(ent);
        json_decref(doc);
    } else if (fd >= 0) {
        close(fd);
        snprintf(err, errlen, "%s: not this user's or writable by others: its entries are not used", c->path);
    }
    if (!c->old) c->old = json_object();
    if (!c->old || !c->used) {
        js_cache_close(c);
        return snprintf(err, errlen, "out of memory"), NULL;
    }
    return c;
}

static void id_of(const struct stat *st, char *id, size_t size)
{
    snprintf(id, size, "%llu:%llu", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
}

int js_cache_get(js_cache *c, const struct stat *st, char sha256[65], char blob[41], int count)
{
    char id[64], mac[65];
    id_of(st, id, sizeof id);
    pthread_mutex_lock(&c->mu);
    json_t *e = json_object_get(c->used, id);
    int from_used = e != NULL;
    if (!e) e = json_object_get(c->old, id);
    int hit = 0;
    if (json_is_array(e) && json_array_size(e) == 6) {
        long long size = json_integer_value(json_array_get(e, 0)), mt = json_integer_value(json_array_get(e, 1)),
                  ct = json_integer_value(json_array_get(e, 2));
        const char *h = json_string_value(json_array_get(e, 3)), *b = json_string_value(json_array_get(e, 4)),
                   *m = json_string_value(json_array_get(e, 5));
        if (size == (long long)st->st_size && mt == ns_of(&st->st_mtim) && ct == ns_of(&st->st_ctim) && h && b && m) {
            entry_mac(c, id, size, mt, ct, h, b, mac);
            if (strlen(h) == 64 && strlen(b) == 40 && mac[0] && strlen(m) == 64 && CRYPTO_memcmp(mac, m, 64) == 0) {
                memcpy(sha256, h, 65);
                memcpy(blob, b, 41);
                if (!from_used) json_object_set(c->used, id, e);
                hit = 1;
                if (count) c->st.hits++;
            } else {
                if (count) c->st.rejected++; /* its key matches the file, its MAC does not: edited, not trusted */
            }
        }
    }
    if (!hit && count) c->st.misses++;
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void js_cache_put(js_cache *c, const struct stat *st, long long started_ns, const char *sha256, const char *blob)
{
    if (ns_of(&st->st_ctim) > started_ns - JS_CACHE_RACY_NS || ns_of(&st->st_mtim) > started_ns) {
        pthread_mutex_lock(&c->mu);
        c->st.racy++;
        pthread_mutex_unlock(&c->mu);
        return; /* racily clean: a change in the same clock tick could keep this key */
    }
    char id[64], mac[65];
    id_of(st, id, sizeof id);
    long long size = (long long)st->st_size, mt = ns_of(&st->st_mtim), ct = ns_of(&st->st_ctim);
    entry_mac(c, id, size, mt, ct, sha256, blob, mac);
    if (!mac[0]) return;
    json_t *e = json_pack("[I, I, I, s, s, s]", (json_int_t)size, (json_int_t)mt, (json_int_t)ct, sha256, blob, mac);
    if (!e) return;
    pthread_mutex_lock(&c->mu);
    json_object_set_new(c->used, id, e);
    c->st.stored++;
    pthread_mutex_unlock(&c->mu);
}

int js_cache_save(js_cache *c, char *err, size_t errlen)
{
    json_t *all = json_object();
    if (!all) return snprintf(err, errlen, "out of memory"), -1;
    json_object_update(all, c->used);
    const char *k;
    json_t *v;
    json_object_foreach(c->old, k, v) {
        if (json_object_size(all) >= JS_CACHE_MAX) break;
        if (!json_object_get(all, k)) json_object_set(all, k, v);
    }
    json_t *doc = json_pack("{s:s, s:i, s:o}", "format", JS_CACHE_FORMAT, "version", JS_CACHE_VERSION, "entries", all);
    if (!doc) return snprintf(err, errlen, "out of memory"), -1;
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", c->path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int rc = f && json_dumpf(doc, f, JSON_COMPACT) == 0 ? 0 : -1;
    if (f) rc |= fclose(f) != 0 ? -1 : 0;
    else if (fd >= 0) close(fd);
    json_decref(doc);
    if (rc != 0 || rename(tmp, c->path) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", c->path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

js_cache_stats js_cache_get_stats(const js_cache *c) { return c->st; }
const char *js_cache_path(const js_cache *c) { return c->path; }

void js_cache_close(js_cache *c)
{
    if (!c) return;
    json_decref(c->old);
    json_decref(c->used);
    pthread_mutex_destroy(&c->mu);
    OPENSSL_cleanse(c->key, sizeof c->key);
    free(c);
}
