/* nnop_cache.h: the plan cache: statistics, explicit load/save, and a cache shared by
 * several contexts. Included by nnop.h.
 *
 * Every context has a plan cache: an in-memory LRU of the engine chosen for each fused
 * partition (and, where cuDNN supports it, the serialized execution plan), keyed by a
 * fingerprint of the partition, the engine policy, the GPU and the loaded cuDNN version.
 * With nnop_context_options.cache_path set it persists in that file: loaded when the context
 * knows its device, saved when the context is destroyed (and by nnop_cache_save). A file from
 * another cuDNN or GPU, or a truncated or corrupted one, is never an error: the unusable
 * entries are ignored and counted in nnop_cache_stats, and the plans are rebuilt. The file is
 * rewritten atomically (temporary file + rename) and merged under a lock, so several processes
 * may use the same file. A plan cache object is safe to use from several threads. */
#ifndef NNOP_NNOP_CACHE_H
#define NNOP_NNOP_CACHE_H

#include "nnop.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A plan cache that several contexts on the same kind of device may share. */
typedef struct nnop_plan_cache nnop_plan_cache;

/** Counters of a plan cache since it was created. Times are in nanoseconds. */
typedef struct nnop_cache_stats {
    uint64_t hits;                 /* lookups that found an entry                           */
    uint64_t misses;               /* lookups that did not                                  */
    uint64_t inserts;              /* entries stored (new or replaced)                      */
    uint64_t evictions;            /* entries dropped to respect the bounds                 */
    uint64_t plans_built;          /* execution plans built (heuristics or a cached choice) */
    uint64_t plans_from_blob;      /* plans deserialized from a cached plan: no compilation */
    uint64_t blobs_rejected;       /* cached plans cuDNN refused (rebuilt instead)          */
    uint64_t entries;              /* entries in memory now                                 */
    uint64_t bytes;                /* bytes they take                                       */
    uint64_t entries_loaded;       /* entries read from the file                            */
    uint64_t ignored_corrupt;      /* file entries ignored: bad checksum, malformed, cut    */
    uint64_t ignored_other_device; /* file entries of another GPU                       */
    uint64_t ignored_other_cudnn;  /* file entries of another cuDNN version             */
    uint64_t files_rejected;       /* files ignored whole: bad magic, version or header     */
    uint64_t saves;                /* successful writes of the file                         */
    uint64_t heuristics_ns;        /* time in cuDNN engine heuristics                       */
    uint64_t finalize_ns;          /* time finalizing engine configs and plans (compiling)  */
    uint64_t autotune_ns;          /* time timing candidate engines                         */
    uint64_t file_ns;              /* time loading and saving the file                      */
    uint64_t deserialize_ns;       /* wall time rebuilding plans from cached plans (JSON)   */
    uint64_t reserved[7];          /* zero                                                  */
} nnop_cache_stats;

/** Counters of the cache ctx uses (its own or a shared one). NNOP_ERR_INVALID_ARGUMENT for
 * NULL arguments. */
NNOP_API nnop_status nnop_context_cache_stats(const nnop_context *ctx, nnop_cache_stats *out);
/** Write the context's cache to its file now (merging with what other processes wrote).
 * NNOP_OK without a file or before the context knows its device (CPU backend);
 * NNOP_ERR_IO, with a message in nnop_context_last_error, when the file cannot be written. */
NNOP_API nnop_status nnop_cache_save(nnop_context *ctx);
/** Read the context's cache file again, adding entries memory lacks. Never fails for the
 * file's contents (see above); NNOP_ERR_IO when it exists but cannot be read. As for
 * nnop_cache_save, NNOP_OK without a file or before the context knows its device (the CPU
 * backend, which has no plans to cache, reads nothing). */
NNOP_API nnop_status nnop_cache_load(nnop_context *ctx);

/** Check a plan cache file without loading it (nnop-doctor --cache): a short report goes to
 * buf (snprintf-like, may be NULL with len 0), for these outcomes too: NNOP_OK for a clean or
 * missing file, NNOP_ERR_FORMAT for a damaged one (its intact entries stay usable),
 * NNOP_ERR_IO when it exists but cannot be read, or is missing and so is its folder (nothing
 * could be saved there). A path NULL or "" is NNOP_ERR_INVALID_ARGUMENT, with buf untouched.
 * Entries of every device and cuDNN version are counted. */
NNOP_API nnop_status nnop_cache_file_check(const char *path, char *buf, size_t len);

/** Ahead-of-time warm-up: compile g (building, autotuning and runtime-compiling whatever the
 * policy asks for) and write the plan cache file, so a deployment can ship a warm cache. The
 * context needs a cache file (options.cache_path or a shared cache with a path; else
 * NNOP_ERR_INVALID_ARGUMENT) and the CUDA backend (else NNOP_ERR_NO_DEVICE: the CPU has no
 * plans to cache, and a cache's entries are for the GPU kind that made them). */
NNOP_API nnop_status nnop_graph_warmup(nnop_graph *g, const nnop_compile_options *opts);

/** Create a plan cache to share between contexts: path is its file (copied; NULL = memory
 * only), max_entries its bound (0 = 4096; the byte bound is 256 MiB). Give it to contexts
 * through nnop_context_options.plan_cache; each context keeps a reference, so the cache may
 * be destroyed before them. On failure *out is NULL. */
NNOP_API nnop_status nnop_plan_cache_create(const char *path, size_t max_entries,
                                            nnop_plan_cache **out);
/** Drop the caller's reference (NULL is fine); the last reference saves the file if it has
 * unsaved entries, then frees the cache. */
NNOP_API void nnop_plan_cache_destroy(nnop_plan_cache *cache);
/** Counters of a cache. */
NNOP_API nnop_status nnop_plan_cache_stats(nnop_plan_cache *cache, nnop_cache_stats *out);
/** Write the cache to its file now; as nnop_cache_save. */
NNOP_API nnop_status nnop_plan_cache_save(nnop_plan_cache *cache);

#ifdef __cplusplus
}
#endif

#endif /* NNOP_NNOP_CACHE_H */
