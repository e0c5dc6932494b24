/* cache.h: the plan cache (internal API): fingerprints, a thread-safe LRU of engine choices
 * and serialized plans, and its file (docs/cache-format.md).
 *
 * One object, `nnop_plan_cache` (opaque in the public header), used three ways: every context
 * owns or shares one (ctx->plan_cache, never NULL after nnop_context_create); users may create
 * one and hand it to several contexts (nnop_context_options.plan_cache); and it persists to
 * a file (cache_path), loaded when it learns its device and saved on context destroy.
 *
 * How the GPU backend uses it (src/cuda/device.c and src/cuda/engine.c):
 *
 *  1. Once per context, at the end of nnop__cuda_context_init (after query_device and
 *     check_versions), tell the cache which device and cuDNN it serves. This loads the file;
 *     entries of another device or cuDNN are ignored and counted, never an error:
 *
 *         struct nnop__cuda_ctx *c = ctx->cuda;
 *         st = nnop__context_cache_bind(ctx, c->cudnn_version, c->name,
 *                                       c->cc_major * 10 + c->cc_minor, c->sm_count);
 *         // fails only for out of memory; a shared cache already serving another kind of
 *         // device is swapped for a private one, silently
 *
 *  2. In nnop__engine_select, before the heuristics: fingerprint the partition. The lowering
 *     is deterministic given the nodes, so hash the nnop nodes rather than the cuDNN
 *     descriptors, plus a version string to bump whenever a lowering changes:
 *
 *         nnop__fp_builder b;
 *         nnop__fp_init(&b);
 *         nnop__fp_add_str(&b, "nnop-lowering-1");      // bump when lower_*.c changes
 *         nnop__fp_add_context(&b, ctx);                 // cuDNN, GPU, SM, policy options
 *         nnop__fp_add_i64(&b, step kind); nnop__fp_add_i64(&b, st->fp32);
 *         for each node of the partition:
 *             nnop__fp_add_i64(&b, n->op);
 *             attributes field by field (never the union's raw bytes: padding):
 *                 conv: pad, stride, dilation, groups with _add_i64;
 *                 act: kind (_add_i64), alpha, lo, hi (_add_f32); eps (_add_f32); pool ...
 *             for each input and the output: nnop__fp_add_desc(&b, &value->desc),
 *                 and whether it is virtual, its uid and its alignment (_add_i64)
 *         nnop__fp fp = nnop__fp_final(&b);
 *
 *  3. Look it up. On a hit skip heuristics and autotuning:
 *
 *         nnop__cache_entry e;
 *         if (nnop__cache_lookup(ctx->plan_cache, &fp, &e)) {
 *             // e.blob_len > 0: new EXECUTION_PLAN descriptor, set HANDLE, set
 *             //   JSON_REPRESENTATION (CUDNN_TYPE_CHAR, e.blob_len, e.blob), finalize:
 *             //   ok -> nnop__cache_count(cache, NNOP_CACHE_EV_PLAN_FROM_BLOB);
 *             //   failed -> nnop__cache_count(cache, NNOP_CACHE_EV_BLOB_REJECTED), go on below.
 *             // no blob (or rejected): ENGINE with GLOBAL_INDEX = e.engine_id, ENGINECFG with
 *             //   the e.n_knobs KNOB_CHOICE (type, value) pairs, build_plan() ->
 *             //   nnop__cache_count(cache, NNOP_CACHE_EV_PLAN_BUILT).
 *             // if that fails as well: fall through to the full search (the entry is
 *             //   replaced by the insert below).
 *             st->engine = e.engine_id; st->rtc = e.flags & NNOP_CACHE_FLAG_RUNTIME_COMPILED;
 *             st->time_us = e.time_us; st->tuned = e.time_us >= 0;
 *             nnop__cache_entry_clear(&e);   // frees the blob copy
 *         }
 *
 *  4. On a miss, time the phases and store the choice:
 *
 *         nnop_plan_cache *pc = ctx->plan_cache;
 *         uint64_t t0 = nnop__monotonic_ns();            // src/platform/platform.h
 *         ... heuristics ...
 *         nnop__cache_add_time(pc, NNOP_CACHE_T_HEURISTICS, nnop__monotonic_ns() - t0);
 *         ... build_plan (NNOP_CACHE_T_FINALIZE), time_plan (NNOP_CACHE_T_AUTOTUNE) ...
 *         nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_BUILT) per plan finalized;
 *         nnop__cache_entry e = {0};
 *         e.engine_id = st->engine;  e.n_knobs, e.knobs[] = the config's KNOB_CHOICEs
 *         (CUDNN_ATTR_ENGINECFG_KNOB_CHOICES: KNOB_TYPE, KNOB_VALUE);
 *         e.time_us = st->tuned ? st->time_us : -1.0f;  e.workspace_bytes = st->workspace;
 *         e.flags = (st->rtc ? NNOP_CACHE_FLAG_RUNTIME_COMPILED : 0) |
 *                   (deterministic ? NNOP_CACHE_FLAG_DETERMINISTIC : 0);
 *         e.blob = plan JSON from CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION (GetAttribute
 *                  with count 0 for the size, then a buffer), e.blob_len = its length
 *                  (without a trailing NUL); the insert copies it, free yours after;
 *         nnop__cache_insert(ctx->plan_cache, &fp, &e);   // a failure only means "not cached"
 *
 * The file is written at context destroy when something was inserted (and by
 * nnop_cache_save); nothing else is needed from the backend.
 *
 * Every function here is safe to call from several threads on one cache. */
