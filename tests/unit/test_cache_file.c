/* test_cache_file.c: the plan cache file: round trip, foreign and damaged files (every
 * truncation, every flipped byte), missing files, leftover temporary files, context wiring. */
#include "nnop_test.h"

#include "cache_test_util.h"
#include "internal.h"

/* ---------------------------------------------------------------- fingerprints */
static void test_fp_is_canonical_and_tagged(void **state)
{
    nnop__fp_builder a, b;
    nnop__fp fa, fb;
    (void)state;
    nnop__fp_init(&a);
    nnop__fp_add_str(&a, "ab");
    nnop__fp_add_str(&a, "c");
    nnop__fp_init(&b);
    nnop__fp_add_str(&b, "a");
    nnop__fp_add_str(&b, "bc");
    fa = nnop__fp_final(&a);
    fb = nnop__fp_final(&b);
    assert_false(nnop__fp_equal(&fa, &fb));

    nnop__fp_init(&b);
    nnop__fp_add_str(&b, "ab");
    nnop__fp_add_str(&b, "c");
    fb = nnop__fp_final(&b);
    assert_true(nnop__fp_equal(&fa, &fb));

    nnop__fp_init(&a);
    nnop__fp_add_i64(&a, 1);
    nnop__fp_init(&b);
    nnop__fp_add_f32(&b, 1.0f);
    fa = nnop__fp_final(&a);
    fb = nnop__fp_final(&b);
    assert_false(nnop__fp_equal(&fa, &fb));
    nnop__fp_init(&b);
    nnop__fp_add_str(&b, NULL);
    fb = nnop__fp_final(&b);
    nnop__fp_init(&a);
    nnop__fp_add_str(&a, "");
    fa = nnop__fp_final(&a);
    assert_false(nnop__fp_equal(&fa, &fb));
}

static nnop__fp context_fp(nnop_context *ctx, const nnop_tensor_desc *d)
{
    nnop__fp_builder b;
    nnop__fp_init(&b);
    nnop__fp_add_context(&b, ctx);
    nnop__fp_add_desc(&b, d);
    return nnop__fp_final(&b);
}

static void test_fp_context_covers_device_policy_and_desc(void **state)
{
    nnop_context_options o;
    nnop_context *a = NULL, *b = NULL;
    nnop_tensor_desc d = nnop_tensor_4d(NNOP_F16, NNOP_NHWC, 8, 64, 56, 56);
    nnop_tensor_desc d2 = nnop_tensor_4d(NNOP_F16, NNOP_NCHW, 8, 64, 56, 56);
    nnop__fp fa, fb;
    (void)state;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    assert_int_equal(nnop_context_create(&o, &a), NNOP_OK);
    o.policy = NNOP_POLICY_FASTEST;
    assert_int_equal(nnop_context_create(&o, &b), NNOP_OK);
    fa = context_fp(a, &d);
    fb = context_fp(b, &d);
    assert_false(nnop__fp_equal(&fa, &fb)); /* policy */
    fb = context_fp(a, &d2);
    assert_false(nnop__fp_equal(&fa, &fb)); /* strides */
    assert_int_equal(nnop__context_cache_bind(a, CT_CUDNN, "NVIDIA H200", 90, 132), NNOP_OK);
    fb = context_fp(a, &d);
    assert_false(nnop__fp_equal(&fa, &fb)); /* device and cuDNN */
    fa = context_fp(a, &d);
    assert_true(nnop__fp_equal(&fa, &fb));
    nnop_context_destroy(a);
    nnop_context_destroy(b);
}

static void test_hash_known_answers(void **state)
{
    const char *fox = "The quick brown fox jumps over the lazy dog";
    nnop__h128 h;
    uint64_t lo, hi;
    size_t i;
    (void)state;
    assert_int_equal(nnop__crc32(0, "123456789", 9), 0xcbf43926u);
    /* MurmurHash3 x64-128, seed 0, published value for this sentence */
    nnop__h128_init(&h);
    for (i = 0; i < strlen(fox); i++) /* byte by byte: streaming equals one shot */
        nnop__h128_update(&h, fox + i, 1);
    nnop__h128_final(&h, &lo, &hi);
    assert_true(lo == 0xe34bbc7bbc071b6cULL);
    assert_true(hi == 0x7a433ca9c49a9347ULL);
}

