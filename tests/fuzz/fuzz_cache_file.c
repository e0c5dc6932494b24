/* fuzz_cache_file.c: libFuzzer target for the plan cache file parser. Whatever the bytes, the
 * parser must not read out of bounds, allocate without bound or crash, and every entry it
 * accepts must be well formed and storable in a cache. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CUDNN 91900u
#define FUZZ_KEY   "NVIDIA H200/sm_90/132"

static int store(void *user, const nnop__fp *fp, const nnop__cache_entry *e)
{
    nnop_plan_cache *c = (nnop_plan_cache *)user;
    nnop__cache_entry back;
    if (e->n_knobs < 0 || e->n_knobs > NNOP_CACHE_MAX_KNOBS || e->blob_len > NNOP_CACHE_MAX_BLOB ||
        e->n_io < 0 || e->n_io > NNOP_CACHE_MAX_IO)
        abort();
    if (nnop__cache_insert(c, fp, e) == NNOP_OK && nnop__cache_lookup(c, fp, &back)) {
        if (back.blob_len != e->blob_len ||
            (e->blob_len && memcmp(back.blob, e->blob, e->blob_len) != 0) || back.n_io != e->n_io ||
            memcmp(back.io, e->io, sizeof e->io) != 0)
            abort();
        nnop__cache_entry_clear(&back);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nnop_plan_cache *c = NULL;
    nnop__cache_report rep;
    /* room for the largest valid entry: a smaller bound would store a big blob without it
     * (by design) and the round trip in store() would call that a bug */
    if (nnop__cache_create(NULL, 8, 2 * nnop__cache_entry_cost(NNOP_CACHE_MAX_BLOB), &c) != NNOP_OK)
        return 0;
    nnop__cache_parse(data, size, FUZZ_CUDNN, FUZZ_KEY, store, c, &rep);
    if (rep.status != NNOP_OK && rep.offset > size)
        abort();
    nnop__cache_parse(data, size, 0, NULL, NULL, NULL, &rep); /* any header */
    nnop__cache_release(c);
    return 0;
}
