/* cache.c: the plan cache object: fingerprints, a thread-safe LRU, counters, loading the
 * file's entries into it, the context wiring and the public API. The file format, reading
 * and saving live in cache_file.c, the layer below. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"
#include "internal.h"

/* The options' layout is ABI: on 64-bit targets (CUDA has no 32-bit ones) it is pinned here,
 * reserved last. Options are carved out of reserved where they fit; where they do not, the
 * struct grows, which is a change of the 0.x ABI: the minor version goes up with it (the
 * SONAME carries the minor, libnnop.so.0.1). 0.1: 112 bytes, then 184 with the log and
 * implementation options (issue 50); still 184 with the allocator (a pointer taken from the
 * reserved tail, 8 bytes to 7). */
_Static_assert(sizeof(void *) != 8 ||
                       (sizeof(nnop_context_options) == 184 &&
                        offsetof(nnop_context_options, reserved) + 7 * sizeof(uint64_t) == 184),
               "nnop_context_options changed size");
_Static_assert(sizeof(void *) != 8 || sizeof(nnop_compile_options) == 80,
               "nnop_compile_options changed size");

/* ================================================================ fingerprints */
enum {
    FP_TAG_I64 = 'I',
    FP_TAG_F32 = 'F',
    FP_TAG_STR = 'S',
    FP_TAG_NULL = 'N',
    FP_TAG_BYTES = 'B'
};