/* ---------------------------------------------------------------- round trip */
static void test_cache_file_round_trip(void **state)
{
    static const size_t blobs[] = {0, 1, 777, 200000, 0, 4096};
    char path[256];
    nnop_plan_cache *a, *b;
    nnop_cache_stats st;
    nnop__cache_report rep;
    size_t i;
    (void)state;
    /* entries 0, 1, 2 carry 0, 1 and 16 io pairs; ct_has compares every uid and size */
    assert_int_equal(ct_n_io(0), 0);
    assert_int_equal(ct_n_io(1), 1);
    assert_int_equal(ct_n_io(2), NNOP_CACHE_MAX_IO);
    ct_path(path, sizeof path, "roundtrip");
    ct_cleanup(path);
    a = ct_cache(path, 0, 0);
    for (i = 0; i < sizeof blobs / sizeof blobs[0]; i++)
        ct_insert(a, (int64_t)i, blobs[i]);
    assert_int_equal(nnop__cache_save(a, NULL, 1, NULL, 0), NNOP_OK);
    nnop__cache_stats(a, &st);
    assert_int_equal(st.saves, 1);
    nnop__cache_release(a);

    b = ct_cache(NULL, 0, 0);
    assert_int_equal(nnop__cache_load(b, path, &rep), NNOP_OK);
    assert_int_equal(rep.status, NNOP_OK);
    assert_int_equal(rep.entries_ok, 6);
    for (i = 0; i < sizeof blobs / sizeof blobs[0]; i++)
        assert_true(ct_has(b, (int64_t)i, blobs[i]));
    nnop__cache_stats(b, &st);
    assert_int_equal(st.entries, 6);
    assert_int_equal(st.entries_loaded, 6);
    assert_int_equal(st.ignored_corrupt + st.ignored_other_device + st.ignored_other_cudnn, 0);
    assert_int_equal(st.hits, 6);
    nnop__cache_release(b);
    ct_cleanup(path);
}

/* ---------------------------------------------------------------- io lists */
/* What nnop__cache_parse handed out (blobs still point into the parsed buffer). */
typedef struct parsed {
    nnop__fp fp[4];
    nnop__cache_entry e[4];
    int n;
} parsed;

static int collect(void *user, const nnop__fp *fp, const nnop__cache_entry *e)
{
    parsed *p = (parsed *)user;
    assert_true(p->n < 4);
    p->fp[p->n] = *fp;
    p->e[p->n++] = *e;
    return 0;
}

static parsed parse_all(const unsigned char *f, size_t len, nnop__cache_report *rep)
{
    parsed p;
    memset(&p, 0, sizeof p);
    nnop__cache_parse(f, len, CT_CUDNN, CT_KEY, collect, &p, rep);
    return p;
}

/* An entry whose io list spans the whole int64 range: signed values survive the u64 field. */
/* Entry 7 with n_io pairs of extreme distinct uids and byte sizes over the whole accepted
 * range, 1 to 2^42 (what the reader accepts: see test_cache_hostile.c). */
static void wide_io_entry(int32_t n_io, nnop__cache_entry *e)
{
    static const int64_t v[] = {INT64_MIN, -1, 0, 1, INT64_MAX, 0x0123456789abcdefLL};
    static const int64_t b[] = {1, (int64_t)1 << 42, 255, 256, 0x0123456789LL, 3};
    int32_t j;
    ct_entry(7, 5, e);
    e->n_io = n_io;
    for (j = 0; j < n_io; j++) {
        e->io[j].uid = v[(size_t)j % 6] ^ ((int64_t)j << 32);
        e->io[j].bytes = b[(size_t)(j + 3) % 6] + j;
        if (e->io[j].bytes > (int64_t)1 << 42)
            e->io[j].bytes = (int64_t)1 << 42;
    }
}

static void test_cache_file_io_list_round_trip(void **state)
{
    static const int32_t counts[3] = {0, 1, NNOP_CACHE_MAX_IO};
    nnop__fp fps[3];
    nnop__cache_entry es[3];
    nnop__cache_report rep;
    unsigned char *f = NULL;
    size_t len = 0;
    parsed p;
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        fps[k] = ct_fp(100 + k);
        wide_io_entry(counts[k], &es[k]);
    }
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 3, fps, es, &f, &len), NNOP_OK);
    p = parse_all(f, len, &rep);
    assert_int_equal(rep.status, NNOP_OK);
    assert_int_equal(p.n, 3);
    for (k = 0; k < 3; k++) {
        int32_t j;
        assert_true(nnop__fp_equal(&p.fp[k], &fps[k]));
        assert_int_equal(p.e[k].n_io, counts[k]);
        for (j = 0; j < counts[k]; j++) {
            assert_true(p.e[k].io[j].uid == es[k].io[j].uid);
            assert_true(p.e[k].io[j].bytes == es[k].io[j].bytes);
        }
        for (; j < NNOP_CACHE_MAX_IO; j++) /* nothing past the count */
            assert_true(p.e[k].io[j].uid == 0 && p.e[k].io[j].bytes == 0);
        assert_int_equal(p.e[k].blob_len, 5); /* the io list follows the blob: both intact */
        assert_memory_equal(p.e[k].blob, es[k].blob, 5);
        assert_int_equal(p.e[k].engine_id, 7);
    }
    free(f);
    for (k = 0; k < 3; k++)
        nnop__cache_entry_clear(&es[k]);
}

static void test_cache_file_serialize_rejects_bad_io_count(void **state)
{
    nnop__fp fp = ct_fp(1);
    nnop__cache_entry e;
    unsigned char *f = NULL;
    size_t len = 0;
    (void)state;
    wide_io_entry(NNOP_CACHE_MAX_IO, &e);
    e.n_io = NNOP_CACHE_MAX_IO + 1;
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 1, &fp, &e, &f, &len),
                     NNOP_ERR_INVALID_ARGUMENT);
    e.n_io = -1;
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 1, &fp, &e, &f, &len),
                     NNOP_ERR_INVALID_ARGUMENT);
    assert_null(f);
    nnop__cache_entry_clear(&e);
}

