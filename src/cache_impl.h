/* cache_impl.h: what src/cache.c (the object) and src/cache_file.c (the file, the layer
 * below: it calls nothing of cache.c) share. */
#ifndef NNOP_CACHE_IMPL_H
#define NNOP_CACHE_IMPL_H

#include "cache.h"
#include "platform/platform.h"

typedef struct nnop__cache_node {
    nnop__fp fp;
    nnop__cache_entry e; /* e.blob owned by the node */
    size_t cost;         /* bytes charged against max_bytes */
    int loaded;          /* came from the file; a later file entry may replace it */
    struct nnop__cache_node *newer, *older; /* LRU list: c->newest ... c->oldest */
    struct nnop__cache_node *next;          /* hash bucket chain */
} nnop__cache_node;

struct nnop_plan_cache {
    nnop__mutex *mu;
    int refs;
    size_t max_entries, max_bytes;
    size_t n, bytes;
    nnop__cache_node **buckets;
    size_t mask; /* buckets - 1, a power of two minus one */
    nnop__cache_node *newest, *oldest;
    char *path; /* owned copy, NULL = memory only */
    int bound;  /* identity known */
    uint64_t cudnn_version;
    char device_key[NNOP_CACHE_KEY_MAX + 1];
    int load_pending; /* load c->path at bind */
    int dirty;        /* something to save */
    uint64_t gen;     /* bumped whenever dirty is set, so a save clears only what it wrote */
    uint64_t tmp_seq; /* temporary file names */
    nnop_cache_stats st;
};

/* ------------------------------------------------------------------ cache_file.c */
/* Bytes an entry with a blob of blob_len bytes is charged against max_bytes. */
size_t nnop__cache_entry_cost(size_t blob_len);
/* n_knobs, blob_len and blob consistent. */
int nnop__cache_entry_valid(const nnop__cache_entry *e);
/* Read at most 1 GiB of path into *buf (malloc'd). *missing when it does not exist (NNOP_OK,
 * *buf NULL). Regular files only: a FIFO or device is refused without being read
 * (NNOP_ERR_IO). *why says what failed (may be NULL). */
nnop_status nnop__cache_read_file(const char *path, unsigned char **buf, size_t *len, int *missing,
                                  nnop__open_result *why);

/* ------------------------------------------------------------------ cache.c */
/* Store fp -> e with c->mu held. from_file: a loaded entry, which yields to one inserted in
 * memory and does not make the cache dirty. */
nnop_status nnop__cache_put_locked(nnop_plan_cache *c, const nnop__fp *fp,
                                   const nnop__cache_entry *e, int from_file);

#endif /* NNOP_CACHE_IMPL_H */