static void fp_put_u64(nnop__fp_builder *b, uint64_t v)
{
    unsigned char le[8];
    int i;
    for (i = 0; i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    nnop__h128_update(&b->h, le, sizeof le);
}

static void fp_tag(nnop__fp_builder *b, unsigned char tag)
{
    nnop__h128_update(&b->h, &tag, 1);
}

void nnop__fp_init(nnop__fp_builder *b)
{
    nnop__h128_init(&b->h);
}

void nnop__fp_add_i64(nnop__fp_builder *b, int64_t v)
{
    fp_tag(b, FP_TAG_I64);
    fp_put_u64(b, (uint64_t)v);
}

void nnop__fp_add_f32(nnop__fp_builder *b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    fp_tag(b, FP_TAG_F32);
    fp_put_u64(b, bits);
}

void nnop__fp_add_str(nnop__fp_builder *b, const char *s)
{
    if (!s) {
        fp_tag(b, FP_TAG_NULL);
        return;
    }
    fp_tag(b, FP_TAG_STR);
    fp_put_u64(b, (uint64_t)strlen(s));
    nnop__h128_update(&b->h, s, strlen(s));
}

void nnop__fp_add_bytes(nnop__fp_builder *b, const void *p, size_t len)
{
    fp_tag(b, FP_TAG_BYTES);
    fp_put_u64(b, (uint64_t)len);
    if (len)
        nnop__h128_update(&b->h, p, len);
}

void nnop__fp_add_desc(nnop__fp_builder *b, const nnop_tensor_desc *d)
{
    int i, n;
    if (!d) {
        fp_tag(b, FP_TAG_NULL);
        return;
    }
    n = d->ndim < 0 ? 0 : d->ndim > NNOP_MAX_DIMS ? NNOP_MAX_DIMS : d->ndim;
    nnop__fp_add_i64(b, (int64_t)d->dtype);
    nnop__fp_add_i64(b, (int64_t)d->ndim);
    for (i = 0; i < n; i++) {
        nnop__fp_add_i64(b, d->dims[i]);
        nnop__fp_add_i64(b, d->strides[i]);
    }
}

void nnop__fp_add_context(nnop__fp_builder *b, const nnop_context *ctx)
{
    nnop_plan_cache *c = ctx->plan_cache;
    uint64_t cudnn = 0;
    char key[NNOP_CACHE_KEY_MAX + 1] = "";
    if (c) {
        nnop__mutex_lock(c->mu);
        cudnn = c->cudnn_version;
        memcpy(key, c->device_key, sizeof key);
        nnop__mutex_unlock(c->mu);
    }
    nnop__fp_add_i64(b, (int64_t)cudnn);
    nnop__fp_add_str(b, key);
    nnop__fp_add_i64(b, (int64_t)ctx->opts.policy);
    nnop__fp_add_i64(b, ctx->opts.deterministic != 0);
    nnop__fp_add_i64(b, ctx->opts.autotune != 0);
    nnop__fp_add_i64(b, ctx->opts.allow_tf32 != 0);
    nnop__fp_add_i64(b, (int64_t)ctx->opts.workspace_limit);
}

nnop__fp nnop__fp_final(const nnop__fp_builder *b)
{
    nnop__fp fp;
    nnop__h128_final(&b->h, &fp.lo, &fp.hi);
    return fp;
}

int nnop__fp_equal(const nnop__fp *a, const nnop__fp *b)
{
    return a->lo == b->lo && a->hi == b->hi;
}

/* ================================================================ entries */
void nnop__cache_entry_clear(nnop__cache_entry *e)
{
    if (!e)
        return;
    free(e->blob);
    memset(e, 0, sizeof *e);
}

/* ================================================================ the cache object */
#define CACHE_MAX_BUCKETS ((size_t)1 << 16)

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

nnop_status nnop__cache_create(const char *path, size_t max_entries, size_t max_bytes,
                               nnop_plan_cache **out)
{
    nnop_plan_cache *c;
    size_t nb = 16;
    if (!out)
        return NNOP_ERR_INVALID_ARGUMENT;
    *out = NULL;
    c = (nnop_plan_cache *)calloc(1, sizeof *c);
    if (!c)
        return NNOP_ERR_OUT_OF_MEMORY;
    c->max_entries = max_entries ? max_entries : NNOP_CACHE_DEFAULT_ENTRIES;
    c->max_bytes = max_bytes ? max_bytes : NNOP_CACHE_DEFAULT_BYTES;
    while (nb < c->max_entries && nb < CACHE_MAX_BUCKETS)
        nb *= 2;
    c->mask = nb - 1;
    c->refs = 1;
    c->load_pending = path != NULL; /* the file is read when the cache learns its device */
    c->buckets = (nnop__cache_node **)calloc(nb, sizeof *c->buckets);
    if (c->buckets && path)
        c->path = dup_string(path);
    if (!c->buckets || (path && !c->path) || nnop__mutex_create(&c->mu) != NNOP_OK) {
        free(c->buckets);
        free(c->path);
        free(c);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    *out = c;
    return NNOP_OK;
}

static void cache_free(nnop_plan_cache *c)
{
    nnop__cache_node *n = c->newest;
    while (n) {
        nnop__cache_node *older = n->older;
        free(n->e.blob);
        free(n);
        n = older;
    }
    nnop__mutex_destroy(c->mu);
    free(c->buckets);
    free(c->path);
    free(c);
}

void nnop__cache_retain(nnop_plan_cache *c)
{
    if (!c)
        return;
    nnop__mutex_lock(c->mu);
    c->refs++;
    nnop__mutex_unlock(c->mu);
}

void nnop__cache_release(nnop_plan_cache *c)
{
    int refs;
    if (!c)
        return;
    nnop__mutex_lock(c->mu);
    refs = --c->refs;
    nnop__mutex_unlock(c->mu);
    if (refs > 0)
        return;
    nnop__cache_save(c, NULL, 1, NULL, 0); /* best effort: nobody to tell of a failure */
    cache_free(c);
}

/* ---------------------------------------------------------------- hash table and LRU */
static nnop__cache_node **bucket_of(nnop_plan_cache *c, const nnop__fp *fp)
{
    return &c->buckets[(size_t)(fp->lo ^ fp->hi) & c->mask];
}

static nnop__cache_node *find_node(nnop_plan_cache *c, const nnop__fp *fp)
{
    nnop__cache_node *n = *bucket_of(c, fp);
    while (n && !nnop__fp_equal(&n->fp, fp))
        n = n->next;
    return n;
}

static void lru_unlink(nnop_plan_cache *c, nnop__cache_node *n)
{
    if (n->newer)
        n->newer->older = n->older;
    else
        c->newest = n->older;
    if (n->older)
        n->older->newer = n->newer;
    else
        c->oldest = n->newer;
    n->newer = n->older = NULL;
}

static void lru_push_newest(nnop_plan_cache *c, nnop__cache_node *n)
{
    n->newer = NULL;
    n->older = c->newest;
    if (c->newest)
        c->newest->newer = n;
    c->newest = n;
    if (!c->oldest)
        c->oldest = n;
}

static void remove_node(nnop_plan_cache *c, nnop__cache_node *n)
{
    nnop__cache_node **p = bucket_of(c, &n->fp);
    while (*p != n)
        p = &(*p)->next;
    *p = n->next;
    lru_unlink(c, n);
    c->n--;
    c->bytes -= n->cost;
    free(n->e.blob);
    free(n);
}

/* Evict the oldest entries (never keep) until both bounds hold. */
static void enforce_bounds(nnop_plan_cache *c, const nnop__cache_node *keep)
{
    while ((c->n > c->max_entries || c->bytes > c->max_bytes) && c->oldest && c->oldest != keep) {
        remove_node(c, c->oldest);
        c->st.evictions++;
    }
}

int nnop__cache_lookup(nnop_plan_cache *c, const nnop__fp *fp, nnop__cache_entry *out)
{
    nnop__cache_node *n;
    int hit = 0;
    if (!out)
        return 0;
    memset(out, 0, sizeof *out);
    if (!c || !fp)
        return 0;
    nnop__mutex_lock(c->mu);
    n = find_node(c, fp);
    if (n) {
        *out = n->e;
        out->blob = NULL;
        if (n->e.blob_len) {
            out->blob = malloc(n->e.blob_len);
            if (out->blob)
                memcpy(out->blob, n->e.blob, n->e.blob_len);
        }
        hit = (out->blob || !n->e.blob_len);
        if (hit) {
            lru_unlink(c, n);
            lru_push_newest(c, n);
        } else {
            memset(out, 0, sizeof *out);
        }
    }
    if (hit)
        c->st.hits++;
    else
        c->st.misses++;
    nnop__mutex_unlock(c->mu);
    return hit;
}

int32_t nnop__cache_newest_plans(nnop_plan_cache *c, int32_t max, nnop__fp *fps,
                                 nnop__cache_entry *out)
{
    const nnop__cache_node *n;
    int32_t k = 0;
    if (!c || max <= 0)
        return 0;
    nnop__mutex_lock(c->mu);
    for (n = c->newest; n && k < max; n = n->older) {
        if (!n->e.blob_len || !n->e.n_io)
            continue;
        out[k] = n->e;
        out[k].blob = malloc(n->e.blob_len);
        if (!out[k].blob)
            break;
        memcpy(out[k].blob, n->e.blob, n->e.blob_len);
        fps[k++] = n->fp;
    }
    nnop__mutex_unlock(c->mu);
    return k;
}

nnop_status nnop__cache_put_locked(nnop_plan_cache *c, const nnop__fp *fp,
                                   const nnop__cache_entry *e, int from_file)
{
    nnop__cache_node *n, *old = find_node(c, fp);
    size_t blob_len = e->blob_len;
    if (old && from_file && !old->loaded)
        return NNOP_OK; /* memory is newer than the file */
    if (nnop__cache_entry_cost(blob_len) > c->max_bytes)
        blob_len = 0; /* the engine choice alone is still worth keeping */
    if (nnop__cache_entry_cost(blob_len) > c->max_bytes)
        return NNOP_ERR_INVALID_ARGUMENT;
    n = (nnop__cache_node *)calloc(1, sizeof *n);
    if (!n)
        return NNOP_ERR_OUT_OF_MEMORY;
    n->fp = *fp;
    n->e = *e;
    n->e.blob = NULL;
    n->e.blob_len = blob_len;
    if (blob_len) {
        n->e.blob = malloc(blob_len);
        if (!n->e.blob) {
            free(n);
            return NNOP_ERR_OUT_OF_MEMORY;
        }
        memcpy(n->e.blob, e->blob, blob_len);
    }
    n->cost = nnop__cache_entry_cost(blob_len);
    n->loaded = from_file;
    if (old)
        remove_node(c, old);
    n->next = *bucket_of(c, fp);
    *bucket_of(c, fp) = n;
    lru_push_newest(c, n);
    c->n++;
    c->bytes += n->cost;
    enforce_bounds(c, n);
    if (from_file) {
        c->st.entries_loaded++;
    } else {
        c->st.inserts++;
        c->dirty = 1;
        c->gen++;
    }
    return NNOP_OK;
}

nnop_status nnop__cache_insert(nnop_plan_cache *c, const nnop__fp *fp, const nnop__cache_entry *e)
{
    nnop_status st;
    if (!c || !fp || !e || !nnop__cache_entry_valid(e))
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__mutex_lock(c->mu);
    st = nnop__cache_put_locked(c, fp, e, 0);
    nnop__mutex_unlock(c->mu);
    return st;
}

void nnop__cache_add_time(nnop_plan_cache *c, nnop__cache_timer which, uint64_t ns)
{
    if (!c)
        return;
    nnop__mutex_lock(c->mu);
    if (which == NNOP_CACHE_T_HEURISTICS)
        c->st.heuristics_ns += ns;
    else if (which == NNOP_CACHE_T_FINALIZE)
        c->st.finalize_ns += ns;
    else if (which == NNOP_CACHE_T_AUTOTUNE)
        c->st.autotune_ns += ns;
    else if (which == NNOP_CACHE_T_DESERIALIZE)
        c->st.deserialize_ns += ns;
    nnop__mutex_unlock(c->mu);
}

void nnop__cache_count(nnop_plan_cache *c, nnop__cache_event which)
{
    if (!c)
        return;
    nnop__mutex_lock(c->mu);
    if (which == NNOP_CACHE_EV_PLAN_BUILT)
        c->st.plans_built++;
    else if (which == NNOP_CACHE_EV_PLAN_FROM_BLOB)
        c->st.plans_from_blob++;
    else if (which == NNOP_CACHE_EV_BLOB_REJECTED)
        c->st.blobs_rejected++;
    nnop__mutex_unlock(c->mu);
}

void nnop__cache_stats(nnop_plan_cache *c, nnop_cache_stats *out)
{
    nnop__mutex_lock(c->mu);
    *out = c->st;
    out->entries = c->n;
    out->bytes = c->bytes;
    nnop__mutex_unlock(c->mu);
}

void nnop__cache_device_key(char *buf, size_t len, const char *gpu_name, int sm_version,
                            int sm_count)
{
    if (!buf || !len)
        return;
    snprintf(buf, len, "%s/sm_%d/%d", gpu_name ? gpu_name : "?", sm_version, sm_count);
}

int nnop__cache_has_file(const nnop_plan_cache *c)
{
    return c && c->path; /* set at creation, never changed */
}

nnop_status nnop__cache_bind(nnop_plan_cache *c, uint64_t cudnn_version, const char *device_key)
{
    char key[NNOP_CACHE_KEY_MAX + 1];
    int load = 0;
    nnop_status st = NNOP_OK;
    if (!c || !device_key)
        return NNOP_ERR_INVALID_ARGUMENT;
    snprintf(key, sizeof key, "%s", device_key); /* longer keys are cut, here and in files */
    nnop__mutex_lock(c->mu);
    if (!c->bound) {
        c->bound = 1;
        c->cudnn_version = cudnn_version;
        memcpy(c->device_key, key, sizeof key);
        load = c->load_pending;
        c->load_pending = 0;
    } else if (c->cudnn_version != cudnn_version || strcmp(c->device_key, key) != 0) {
        st = NNOP_ERR_INVALID_ARGUMENT;
    }
    nnop__mutex_unlock(c->mu);
    if (load)
        nnop__cache_load(c, NULL, NULL); /* cannot fail for the file's contents */
    return st;
}

/* ================================================================ load */
typedef struct load_state {
    nnop_plan_cache *c;
    int oom;
} load_state;

static int load_one(void *user, const nnop__fp *fp, const nnop__cache_entry *e)
{
    load_state *l = (load_state *)user;
    nnop_status st;
    nnop__mutex_lock(l->c->mu);
    st = nnop__cache_put_locked(l->c, fp, e, 1);
    nnop__mutex_unlock(l->c->mu);
    l->oom = st == NNOP_ERR_OUT_OF_MEMORY;
    return l->oom; /* stop: the load reports it (the entries loaded so far stay) */
}

nnop_status nnop__cache_load(nnop_plan_cache *c, const char *path, nnop__cache_report *rep)
{
    nnop__cache_report local;
    unsigned char *buf = NULL;
    size_t len = 0;
    uint64_t t0 = nnop__monotonic_ns(), cudnn;
    char key[NNOP_CACHE_KEY_MAX + 1];
    int bound;
    nnop_status st;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    if (!c)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__mutex_lock(c->mu);
    if (!path)
        path = c->path;
    if (path && !c->bound && path == c->path)
        c->load_pending = 1;
    bound = c->bound;
    cudnn = c->cudnn_version;
    memcpy(key, c->device_key, sizeof key);
    nnop__mutex_unlock(c->mu);
    if (!path || !bound)
        return NNOP_OK;
    st = nnop__cache_read_file(path, &buf, &len, &rep->missing, NULL);
    if (st == NNOP_OK && buf) {
        load_state l;
        l.c = c;
        l.oom = 0;
        nnop__cache_parse(buf, len, cudnn, key, load_one, &l, rep);
        if (l.oom)
            st = NNOP_ERR_OUT_OF_MEMORY;
    }
    free(buf);
    nnop__mutex_lock(c->mu);
    c->st.ignored_corrupt += rep->ignored_corrupt;
    c->st.ignored_other_device += rep->ignored_other_device;
    c->st.ignored_other_cudnn += rep->ignored_other_cudnn;
    c->st.files_rejected += (uint64_t)rep->rejected;
    if (rep->ignored_corrupt || rep->rejected) {
        c->dirty = 1; /* rewrite a clean file at the next save */
        c->gen++;
    }
    c->st.file_ns += nnop__monotonic_ns() - t0;
    nnop__mutex_unlock(c->mu);
    return st;
}

/* ================================================================ context wiring */
nnop_status nnop__context_cache_init(nnop_context *ctx, const nnop_context_options *o)
{
    nnop_plan_cache *c = NULL;
    nnop_status st;
    if (o && o->plan_cache) {
        nnop__cache_retain(o->plan_cache);
        ctx->plan_cache = o->plan_cache;
        ctx->opts.cache_path = o->plan_cache->path;
        return NNOP_OK;
    }
    st = nnop__cache_create(o ? o->cache_path : NULL, 0, 0, &c);
    if (st != NNOP_OK)
        return nnop__fail(ctx, st, "nnop_context_create: cannot allocate the plan cache");
    ctx->plan_cache = c;            /* its file is loaded at bind (CUDA context init) */
    ctx->opts.cache_path = c->path; /* our copy: the caller's string may not outlive us */
    return NNOP_OK;
}

void nnop__context_cache_fini(nnop_context *ctx)
{
    if (!ctx->plan_cache)
        return;
    nnop__cache_save(ctx->plan_cache, NULL, 1, NULL, 0);
    nnop__cache_release(ctx->plan_cache);
    ctx->plan_cache = NULL;
    ctx->opts.cache_path = NULL;
}

nnop_status nnop__context_cache_bind(nnop_context *ctx, uint64_t cudnn_version,
                                     const char *gpu_name, int sm_version, int sm_count)
{
    char key[NNOP_CACHE_KEY_MAX + 1];
    nnop_plan_cache *own = NULL;
    nnop_status st;
    if (!ctx || !ctx->plan_cache)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__cache_device_key(key, sizeof key, gpu_name, sm_version, sm_count);
    if (nnop__cache_bind(ctx->plan_cache, cudnn_version, key) == NNOP_OK)
        return NNOP_OK;
    /* A shared cache already serving another kind of device: this context gets a private
     * memory-only cache instead, so fingerprints never meet the other device's entries. */
    st = nnop__cache_create(NULL, 0, 0, &own);
    if (st != NNOP_OK)
        return nnop__fail(ctx, st, "plan cache: out of memory");
    (void)nnop__cache_bind(own, cudnn_version, key);
    nnop__cache_release(ctx->plan_cache);
    ctx->plan_cache = own;
    ctx->opts.cache_path = NULL;
    return NNOP_OK;
}

/* ================================================================ public API */
nnop_status nnop_context_cache_stats(const nnop_context *ctx, nnop_cache_stats *out)
{
    if (!ctx || !ctx->plan_cache)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!out) /* a context is never const itself: its message is state beside the counters */
        return nnop__fail((nnop_context *)ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_context_cache_stats: out is NULL");
    nnop__cache_stats(ctx->plan_cache, out);
    return NNOP_OK;
}

nnop_status nnop_cache_save(nnop_context *ctx)
{
    char msg[NNOP_ERROR_LEN / 2];
    nnop_status st;
    if (!ctx || !ctx->plan_cache)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    st = nnop__cache_save(ctx->plan_cache, NULL, 0, msg, sizeof msg);
    if (st != NNOP_OK)
        return nnop__fail(ctx, st, "nnop_cache_save: %s", msg[0] ? msg : "out of memory");
    return NNOP_OK;
}

nnop_status nnop_cache_load(nnop_context *ctx)
{
    nnop_status st;
    if (!ctx || !ctx->plan_cache)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__clear_error(ctx);
    st = nnop__cache_load(ctx->plan_cache, NULL, NULL);
    if (st != NNOP_OK)
        return nnop__fail(ctx, st, "nnop_cache_load: cannot read %s",
                          ctx->opts.cache_path ? ctx->opts.cache_path : "(no file)");
    return NNOP_OK;
}

nnop_status nnop_plan_cache_create(const char *path, size_t max_entries, nnop_plan_cache **out)
{
    return nnop__cache_create(path, max_entries, 0, out); /* loaded at the first bind */
}

void nnop_plan_cache_destroy(nnop_plan_cache *cache)
{
    nnop__cache_release(cache);
}

nnop_status nnop_plan_cache_stats(nnop_plan_cache *cache, nnop_cache_stats *out)
{
    if (!cache || !out)
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__cache_stats(cache, out);
    return NNOP_OK;
}

nnop_status nnop_plan_cache_save(nnop_plan_cache *cache)
{
    if (!cache)
        return NNOP_ERR_INVALID_ARGUMENT;
    return nnop__cache_save(cache, NULL, 0, NULL, 0);
}