static void put_u32(unsigned char *p, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A file of two entries (fingerprints 1, 2; 16 io pairs each) in which the first record's io
 * count is set to n_io and its io list cut or padded (0x11 bytes) to io_len bytes, with its
 * length and checksum made to match: only the payload's own consistency can reject it. */
static unsigned char *forge_io(uint32_t n_io, size_t io_len, size_t *out_len, size_t *hlen)
{
    nnop__fp fps[2] = {ct_fp(1), ct_fp(2)};
    nnop__cache_entry es[2];
    unsigned char *f = NULL, *g, *h;
    size_t len, plen, io_at, rest, glen, k;
    uint32_t crc;
    for (k = 0; k < 2; k++)
        wide_io_entry(NNOP_CACHE_MAX_IO, &es[k]);
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 2, fps, es, &f, &len), NNOP_OK);
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, 0, fps, es, &h, hlen), NNOP_OK);
    free(h);
    plen = get_u32(f + *hlen + 4);
    io_at = *hlen + 12 + plen - 16 * NNOP_CACHE_MAX_IO; /* after the n_io field */
    rest = *hlen + 12 + plen;                           /* the second record */
    glen = io_at + io_len + (len - rest);
    g = (unsigned char *)calloc(1, glen);
    assert_non_null(g);
    memcpy(g, f, io_at);
    put_u32(g + io_at - 4, n_io);
    memset(g + io_at, 0x11, io_len);
    memcpy(g + io_at, f + io_at, io_len < 16 * NNOP_CACHE_MAX_IO ? io_len : 16 * NNOP_CACHE_MAX_IO);
    memcpy(g + io_at + io_len, f + rest, len - rest);
    plen = io_at + io_len - (*hlen + 12);
    put_u32(g + *hlen + 4, (uint32_t)plen);
    crc = nnop__crc32(0, g + *hlen + 4, 4);
    put_u32(g + *hlen + 8, nnop__crc32(crc, g + *hlen + 12, plen));
    for (k = 0; k < 2; k++)
        nnop__cache_entry_clear(&es[k]);
    free(f);
    *out_len = glen;
    return g;
}

/* 1 when the forged first entry loads (with n_io pairs), 0 when it alone is rejected. */
static int forged_first_loads(uint32_t n_io, size_t io_len)
{
    nnop__fp want2 = ct_fp(2);
    nnop__cache_report rep;
    size_t len, hlen;
    unsigned char *f = forge_io(n_io, io_len, &len, &hlen);
    parsed p = parse_all(f, len, &rep);
    int loaded = p.n == 2;
    assert_true(p.n == 1 || p.n == 2);
    /* the second entry always survives: reading resumes right after the first record */
    assert_true(nnop__fp_equal(&p.fp[p.n - 1], &want2));
    assert_int_equal(p.e[p.n - 1].n_io, NNOP_CACHE_MAX_IO);
    if (loaded) {
        assert_int_equal(rep.status, NNOP_OK);
        assert_int_equal(p.e[0].n_io, (int32_t)n_io);
    } else {
        assert_int_equal(rep.ignored_corrupt, 1);
        assert_int_equal(rep.offset, hlen);
        assert_non_null(strstr(rep.message, "malformed entry"));
    }
    free(f);
    return loaded;
}

static void test_cache_file_io_count_over_max_rejected(void **state)
{
    (void)state;
    assert_true(forged_first_loads(NNOP_CACHE_MAX_IO, 16 * NNOP_CACHE_MAX_IO)); /* control */
    assert_true(forged_first_loads(2, 32));
    assert_false(forged_first_loads(NNOP_CACHE_MAX_IO + 1, 16 * (NNOP_CACHE_MAX_IO + 1)));
    assert_false(forged_first_loads(0xffffffffu, 16 * NNOP_CACHE_MAX_IO));
}

static void test_cache_file_io_length_mismatch_rejected(void **state)
{
    (void)state;
    assert_true(forged_first_loads(0, 0)); /* control: an empty io list */
    assert_false(forged_first_loads(0, 16));
    assert_false(forged_first_loads(1, 0));
    assert_false(forged_first_loads(NNOP_CACHE_MAX_IO, 16 * NNOP_CACHE_MAX_IO - 16));
    assert_false(forged_first_loads(NNOP_CACHE_MAX_IO, 16 * NNOP_CACHE_MAX_IO - 1));
    assert_false(forged_first_loads(NNOP_CACHE_MAX_IO - 1, 16 * NNOP_CACHE_MAX_IO));
    assert_false(forged_first_loads(3, 16 * 3 + 1));
    assert_false(forged_first_loads(3, 16 * 3 + 8));
}

/* Load f into a fresh bound cache; its report in *rep, the cache returned. */
static nnop_plan_cache *load_bytes(const char *path, const unsigned char *f, size_t len,
                                   nnop__cache_report *rep)
{
    nnop_plan_cache *c;
    ct_write(path, f, len);
    c = ct_cache(NULL, 0, 0); /* no path of its own: releasing it writes nothing */
    assert_int_equal(nnop__cache_load(c, path, rep), NNOP_OK);
    return c;
}