#ifndef NNOP_CACHE_H
#define NNOP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "nnop/nnop.h"
#include "util/hash.h"

/* ---------------------------------------------------------------- fingerprints */
typedef struct nnop__fp {
    uint64_t lo, hi;
} nnop__fp;

/* Builds a fingerprint from a canonical byte string. Each add_* writes a type tag and, for
 * strings and byte runs, the length, so ("ab","c") and ("a","bc") differ. */
typedef struct nnop__fp_builder {
    nnop__h128 h;
} nnop__fp_builder;

void nnop__fp_init(nnop__fp_builder *b);
void nnop__fp_add_i64(nnop__fp_builder *b, int64_t v);
/* The float's bit pattern (so -0.0f differs from 0.0f: both are given by users as written). */
void nnop__fp_add_f32(nnop__fp_builder *b, float v);
/* NUL-terminated UTF-8; NULL adds a distinct "null" tag. */
void nnop__fp_add_str(nnop__fp_builder *b, const char *s);
void nnop__fp_add_bytes(nnop__fp_builder *b, const void *p, size_t len);
/* A tensor descriptor: dtype, ndim, then dims and strides of the used dimensions. */
void nnop__fp_add_desc(nnop__fp_builder *b, const nnop_tensor_desc *d);
/* What every fingerprint of a context must contain besides the graph: the identity its cache
 * is bound to (loaded cuDNN version, GPU name, SM version, SM count: "" before bind) and the
 * engine policy options (policy, deterministic, autotune, allow_tf32, workspace_limit). */
void nnop__fp_add_context(nnop__fp_builder *b, const nnop_context *ctx);
nnop__fp nnop__fp_final(const nnop__fp_builder *b);
int nnop__fp_equal(const nnop__fp *a, const nnop__fp *b);

/* ---------------------------------------------------------------- entries */
#define NNOP_CACHE_MAX_KNOBS 64
/* Largest blob kept: RTC plan JSON is ~130 KB (cudnn-backend-notes §8.1); leave room. */
#define NNOP_CACHE_MAX_BLOB (16u << 20)
/* Device key: GPU name, SM version and SM count, e.g. "NVIDIA H200/sm_90/132". */
#define NNOP_CACHE_KEY_MAX 255

enum {
    NNOP_CACHE_FLAG_RUNTIME_COMPILED = 1u, /* engine had CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION */
    NNOP_CACHE_FLAG_DETERMINISTIC = 2u,    /* engine had no NONDETERMINISTIC numerical note */
    NNOP_CACHE_FLAG_NO_ENGINE = 4u         /* the search found no engine under the policy: a warm
                                            * compile takes the fallback without searching again */
};

#define NNOP_CACHE_MAX_IO 16 /* as NNOP_STEP_MAX_IO (src/cuda/lower/lower_parts.h) */

typedef struct nnop__cache_io {
    int64_t uid;   /* CUDNN_ATTR_TENSOR_UNIQUE_ID */
    int64_t bytes; /* what a buffer for it needs */
} nnop__cache_io;

typedef struct nnop__knob {
    int64_t type; /* cudnnBackendKnobType_t */
    int64_t value;
} nnop__knob;

/* The value stored per fingerprint. In nnop__cache_insert, blob is borrowed (copied); an
 * entry filled by nnop__cache_lookup owns its blob: release it with nnop__cache_entry_clear. */
