/* cache_test_util.h: helpers shared by the plan cache tests: deterministic entries, file
 * names, file I/O through the platform layer. Include after nnop_test.h. */
#ifndef NNOP_CACHE_TEST_UTIL_H
#define NNOP_CACHE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "platform/platform.h"

#define CT_CUDNN 91900u
#define CT_KEY   "NVIDIA H200/sm_90/132"

/* Fingerprint number i. */
static inline nnop__fp ct_fp(int64_t i)
{
    nnop__fp_builder b;
    nnop__fp_init(&b);
    nnop__fp_add_str(&b, "test");
    nnop__fp_add_i64(&b, i);
    return nnop__fp_final(&b);
}

/* Blob bytes of entry i: never contain the entry marker "NNCE" (lowercase letters only). */
static inline unsigned char ct_blob_byte(int64_t i, size_t k)
{
    return (unsigned char)('a' + (unsigned)((i * 7 + (int64_t)k * 13) % 26));
}

/* io list length of entry i: 0, 1, 16 (NNOP_CACHE_MAX_IO), 3, then again. */
static inline int32_t ct_n_io(int64_t i)
{
    static const int32_t n[4] = {0, 1, NNOP_CACHE_MAX_IO, 3};
    return n[(i % 4 + 4) % 4];
}

/* io pair j of entry i: small non-negative values, so no run of four nonzero bytes can form
 * the entry marker "NNCE" (the damage tests count on resyncing at real markers only). */
static inline nnop__cache_io ct_io(int64_t i, int32_t j)
{
    nnop__cache_io io;
    io.uid = 1000 * i + j + 1;
    io.bytes = 256 * (j + 1) + i;
    return io;
}

/* Entry i with a blob of blob_len bytes (malloc'd into e->blob; free with
 * nnop__cache_entry_clear) and ct_n_io(i) io pairs. */
static inline void ct_entry(int64_t i, size_t blob_len, nnop__cache_entry *e)
{
    size_t k;
    int32_t j;
    memset(e, 0, sizeof *e);
    e->engine_id = i;
    e->n_knobs = (int32_t)(i % 5);
    for (j = 0; j < e->n_knobs; j++) {
        e->knobs[j].type = j + 1;
        e->knobs[j].value = i * 100 + j;
    }
    e->time_us = (i % 2) ? -1.0f : 0.125f * (float)i;
    e->flags = (uint32_t)(i % 4);
    e->workspace_bytes = i * 4096;
    e->blob_len = blob_len;
    e->blob = blob_len ? malloc(blob_len) : NULL;
    for (k = 0; k < blob_len; k++)
        ((unsigned char *)e->blob)[k] = ct_blob_byte(i, k);
    e->n_io = ct_n_io(i);
    for (j = 0; j < e->n_io; j++)
        e->io[j] = ct_io(i, j);
}

/* 1 when e's io list is exactly a's: count and every uid and byte size. */
static inline int ct_io_equal(const nnop__cache_entry *e, const nnop__cache_entry *a)
{
    int32_t j;
    if (e->n_io != a->n_io)
        return 0;
    for (j = 0; j < a->n_io; j++)
        if (e->io[j].uid != a->io[j].uid || e->io[j].bytes != a->io[j].bytes)
            return 0;
    return 1;
}

/* 1 when e is exactly entry i (io list included) with a blob of blob_len bytes. */
static inline int ct_entry_matches(const nnop__cache_entry *e, int64_t i, size_t blob_len)
{
    nnop__cache_entry want;
    int ok;
    ct_entry(i, blob_len, &want);
    ok = e->engine_id == want.engine_id && e->n_knobs == want.n_knobs &&
         e->time_us == want.time_us && e->flags == want.flags &&
         e->workspace_bytes == want.workspace_bytes && e->blob_len == want.blob_len &&
         memcmp(e->knobs, want.knobs, sizeof want.knobs[0] * (size_t)want.n_knobs) == 0 &&
         (blob_len == 0 || memcmp(e->blob, want.blob, blob_len) == 0) && ct_io_equal(e, &want);
    nnop__cache_entry_clear(&want);
    return ok;
}

/* 1 when c holds entry i with a blob of blob_len bytes. */
static inline int ct_has(nnop_plan_cache *c, int64_t i, size_t blob_len)
{
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(i);
    int ok = nnop__cache_lookup(c, &fp, &e) && ct_entry_matches(&e, i, blob_len);
    nnop__cache_entry_clear(&e);
    return ok;
}

/* A file name unique to this process and test, in the working directory. */
static inline void ct_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "nnop_cache_test_%llu_%s.bin", (unsigned long long)nnop__process_id(), name);
}

static inline void ct_write(const char *path, const void *data, size_t len)
{
    FILE *f = nnop__fopen(path, "wb", NULL);
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Remove path and its lock file. */
static inline void ct_cleanup(const char *path)
{
    char lock[512];
    snprintf(lock, sizeof lock, "%s.lock", path);
    nnop__remove(path);
    nnop__remove(lock);
}

/* A bound cache (path may be NULL) with a load requested. */
static inline nnop_plan_cache *ct_cache(const char *path, size_t max_entries, size_t max_bytes)
{
    nnop_plan_cache *c = NULL;
    assert_int_equal(nnop__cache_create(path, max_entries, max_bytes, &c), NNOP_OK);
    assert_int_equal(nnop__cache_bind(c, CT_CUDNN, CT_KEY), NNOP_OK);
    return c;
}

/* Insert entry i with a blob of blob_len bytes. */
static inline void ct_insert(nnop_plan_cache *c, int64_t i, size_t blob_len)
{
    nnop__cache_entry e;
    nnop__fp fp = ct_fp(i);
    ct_entry(i, blob_len, &e);
    assert_int_equal(nnop__cache_insert(c, &fp, &e), NNOP_OK);
    nnop__cache_entry_clear(&e);
}

/* Serialize entries first..first+n-1 with blob lengths blob_len(i) = (i * 5) % 23. */
static inline size_t ct_blob_len(int64_t i)
{
    return (size_t)((i * 5) % 23);
}

static inline unsigned char *ct_file(uint64_t cudnn, const char *key, int64_t first, size_t n,
                                     size_t *len)
{
    nnop__fp fps[16];
    nnop__cache_entry es[16];
    unsigned char *out = NULL;
    size_t k;
    assert_true(n <= 16);
    for (k = 0; k < n; k++) {
        fps[k] = ct_fp(first + (int64_t)k);
        ct_entry(first + (int64_t)k, ct_blob_len(first + (int64_t)k), &es[k]);
    }
    assert_int_equal(nnop__cache_serialize(cudnn, key, n, fps, es, &out, len), NNOP_OK);
    for (k = 0; k < n; k++)
        nnop__cache_entry_clear(&es[k]);
    return out;
}

#endif /* NNOP_CACHE_TEST_UTIL_H */