/* ---------------------------------------------------------------- foreign files */
static void test_cache_file_wrong_magic_is_ignored_not_overwritten(void **state)
{
    char path[256];
    size_t len, len2;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 3, &len), *back;
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    char msg[256];
    (void)state;
    ct_path(path, sizeof path, "magic");
    f[0] = 'X';
    c = load_bytes(path, f, len, &rep);
    assert_true(rep.rejected);
    assert_int_equal(rep.status, NNOP_ERR_FORMAT);
    assert_int_equal(rep.offset, 0);
    assert_non_null(strstr(rep.message, "offset 0: "));
    assert_non_null(strstr(rep.message, "magic"));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.files_rejected, 1);
    assert_int_equal(st.entries, 0);
    /* somebody else's file: saving refuses to destroy it */
    ct_insert(c, 99, 3);
    assert_int_equal(nnop__cache_save(c, path, 0, msg, sizeof msg), NNOP_ERR_IO);
    assert_non_null(strstr(msg, "not an nnop plan cache"));
    back = nnop_test_read_file(path, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(back, f, len);
    free(back);
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_wrong_version_is_rejected(void **state)
{
    char path[256];
    size_t len;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 3, &len);
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "version");
    f[8] = 3; /* format version 3 */
    c = load_bytes(path, f, len, &rep);
    assert_true(rep.rejected);
    assert_int_equal(rep.status, NNOP_ERR_FORMAT);
    assert_non_null(strstr(rep.message, "offset 8: format version 3, this nnop reads 2"));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.files_rejected, 1);
    assert_int_equal(st.entries, 0);
    /* a future version's file is replaced by ours (same magic: it is a cache file) */
    ct_insert(c, 5, 1);
    assert_int_equal(nnop__cache_save(c, path, 1, NULL, 0), NNOP_OK);
    nnop__cache_release(c);
    c = ct_cache(path, 0, 0);
    assert_true(ct_has(c, 5, 1));
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

/* What a version-1 writer made of entries 0..n-1: the same records without the io count,
 * under a header saying version 1 with a matching checksum. */
static unsigned char *v1_file(size_t n, size_t *out_len)
{
    nnop__fp fps[4];
    nnop__cache_entry es[4];
    unsigned char *f = NULL, *g;
    size_t len, hlen, off, out, k;
    assert_true(n <= 4);
    for (k = 0; k < n; k++) {
        fps[k] = ct_fp((int64_t)k);
        ct_entry((int64_t)k, ct_blob_len((int64_t)k), &es[k]);
        es[k].n_io = 0; /* its record then ends in the io count alone: 4 bytes to drop */
    }
    assert_int_equal(nnop__cache_serialize(CT_CUDNN, CT_KEY, n, fps, es, &f, &len), NNOP_OK);
    g = (unsigned char *)malloc(len);
    assert_non_null(g);
    hlen = get_u32(f + 12);
    memcpy(g, f, hlen);
    put_u32(g + 8, 1);
    put_u32(g + hlen - 4, nnop__crc32(0, g, hlen - 4));
    for (off = out = hlen; off < len;) {
        uint32_t plen = get_u32(f + off + 4) - 4, crc;
        assert_int_equal(get_u32(f + off + 12 + plen), 0); /* the dropped io count */
        memcpy(g + out, f + off, 4);
        put_u32(g + out + 4, plen);
        memcpy(g + out + 12, f + off + 12, plen);
        crc = nnop__crc32(0, g + out + 4, 4);
        put_u32(g + out + 8, nnop__crc32(crc, g + out + 12, plen));
        off += 12 + plen + 4;
        out += 12 + plen;
    }
    for (k = 0; k < n; k++)
        nnop__cache_entry_clear(&es[k]);
    free(f);
    *out_len = out;
    return g;
}

static void test_cache_file_version_1_is_rejected_and_replaced(void **state)
{
    char path[256];
    size_t len, len2;
    unsigned char *f = v1_file(3, &len), *back;
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "v1");
    /* entry 0 has no knobs and no blob: a version-1 payload of 48 bytes */
    assert_int_equal(get_u32(f + get_u32(f + 12) + 4), 48);
    c = load_bytes(path, f, len, &rep); /* asserts NNOP_OK: never the user's error */
    assert_true(rep.rejected);
    assert_int_equal(rep.status, NNOP_ERR_FORMAT);
    assert_non_null(strstr(rep.message, "offset 8: format version 1, this nnop reads 2"));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.files_rejected, 1);
    assert_int_equal(st.entries + st.ignored_corrupt + st.ignored_other_device, 0);
    assert_int_equal(nnop__cache_check_file(path, CT_CUDNN, CT_KEY, &rep), NNOP_ERR_FORMAT);
    assert_int_equal(rep.offset, 8);
    /* rejected counts as dirty: the next save writes a clean version-2 file, nothing new */
    assert_int_equal(nnop__cache_save(c, path, 1, NULL, 0), NNOP_OK);
    nnop__cache_release(c);
    back = nnop_test_read_file(path, &len2);
    assert_non_null(back);
    assert_true(len2 >= 12 && get_u32(back + 8) == 2);
    free(back);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.files_rejected + st.entries, 0);
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