typedef struct nnop__cache_entry {
    int64_t engine_id; /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX */
    int32_t n_knobs;   /* 0 .. NNOP_CACHE_MAX_KNOBS */
    uint32_t flags;    /* NNOP_CACHE_FLAG_* (unknown bits are kept) */
    nnop__knob knobs[NNOP_CACHE_MAX_KNOBS];
    float time_us;           /* measured execute time; < 0: not autotuned */
    int64_t workspace_bytes; /* of the plan; -1 unknown */
    void *blob;              /* serialized execution plan (JSON), NULL if none */
    size_t blob_len;         /* bytes of blob, 0 .. NNOP_CACHE_MAX_BLOB */
    /* The plan's real tensors (uid and bytes each, in variant-pack order), so a plan can be
     * deserialized and run once on scratch memory before any graph asks for it (prefetch at
     * context creation, src/cuda/prefetch.c); n_io 0: unknown. */
    int32_t n_io; /* 0 .. NNOP_CACHE_MAX_IO */
    nnop__cache_io io[NNOP_CACHE_MAX_IO];
} nnop__cache_entry;

/* Free the blob of a looked-up entry and zero it (NULL is fine). */
void nnop__cache_entry_clear(nnop__cache_entry *e);

/* ---------------------------------------------------------------- the cache object */
#define NNOP_CACHE_DEFAULT_ENTRIES 4096
#define NNOP_CACHE_DEFAULT_BYTES   ((size_t)256 << 20)

/* A cache of at most max_entries entries and max_bytes bytes (per entry: its node of about
 * 1.1 KB plus its blob); 0 = default. path NULL: memory only; otherwise the file is loaded
 * when nnop__cache_bind gives the cache its identity. The new cache holds one reference. */
nnop_status nnop__cache_create(const char *path, size_t max_entries, size_t max_bytes,
                               nnop_plan_cache **out);
/* Reference counting: contexts sharing a cache retain it; the last release saves it when it
 * has unsaved entries (and a path and a device), then frees it. */
void nnop__cache_retain(nnop_plan_cache *c);
void nnop__cache_release(nnop_plan_cache *c);

/* Tell the cache which device and cuDNN it serves (the header of its file). The first call
 * binds it and performs a load requested earlier; later calls with the same identity are
 * no-ops and with another identity return NNOP_ERR_INVALID_ARGUMENT (a shared cache serves
 * one kind of device). */
nnop_status nnop__cache_bind(nnop_plan_cache *c, uint64_t cudnn_version, const char *device_key);
/* Whether the cache has a file to load and save (a memory-only one has none). */
int nnop__cache_has_file(const nnop_plan_cache *c);
/* "NAME/sm_XY/N" into buf (NNOP_CACHE_KEY_MAX + 1 bytes are always enough). */
void nnop__cache_device_key(char *buf, size_t len, const char *gpu_name, int sm_version,
                            int sm_count);
/* Bind ctx->plan_cache (see above) with a key made by nnop__cache_device_key. When it is a
 * shared cache already bound to another identity, ctx gets its own memory-only cache instead
 * (bound to this identity), so a context never sees another device's entries. NNOP_OK, or
 * NNOP_ERR_OUT_OF_MEMORY. */
nnop_status nnop__context_cache_bind(nnop_context *ctx, uint64_t cudnn_version,
                                     const char *gpu_name, int sm_version, int sm_count);

/* 1 and a copy in *out on a hit (counts a hit and makes the entry most recently used), 0 on
 * a miss (counts a miss; *out zeroed). A hit whose blob cannot be copied (out of memory)
 * reports a miss. */
int nnop__cache_lookup(nnop_plan_cache *c, const nnop__fp *fp, nnop__cache_entry *out);
/* Insert or replace the entry of fp (copied), evicting least recently used entries to stay in
 * bounds. An entry too big for max_bytes is stored without its blob. NNOP_ERR_INVALID_ARGUMENT
 * for a malformed entry, NNOP_ERR_OUT_OF_MEMORY; the cache is unchanged then. */
nnop_status nnop__cache_insert(nnop_plan_cache *c, const nnop__fp *fp, const nnop__cache_entry *e);
/* Copies (each owning its blob) of at most max entries that hold a serialized plan and its io
 * list, most recently used first, with their fingerprints; for rebuilding plans before any
 * graph asks for them. Counts no hit and leaves the LRU order alone. Returns how many. */
int32_t nnop__cache_newest_plans(nnop_plan_cache *c, int32_t max, nnop__fp *fps,
                                 nnop__cache_entry *out);

typedef enum nnop__cache_timer {
    NNOP_CACHE_T_HEURISTICS = 0, /* engine heuristics queries */
    NNOP_CACHE_T_FINALIZE = 1,   /* engine config + execution plan finalization (RTC compiles) */
    NNOP_CACHE_T_AUTOTUNE = 2,   /* timing candidates */
    NNOP_CACHE_T_DESERIALIZE = 3 /* execution plans from cached JSON (wall time) */
} nnop__cache_timer;
void nnop__cache_add_time(nnop_plan_cache *c, nnop__cache_timer which, uint64_t ns);

