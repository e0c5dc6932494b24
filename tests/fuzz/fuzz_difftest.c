/* fuzz_difftest.c: the differential tester's graph generator (tests/difftest/gen.c, biased to
 * the shape corners: odd and prime channels, 1x1 and 1xN images, kernels larger than the
 * input, asymmetric stride, padding and dilation, groups, several outputs) driven by the fuzzer:
 * the input's first 8 bytes are the case seed. Each graph runs on the CPU backend fused and
 * unfused (same bits expected) and against the float64 oracle; the descriptors the builders
 * inferred are checked against the header's rules. Any disagreement aborts. A 9th byte with
 * its low bit set adds the issue-15 ops (difftest --new-ops). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "difftest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static nnop_context *cpu_context(void)
{
    static nnop_context *ctx;
    nnop_context_options o;
    if (ctx)
        return ctx;
    nnop_context_options_init(&o);
    o.backend = NNOP_BACKEND_CPU;
    if (nnop_context_create(&o, &ctx) != NNOP_OK)
        abort();
    return ctx;
}

static void check(const dt_graph *g, uint64_t seed, nnop_context *ctx)
{
    dts_tensor in[DT_MAX_NODES];
    double *want[DT_MAX_OUT] = {0};
    dts_case c;
    dts_result fused, unfused;
    char msg[1200];
    int i;
    dt_case_of(g, in, &c);
    dts_run(ctx, &c, 1, &fused);
    if (fused.outcome == DTS_REFUSED) {
        dts_result_free(&fused);
        return;
    }
    dts_run(ctx, &c, 0, &unfused);
    if (fused.outcome == DTS_ERROR || unfused.outcome == DTS_ERROR ||
        dt_check_descs(ctx, g, msg, sizeof msg) != 0 ||
        !dt_agree_f(g, unfused.out, fused.out, msg, sizeof msg) || dt_oracle(g, want) != 0 ||
        !dt_agree(g, fused.out, want, msg, sizeof msg)) {
        fprintf(stderr,
                "fuzz_difftest: %s %s\n(the graph: difftest --case 0x%016llx%s --repro-dir DIR)\n",
                fused.message, msg, (unsigned long long)seed,
                g->flags & DT_GEN_NEW_OPS ? " --new-ops" : "");
        abort();
    }
    for (i = 0; i < DT_MAX_OUT; i++)
        free(want[i]);
    dts_result_free(&fused);
    dts_result_free(&unfused);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t seed = 0;
    unsigned flags = size > sizeof seed && (data[sizeof seed] & 1) ? DT_GEN_NEW_OPS : 0;
    dt_graph g;
    memcpy(&seed, data, size < sizeof seed ? size : sizeof seed);
    if (dt_generate_ex(seed, flags, &g) == 0)
        check(&g, seed, cpu_context());
    dt_graph_free(&g);
    return 0;
}