static void check_foreign(const char *name, uint64_t cudnn, const char *key, int device)
{
    char path[256];
    size_t len;
    unsigned char *f = ct_file(cudnn, key, 0, 4, &len);
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    ct_path(path, sizeof path, name);
    c = load_bytes(path, f, len, &rep);
    assert_false(rep.rejected);
    assert_int_equal(rep.status, NNOP_ERR_VERSION);
    assert_non_null(strstr(rep.message, "written for"));
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.ignored_other_device, device ? 4 : 0);
    assert_int_equal(st.ignored_other_cudnn, device ? 0 : 4);
    assert_int_equal(st.ignored_corrupt, 0);
    assert_int_equal(st.files_rejected, 0);
    /* not dirty: a context that only read it leaves the other device's file alone */
    assert_int_equal(nnop__cache_save(c, path, 1, NULL, 0), NNOP_OK);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.saves, 0);
    /* new entries replace it with a file of this device */
    ct_insert(c, 7, 2);
    assert_int_equal(nnop__cache_save(c, path, 1, NULL, 0), NNOP_OK);
    nnop__cache_release(c);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 1);
    assert_true(ct_has(c, 7, 2));
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_other_cudnn_entries_ignored(void **state)
{
    (void)state;
    check_foreign("cudnn", 91400, CT_KEY, 0);
}

static void test_cache_file_other_device_entries_ignored(void **state)
{
    (void)state;
    check_foreign("device", CT_CUDNN, "NVIDIA A100-SXM4-80GB/sm_80/108", 1);
}

/* ---------------------------------------------------------------- damage */
static void test_cache_file_truncated_at_every_offset(void **state)
{
    enum { N = 4 };
    char path[256];
    size_t len, bound[N + 1], cut, k;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, N, &len);
    (void)state;
    ct_path(path, sizeof path, "trunc");
    for (k = 0; k <= N; k++) { /* bound[k]: end of the first k records */
        unsigned char *p = ct_file(CT_CUDNN, CT_KEY, 0, k, &bound[k]);
        assert_memory_equal(p, f, bound[k]);
        free(p);
    }
    assert_int_equal(bound[N], len);
    for (cut = 0; cut <= len; cut++) {
        nnop__cache_report rep;
        nnop_cache_stats st;
        nnop_plan_cache *c = load_bytes(path, f, cut, &rep);
        size_t complete = 0;
        while (complete < N && bound[complete + 1] <= cut)
            complete++;
        nnop__cache_stats(c, &st);
        if (cut < bound[0]) {
            assert_true(rep.rejected);
            assert_int_equal(st.entries, 0);
        } else {
            assert_false(rep.rejected);
            assert_int_equal(st.entries, complete);
            assert_int_equal(st.ignored_corrupt, cut == bound[complete] ? 0 : 1);
            assert_int_equal(rep.status, cut == bound[complete] ? NNOP_OK : NNOP_ERR_FORMAT);
            for (k = 0; k < complete; k++)
                assert_true(ct_has(c, (int64_t)k, ct_blob_len((int64_t)k)));
        }
        nnop__cache_release(c);
    }
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_every_flipped_byte(void **state)
{
    enum { N = 4 };
    char path[256];
    size_t len, hlen, i;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, N, &len), *h;
    static const unsigned char flips[] = {0xff, 0x01, 0x80};
    (void)state;
    ct_path(path, sizeof path, "flip");
    h = ct_file(CT_CUDNN, CT_KEY, 0, 0, &hlen);
    free(h);
    for (i = 0; i < len; i++) {
        size_t j;
        for (j = 0; j < sizeof flips; j++) {
            nnop__cache_report rep;
            nnop_cache_stats st;
            nnop_plan_cache *c;
            int64_t k;
            size_t found = 0;
            f[i] ^= flips[j];
            c = load_bytes(path, f, len, &rep);
            nnop__cache_stats(c, &st);
            if (i < hlen) {
                assert_true(rep.rejected);
                assert_int_equal(st.entries, 0);
            } else { /* exactly the damaged entry is lost */
                assert_int_equal(st.entries, N - 1);
                assert_int_equal(st.ignored_corrupt, 1);
                assert_int_equal(rep.status, NNOP_ERR_FORMAT);
            }
            for (k = 0; k < N; k++) /* whatever loaded is intact */
                found += (size_t)ct_has(c, k, ct_blob_len(k));
            assert_int_equal(found, st.entries);
            nnop__cache_release(c);
            f[i] ^= flips[j];
        }
    }
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_corrupt_file_is_rewritten_clean(void **state)
{
    char path[256];
    size_t len;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 3, &len);
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "rewrite");
    f[len - 1] ^= 0x55; /* last entry damaged */
    c = load_bytes(path, f, len, &rep);
    assert_int_equal(rep.ignored_corrupt, 1);
    assert_int_equal(nnop__cache_save(c, path, 1, NULL, 0), NNOP_OK); /* dirty: rewritten */
    nnop__cache_release(c);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 2);
    assert_int_equal(st.ignored_corrupt, 0);
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_huge_length_field_is_bounded(void **state)
{
    char path[256];
    size_t len, hlen;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 2, &len), *h;
    nnop__cache_report rep;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "huge");
    h = ct_file(CT_CUDNN, CT_KEY, 0, 0, &hlen);
    free(h);
    memset(f + hlen + 4, 0xff, 4); /* first entry claims 4 GiB */
    c = load_bytes(path, f, len, &rep);
    assert_int_equal(rep.status, NNOP_ERR_FORMAT);
    assert_int_equal(rep.offset, hlen + 4);
    assert_non_null(strstr(rep.message, "out of range"));
    assert_int_equal(rep.entries_ok, 1);
    nnop__cache_release(c);
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_check_for_doctor(void **state)
{
    char path[256];
    size_t len, hlen;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 3, &len), *h;
    nnop__cache_report rep;
    (void)state;
    ct_path(path, sizeof path, "check");
    ct_cleanup(path);
    assert_int_equal(nnop__cache_check_file(path, CT_CUDNN, CT_KEY, &rep), NNOP_OK);
    assert_true(rep.missing);
    ct_write(path, f, len);
    assert_int_equal(nnop__cache_check_file(path, CT_CUDNN, CT_KEY, &rep), NNOP_OK);
    assert_int_equal(rep.entries_ok, 3);
    assert_int_equal(nnop__cache_check_file(path, 91400, CT_KEY, &rep), NNOP_ERR_VERSION);
    assert_int_equal(rep.ignored_other_cudnn, 3);
    assert_int_equal(nnop__cache_check_file(path, 0, NULL, &rep), NNOP_OK); /* any device */
    h = ct_file(CT_CUDNN, CT_KEY, 0, 1, &hlen); /* end of the first record */
    free(h);
    f[hlen + 9] ^= 1; /* second record's checksum */
    ct_write(path, f, len);
    assert_int_equal(nnop__cache_check_file(path, CT_CUDNN, CT_KEY, &rep), NNOP_ERR_FORMAT);
    assert_int_equal(rep.offset, hlen);
    assert_int_equal(rep.entries_ok, 2);
    assert_int_equal(rep.ignored_corrupt, 1);
    assert_non_null(strstr(rep.message, "checksum"));
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_missing_is_fine(void **state)
{
    char path[256];
    nnop__cache_report rep;
    nnop_cache_stats st;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "missing");
    ct_cleanup(path);
    c = ct_cache(path, 0, 0);
    assert_int_equal(nnop__cache_load(c, NULL, &rep), NNOP_OK);
    assert_true(rep.missing);
    assert_int_equal(rep.status, NNOP_OK);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries + st.files_rejected + st.ignored_corrupt, 0);
    assert_int_equal(nnop__cache_load(c, "no_such_dir_nnop/x/cache.bin", &rep), NNOP_OK);
    assert_true(rep.missing);
    nnop__cache_release(c);
}