typedef enum nnop__cache_event {
    NNOP_CACHE_EV_PLAN_BUILT = 0,     /* a plan was built from heuristics or a cached choice */
    NNOP_CACHE_EV_PLAN_FROM_BLOB = 1, /* a plan was deserialized from a cached blob */
    NNOP_CACHE_EV_BLOB_REJECTED = 2   /* cuDNN refused a cached blob; rebuilt instead */
} nnop__cache_event;
void nnop__cache_count(nnop_plan_cache *c, nnop__cache_event which);

void nnop__cache_stats(nnop_plan_cache *c, nnop_cache_stats *out);

/* ---------------------------------------------------------------- persistence */
/* What a load found; the caller of nnop__cache_load may ask for it (tests, nnop-doctor). */
typedef struct nnop__cache_report {
    nnop_status status;  /* NNOP_OK, or NNOP_ERR_FORMAT at the first problem */
    size_t offset;       /* byte offset of that problem */
    char message[200];   /* "offset N: what" */
    int missing;         /* the file does not exist */
    int rejected;        /* unusable header (magic, format version, checksum, truncated) */
    uint64_t entries_ok; /* well-formed entries for this device (loaded unless already present) */
    uint64_t ignored_corrupt, ignored_other_device, ignored_other_cudnn;
    /* bytes run through the checksum: at most twice the file's size (the parse is linear) */
    uint64_t bytes_checksummed;
} nnop__cache_report;

/* Load the file at the cache's path (or path, if not NULL) into the cache. Never fails for
 * what the file contains: a missing, foreign, truncated or corrupted file gives NNOP_OK, what
 * was ignored is counted in the stats and described in *rep (may be NULL). Entries already in
 * memory win over the file's. Before nnop__cache_bind the load is only remembered and
 * happens at bind. Errors: NNOP_ERR_OUT_OF_MEMORY; NNOP_ERR_IO when the file exists but
 * cannot be read. */
nnop_status nnop__cache_load(nnop_plan_cache *c, const char *path, nnop__cache_report *rep);

/* Write the cache to its path (or path): under an exclusive lock on "<path>.lock", re-read
 * the file, keep its valid entries of this device that memory lacks (memory wins), bound the
 * result like the cache (oldest file entries dropped first), write "<path>.tmp.<pid>.<n>",
 * flush it to disk and rename it over path. only_if_dirty: do nothing unless entries were
 * inserted (or the loaded file was corrupt) since the last load/save. NNOP_OK without a path
 * or before bind. NNOP_ERR_IO (with a message in msg, may be NULL) when it cannot write. */
nnop_status nnop__cache_save(nnop_plan_cache *c, const char *path, int only_if_dirty, char *msg,
                             size_t msg_len);

/* The parser alone (file checks, fuzzing): walk buf as a cache file, call fn (may be NULL) for
 * each valid entry of this identity (cudnn_version, device_key; device_key NULL accepts any
 * header), fill *rep (may be NULL). e->blob points into buf. fn returns 0 to go on, nonzero to
 * stop. Never reads outside buf, never allocates. */
typedef int (*nnop__cache_entry_fn)(void *user, const nnop__fp *fp, const nnop__cache_entry *e);
void nnop__cache_parse(const unsigned char *buf, size_t len, uint64_t cudnn_version,
                       const char *device_key, nnop__cache_entry_fn fn, void *user,
                       nnop__cache_report *rep);

/* Read and check a cache file without loading it (nnop-doctor): NNOP_OK for a missing or
 * clean file of this identity (device_key NULL: any), else the first problem's status
 * (NNOP_ERR_FORMAT: damaged, NNOP_ERR_VERSION: another device or cuDNN) with its offset and
 * the counts in *rep; NNOP_ERR_IO when it exists but cannot be read. */
nnop_status nnop__cache_check_file(const char *path, uint64_t cudnn_version, const char *device_key,
                                   nnop__cache_report *rep);

/* Serialize one file (header + entries) into a malloc'd buffer (for tests and the fuzzer
 * corpus): *out, *out_len; free with nnop__free. */
nnop_status nnop__cache_serialize(uint64_t cudnn_version, const char *device_key, size_t n,
                                  const nnop__fp *fps, const nnop__cache_entry *entries,
                                  unsigned char **out, size_t *out_len);

/* ---------------------------------------------------------------- context wiring */
/* Called by nnop_context_create: share o->plan_cache or make the context's own cache (with
 * the file o->cache_path, load requested). Sets ctx->plan_cache. */
nnop_status nnop__context_cache_init(nnop_context *ctx, const nnop_context_options *o);
/* Called by nnop_context_destroy: save if dirty, release. */
void nnop__context_cache_fini(nnop_context *ctx);

#endif /* NNOP_CACHE_H */
