/* fuzz_replay.c: runs a fuzz target over corpus files given on the command line, so the
 * corpus is an ordinary CTest case without libFuzzer. "--make-seeds DIR" writes the plan
 * cache seed corpus (how tests/fuzz/corpus/cache_file was made; format_v1 is a file the
 * version-1 writer made, kept as it was). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "internal.h"
#include "nnop_test.h"
#include "platform/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_seed(const char *dir, const char *name, const unsigned char *p, size_t len)
{
    char path[1024];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = nnop__fopen(path, "wb", NULL);
    if (!f || (len && fwrite(p, 1, len, f) != len)) {
        if (f)
            fclose(f);
        return 1;
    }
    return fclose(f) != 0;
}

static int make_seeds(const char *dir)
{
    enum { N = 3 };
    nnop__fp fps[N];
    nnop__cache_entry es[N];
    static const char json[] = "{\"cudnnVersion\":91900,\"schemaVersion\":1}";
    unsigned char *f = NULL, *g = NULL;
    size_t len = 0, glen = 0, hlen = 0;
    int i, j, bad = 0;
    memset(es, 0, sizeof es);
    for (i = 0; i < N; i++) {
        nnop__fp_builder b;
        nnop__fp_init(&b);
        nnop__fp_add_i64(&b, i);
        fps[i] = nnop__fp_final(&b);
        es[i].engine_id = 10 + i;
        es[i].n_knobs = i;
        es[i].knobs[0].type = 3;
        es[i].knobs[0].value = 1;
        es[i].knobs[1].type = 7;
        es[i].knobs[1].value = 64;
        es[i].time_us = i ? 0.012f : -1.0f;
        es[i].flags = (uint32_t)i;
        es[i].workspace_bytes = 4096 * i;
        es[i].blob = i == 2 ? (void *)(uintptr_t)json : NULL;
        es[i].blob_len = i == 2 ? sizeof json - 1 : 0;
        es[i].n_io = i == 2 ? NNOP_CACHE_MAX_IO : i; /* 0, 1 and the most */
        for (j = 0; j < es[i].n_io; j++) {
            es[i].io[j].uid = 100 + j;
            es[i].io[j].bytes = 1024 * (j + 1);
        }
    }
    bad |= nnop__cache_serialize(91900, "NVIDIA H200/sm_90/132", 0, fps, es, &g, &hlen) != 0;
    bad |= write_seed(dir, "header_only", g, hlen);
    free(g);
    bad |= nnop__cache_serialize(91900, "NVIDIA H200/sm_90/132", N, fps, es, &f, &len) != 0;
    bad |= write_seed(dir, "three_entries", f, len);
    bad |= write_seed(dir, "truncated", f, len - 5);
    bad |= write_seed(dir, "empty", f, 0);
    f[hlen + 20] ^= 0x40;
    bad |= write_seed(dir, "flipped_entry", f, len);
    f[hlen + 20] ^= 0x40;
    f[8] = 3; /* a later version's header (same layout here: only the version is read) */
    bad |= write_seed(dir, "format_v3", f, len);
    f[8] = 2;
    f[0] = 'X';
    bad |= write_seed(dir, "bad_magic", f, len);
    free(f);
    bad |= nnop__cache_serialize(91400, "NVIDIA H200/sm_90/132", N, fps, es, &g, &glen) != 0;
    bad |= write_seed(dir, "other_cudnn", g, glen);
    free(g);
    bad |= nnop__cache_serialize(91900, "NVIDIA A100/sm_80/108", N, fps, es, &g, &glen) != 0;
    bad |= write_seed(dir, "other_device", g, glen);
    free(g);
    return bad;
}

int main(int argc, char **argv)
{
    int i, n = 0;
    if (argc == 3 && strcmp(argv[1], "--make-seeds") == 0)
        return make_seeds(argv[2]);
    for (i = 1; i < argc; i++) {
        size_t len;
        unsigned char *p = nnop_test_read_file(argv[i], &len);
        if (!p) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(p, len);
        free(p);
        n++;
    }
    printf("replayed %d corpus file(s)\n", n);
    return n > 0 ? 0 : 1;
}