static void test_cache_file_leftover_temp_file_is_harmless(void **state)
{
    char path[256], tmp[300];
    size_t len;
    unsigned char *f = ct_file(CT_CUDNN, CT_KEY, 0, 3, &len);
    nnop_cache_stats st;
    nnop_plan_cache *c;
    (void)state;
    ct_path(path, sizeof path, "leftover");
    ct_write(path, f, len);
    /* a crash mid-write leaves half a temporary file behind; the real file is untouched */
    snprintf(tmp, sizeof tmp, "%s.tmp.1.2.3", path);
    ct_write(tmp, f, len / 2);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 3);
    ct_insert(c, 10, 4);
    assert_int_equal(nnop__cache_save(c, NULL, 1, NULL, 0), NNOP_OK);
    nnop__cache_release(c);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 4);
    assert_int_equal(st.ignored_corrupt + st.files_rejected, 0);
    nnop__cache_release(c);
    nnop__remove(tmp);
    free(f);
    ct_cleanup(path);
}

static void test_cache_file_merge_keeps_other_writers_entries(void **state)
{
    char path[256];
    nnop_plan_cache *a, *b, *c;
    nnop_cache_stats st;
    (void)state;
    ct_path(path, sizeof path, "merge");
    ct_cleanup(path);
    a = ct_cache(path, 0, 0);
    b = ct_cache(path, 0, 0);
    ct_insert(a, 1, 10);
    ct_insert(a, 2, 0);
    ct_insert(b, 3, 5);
    ct_insert(b, 2, 7); /* both wrote fingerprint 2: the later save wins */
    assert_int_equal(nnop__cache_save(a, NULL, 1, NULL, 0), NNOP_OK);
    assert_int_equal(nnop__cache_save(b, NULL, 1, NULL, 0), NNOP_OK);
    c = ct_cache(path, 0, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 3);
    assert_true(ct_has(c, 1, 10));
    assert_true(ct_has(c, 2, 7));
    assert_true(ct_has(c, 3, 5));
    nnop__cache_release(a);
    nnop__cache_release(b);
    nnop__cache_release(c);
    ct_cleanup(path);
}

static void test_cache_file_merge_respects_entry_bound(void **state)
{
    char path[256];
    nnop_plan_cache *a, *b, *c;
    nnop_cache_stats st;
    int64_t i;
    (void)state;
    ct_path(path, sizeof path, "mergebound");
    ct_cleanup(path);
    a = ct_cache(path, 4, 0);
    for (i = 0; i < 4; i++)
        ct_insert(a, i, 1);
    assert_int_equal(nnop__cache_save(a, NULL, 1, NULL, 0), NNOP_OK);
    b = ct_cache(NULL, 4, 0); /* memory only, then saved to the same file */
    nnop__cache_release(a);
    for (i = 10; i < 12; i++)
        ct_insert(b, i, 1);
    assert_int_equal(nnop__cache_save(b, path, 0, NULL, 0), NNOP_OK);
    c = ct_cache(path, 16, 0);
    nnop__cache_stats(c, &st);
    assert_int_equal(st.entries, 4); /* b's two and the file's two newest */
    assert_true(ct_has(c, 10, 1));
    assert_true(ct_has(c, 11, 1));
    assert_true(ct_has(c, 2, 1));
    assert_true(ct_has(c, 3, 1));
    nnop__cache_release(b);
    nnop__cache_release(c);
    ct_cleanup(path);
}

