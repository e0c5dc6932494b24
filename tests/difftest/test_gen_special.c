/* test_gen_special.c: the generator's --special rule for the GPU (CTest difftest.gen_special).
 * cuDNN's fp16/bf16 conv engines do not keep IEEE rules for NaN and infinities (nnop.h,
 * "Numbers"), so with DT_GEN_SPECIAL_NO_HALF_CONV no input holding them may reach a half
 * graph's conv or transposed conv on cuDNN through any chain of ops; they must still be
 * common elsewhere (else the GPU run would test nothing), reach depthwise convs (nnop's own
 * kernel), and f32 graphs keep them everywhere.
 * Exit status 0 pass, 1 fail. */
#include <stdio.h>

#include "difftest.h"

/* Whether node i depends on an input node holding special values. */
static int tainted(const dt_graph *g, int i, int *memo)
{
    const dt_node *v = &g->node[i];
    int k;
    if (memo[i] >= 0)
        return memo[i];
    memo[i] = v->kind == DT_INPUT && v->special > 0;
    for (k = 0; k < v->n_in && !memo[i]; k++)
        if (v->in[k] >= 0)
            memo[i] = tainted(g, v->in[k], memo);
    return memo[i];
}

int main(void)
{
    const unsigned flags = DT_GEN_SPECIAL | DT_GEN_NEW_OPS | DT_GEN_SPECIAL_NO_HALF_CONV;
    long half_graphs = 0, half_special = 0, f32_conv_special = 0, half_dw_special = 0, leaks = 0;
    uint64_t seed;
    for (seed = 1; seed <= 3000; seed++) {
        dt_graph g;
        int memo[DT_MAX_NODES], i, special = 0;
        if (dt_generate_ex(seed * 0x9E3779B97F4A7C15ull, flags, &g) != 0)
            continue;
        for (i = 0; i < g.n_nodes; i++)
            memo[i] = -1;
        for (i = 0; i < g.n_nodes; i++) {
            const dt_node *v = &g.node[i];
            const int conv = v->kind == DT_CONV || v->kind == DT_DECONV;
            special |= v->kind == DT_INPUT && v->special > 0;
            if (conv && tainted(&g, v->in[0], memo)) {
                if (g.dtype == NNOP_F32) {
                    f32_conv_special++;
                } else if (!dt_conv_on_cudnn(&g, v)) {
                    half_dw_special++;
                } else {
                    leaks++;
                    fprintf(stderr, "FAIL: case %llu: node %d (%s) reads special values\n",
                            (unsigned long long)g.seed, i, dt_kind_name(v->kind));
                }
            }
        }
        half_graphs += g.dtype != NNOP_F32;
        half_special += g.dtype != NNOP_F32 && special;
        dt_graph_free(&g);
    }
    printf("half graphs %ld, %ld with special inputs; convs reading them: f32 %ld, half "
           "depthwise %ld; leaks %ld\n",
           half_graphs, half_special, f32_conv_special, half_dw_special, leaks);
    if (leaks || half_special * 3 < half_graphs || f32_conv_special == 0 || half_dw_special == 0) {
        fprintf(stderr, "FAIL: leaks, or too few special inputs left to test anything\n");
        return 1;
    }
    return 0;
}