static void test_cache_file_unwritable_path_reports_io(void **state)
{
    nnop_plan_cache *c = ct_cache("no_such_dir_nnop/x/cache.bin", 0, 0);
    char msg[256];
    (void)state;
    ct_insert(c, 1, 1);
    assert_int_equal(nnop__cache_save(c, NULL, 0, msg, sizeof msg), NNOP_ERR_IO);
    assert_non_null(strstr(msg, "no_such_dir_nnop/x/cache.bin"));
    nnop__cache_release(c); /* save-on-release fails quietly */
}

/* ---------------------------------------------------------------- contexts */
static nnop_context *cache_context(const char *path, nnop_plan_cache *shared)
{
    nnop_context_options o;
    nnop_context *ctx = NULL;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    o.cache_path = path;
    o.plan_cache = shared;
    assert_int_equal(nnop_context_create(&o, &ctx), NNOP_OK);
    return ctx;
}

/* nnop_graph_warmup of a one-node graph on a CPU context with cache file path (NULL: none);
 * its status, the context's message into msg. */
static nnop_status warmup_status(const char *path, char *msg, size_t len)
{
    nnop_context *ctx = cache_context(path, NULL);
    nnop_graph *g = NULL;
    nnop_tensor_desc d = nnop_tensor_2d(NNOP_F32, 2, 2);
    nnop_status st;
    assert_int_equal(nnop_graph_create(ctx, &g), NNOP_OK);
    assert_int_equal(nnop_output(g, nnop_act(g, nnop_input(g, "x", &d), NNOP_ACT_RELU, 0.f), "y"),
                     NNOP_OK);
    st = nnop_graph_warmup(g, NULL);
    snprintf(msg, len, "%s", nnop_context_last_error(ctx));
    nnop_graph_destroy(g);
    nnop_context_destroy(ctx);
    return st;
}

/* Warm-up writes a file or fails: without a file to write, and on the CPU (no plans to
 * cache), it once returned NNOP_OK and wrote nothing (found by the outside server test). */
static void test_warmup_refuses_what_would_write_nothing(void **state)
{
    char path[256], msg[NNOP_ERROR_LEN];
    (void)state;
    ct_path(path, sizeof path, "warm");
    ct_cleanup(path);
    assert_int_equal(warmup_status(NULL, msg, sizeof msg), NNOP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "has no cache file to write"));
    assert_int_equal(warmup_status(path, msg, sizeof msg), NNOP_ERR_NO_DEVICE);
    assert_non_null(strstr(msg, "runs on the CPU"));
    assert_int_equal(nnop_graph_warmup(NULL, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_null(fopen(path, "rb")); /* nothing was written */
}

static void test_cache_context_saves_on_destroy(void **state)
{
    char path[256], copy[256];
    nnop_context *ctx;
    nnop_cache_stats st;
    (void)state;
    ct_path(path, sizeof path, "ctx");
    ct_cleanup(path);
    memcpy(copy, path, sizeof copy);
    ctx = cache_context(copy, NULL);
    memset(copy, 0, sizeof copy); /* the context kept its own copy of the path */
    assert_string_equal(ctx->opts.cache_path, path);
    assert_int_equal(nnop_context_cache_stats(ctx, &st), NNOP_OK);
    assert_int_equal(st.entries, 0);
    /* the CPU backend never binds: explicit save is a no-op */
    assert_int_equal(nnop_cache_save(ctx), NNOP_OK);
    assert_int_equal(nnop_cache_load(ctx), NNOP_OK);
    /* what the CUDA backend does at context creation */
    assert_int_equal(nnop__context_cache_bind(ctx, CT_CUDNN, "NVIDIA H200", 90, 132), NNOP_OK);
    ct_insert(ctx->plan_cache, 42, 100);
    nnop__cache_add_time(ctx->plan_cache, NNOP_CACHE_T_HEURISTICS, 5);
    nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_BUILT);
    assert_int_equal(nnop_context_cache_stats(ctx, &st), NNOP_OK);
    assert_int_equal(st.inserts, 1);
    assert_int_equal(st.heuristics_ns, 5);
    assert_int_equal(st.plans_built, 1);
    nnop_context_destroy(ctx);

    ctx = cache_context(path, NULL);
    assert_int_equal(nnop__context_cache_bind(ctx, CT_CUDNN, "NVIDIA H200", 90, 132), NNOP_OK);
    assert_true(ct_has(ctx->plan_cache, 42, 100));
    assert_int_equal(nnop_context_cache_stats(ctx, &st), NNOP_OK);
    assert_int_equal(st.entries_loaded, 1);
    assert_int_equal(st.hits, 1);
    nnop_context_destroy(ctx);
    ct_cleanup(path);
}

static void test_cache_context_shared_cache(void **state)
{
    char path[256];
    nnop_plan_cache *shared = NULL;
    nnop_context *a, *b;
    nnop_cache_stats st;
    (void)state;
    ct_path(path, sizeof path, "shared");
    ct_cleanup(path);
    assert_int_equal(nnop_plan_cache_create(path, 0, &shared), NNOP_OK);
    a = cache_context(NULL, shared);
    b = cache_context("ignored_when_shared.bin", shared);
    assert_ptr_equal(a->plan_cache, shared);
    assert_ptr_equal(b->plan_cache, shared);
    assert_string_equal(b->opts.cache_path, path);
    nnop_plan_cache_destroy(shared); /* contexts keep it alive */
    assert_int_equal(nnop__context_cache_bind(a, CT_CUDNN, "NVIDIA H200", 90, 132), NNOP_OK);
    assert_int_equal(nnop__context_cache_bind(b, CT_CUDNN, "NVIDIA H200", 90, 132), NNOP_OK);
    ct_insert(a->plan_cache, 1, 3);
    assert_true(ct_has(b->plan_cache, 1, 3));
    { /* a context on another kind of device gets a private cache, never the shared one */
        nnop_context *other = cache_context(NULL, shared);
        assert_int_equal(nnop__context_cache_bind(other, CT_CUDNN, "NVIDIA A100", 80, 108),
                         NNOP_OK);
        assert_ptr_not_equal(other->plan_cache, shared);
        assert_null(other->opts.cache_path);
        assert_false(ct_has(other->plan_cache, 1, 3));
        nnop_context_destroy(other);
    }
    assert_int_equal(nnop_context_cache_stats(b, &st), NNOP_OK);
    assert_int_equal(st.inserts, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(nnop_cache_save(a), NNOP_OK);
    nnop_context_destroy(a);
    nnop_context_destroy(b);

    assert_int_equal(nnop_plan_cache_create(path, 0, &shared), NNOP_OK);
    assert_int_equal(nnop__cache_bind(shared, CT_CUDNN, "NVIDIA H200/sm_90/132"), NNOP_OK);
    assert_int_equal(nnop_plan_cache_stats(shared, &st), NNOP_OK);
    assert_int_equal(st.entries, 1);
    nnop_plan_cache_destroy(shared);
    ct_cleanup(path);
}

static void test_cache_public_api_rejects_null(void **state)
{
    nnop_cache_stats st;
    nnop_plan_cache *c = NULL;
    (void)state;
    assert_int_equal(nnop_context_cache_stats(NULL, &st), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_cache_save(NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_cache_load(NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_cache_create(NULL, 0, NULL), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_cache_stats(NULL, &st), NNOP_ERR_INVALID_ARGUMENT);
    assert_int_equal(nnop_plan_cache_save(NULL), NNOP_ERR_INVALID_ARGUMENT);
    nnop_plan_cache_destroy(NULL);
    assert_int_equal(nnop_plan_cache_create(NULL, 0, &c), NNOP_OK); /* memory only */
    assert_int_equal(nnop_plan_cache_save(c), NNOP_OK);
    nnop_plan_cache_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fp_is_canonical_and_tagged),
            cmocka_unit_test(test_fp_context_covers_device_policy_and_desc),
            cmocka_unit_test(test_hash_known_answers),
            cmocka_unit_test(test_cache_file_round_trip),
            cmocka_unit_test(test_cache_file_io_list_round_trip),
            cmocka_unit_test(test_cache_file_serialize_rejects_bad_io_count),
            cmocka_unit_test(test_cache_file_io_count_over_max_rejected),
            cmocka_unit_test(test_cache_file_io_length_mismatch_rejected),
            cmocka_unit_test(test_cache_file_wrong_magic_is_ignored_not_overwritten),
            cmocka_unit_test(test_cache_file_wrong_version_is_rejected),
            cmocka_unit_test(test_cache_file_version_1_is_rejected_and_replaced),
            cmocka_unit_test(test_cache_file_other_cudnn_entries_ignored),
            cmocka_unit_test(test_cache_file_other_device_entries_ignored),
            cmocka_unit_test(test_cache_file_truncated_at_every_offset),
            cmocka_unit_test(test_cache_file_every_flipped_byte),
            cmocka_unit_test(test_cache_file_corrupt_file_is_rewritten_clean),
            cmocka_unit_test(test_cache_file_huge_length_field_is_bounded),
            cmocka_unit_test(test_cache_file_check_for_doctor),
            cmocka_unit_test(test_cache_file_missing_is_fine),
            cmocka_unit_test(test_cache_file_leftover_temp_file_is_harmless),
            cmocka_unit_test(test_cache_file_merge_keeps_other_writers_entries),
            cmocka_unit_test(test_cache_file_merge_respects_entry_bound),
            cmocka_unit_test(test_cache_file_unwritable_path_reports_io),
            cmocka_unit_test(test_warmup_refuses_what_would_write_nothing),
            cmocka_unit_test(test_cache_context_saves_on_destroy),
            cmocka_unit_test(test_cache_context_shared_cache),
            cmocka_unit_test(test_cache_public_api_rejects_null),
    };
    return cmocka_run_group_tests_name("cache_file", tests, NULL, NULL);
}
