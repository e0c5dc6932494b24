/* partition.c: greedy, explainable fusion: a producer (conv, linear) or a norm absorbs the
 * chain of epilogue nodes after it while each intermediate has exactly one consumer; a
 * standalone epilogue node (bias, activation, add, ...) absorbs the pointwise chain after it
 * the same way (one pass over memory). Chains are capped at NNOP_MAX_CHAIN nodes. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define NNOP_MAX_CHAIN 8 /* producer + 7 epilogues: the backends' chain limit */

/* May node n+1 join the partition that currently ends with node n? If not, say why, naming
 * the node that reads n's output (reader[v]: the first node that reads value v, or -1). */
static int can_extend(const nnop_graph *g, const int32_t *reader, int32_t n, char *why, size_t len)
{
    const nnop__node *cur = &g->nodes[n];
    const nnop__value *v = &g->values[cur->out];
    const nnop__node *next = n + 1 < g->n_nodes ? &g->nodes[n + 1] : NULL;
    const int32_t r = reader[cur->out];
    if (!next) {
        snprintf(why, len, "end of graph");
        return 0;
    }
    if (v->n_consumers != 1 || v->output_index >= 0) {
        snprintf(why, len, "output %s has %d consumers%s", v->name, (int)v->n_consumers,
                 v->output_index >= 0 ? " and is a graph output" : "");
        return 0;
    }
    if (nnop__op(g->nodes[r].op)->role != NNOP_ROLE_EPILOGUE) {
        snprintf(why, len, "%s op %s is not a pointwise epilogue",
                 r == n + 1 ? "next" : "its reader,", nnop__op(g->nodes[r].op)->name);
        return 0;
    }
    if (r != n + 1) { /* a branch was built in between: its nodes must run first */
        snprintf(why, len,
                 "its reader, node #%d (%s), is not next in build order (node #%d (%s) "
                 "comes between)",
                 (int)r, nnop__op(g->nodes[r].op)->name, (int)(n + 1), nnop__op(next->op)->name);
        return 0;
    }
    if (next->in[0] != cur->out && !(next->op == NNOP_OP_ADD && next->in[1] == cur->out)) {
        snprintf(why, len, "next op %s reads this output as an operand, not as its data",
                 nnop__op(next->op)->name);
        return 0;
    }
    if (next->op == NNOP_OP_ADD && next->in[0] == cur->out && next->in[1] == cur->out) {
        snprintf(why, len, "add of a value to itself");
        return 0;
    }
    return 1;
}

/* reader[v] = the first node that reads value v, -1 for none; NULL when out of memory. */
static int32_t *first_readers(const nnop_graph *g)
{
    int32_t *reader = (int32_t *)nnop__calloc((size_t)g->n_values + 1, sizeof *reader);
    int32_t k;
    int j;
    if (!reader)
        return NULL;
    for (k = 0; k < g->n_values; k++)
        reader[k] = -1;
    for (k = g->n_nodes - 1; k >= 0; k--)
        for (j = 0; j < g->nodes[k].n_in; j++)
            if (g->nodes[k].in[j] != NNOP_NONE_ID)
                reader[g->nodes[k].in[j]] = k;
    return reader;
}

nnop_status nnop__partition_graph(const nnop_graph *g, int fuse, nnop__partition **parts,
                                  int32_t *n_parts)
{
    nnop__partition *ps = (nnop__partition *)nnop__calloc((size_t)g->n_nodes, sizeof *ps);
    int32_t *reader = first_readers(g);
    int32_t n = 0, i = 0;
    if (!ps || !reader) {
        nnop__free(ps);
        nnop__free(reader);
        return NNOP_ERR_OUT_OF_MEMORY;
    }
    while (i < g->n_nodes) {
        nnop__partition *p = &ps[n++];
        p->first = i;
        p->count = 1;
        if (nnop__op(g->nodes[i].op)->role != NNOP_ROLE_STANDALONE && fuse) {
            while (can_extend(g, reader, i, p->reason, sizeof p->reason)) {
                if (p->count >= NNOP_MAX_CHAIN) {
                    snprintf(p->reason, sizeof p->reason, "chain limit of %d nodes",
                             NNOP_MAX_CHAIN);
                    break;
                }
                i++;
                p->count++;
            }
        } else if (!fuse) {
            snprintf(p->reason, sizeof p->reason, "fusion disabled");
        }
        i++;
    }
    nnop__free(reader);
    *parts = ps;
    *n_parts = n;
    return NNOP_OK;
}

/* Whether value v is read by a node outside [first, end) or is a graph output. */
static int used_outside(const nnop_graph *g, int32_t v, int32_t first, int32_t end)
{
    int32_t k;
    int j;
    if (g->values[v].output_index >= 0)
        return 1;
    for (k = 0; k < g->n_nodes; k++) {
        if (k >= first && k < end)
            continue;
        for (j = 0; j < g->nodes[k].n_in; j++)
            if (g->nodes[k].in[j] == v)
                return 1;
    }
    return 0;
}

/* Whether node k's input j repeats one read earlier in the partition (from first). */
static int read_before(const nnop_graph *g, int32_t first, int32_t k, int j)
{
    int32_t v = g->nodes[k].in[j], i;
    int m;
    for (i = first; i <= k; i++)
        for (m = 0; m < (i == k ? j : g->nodes[i].n_in); m++)
            if (g->nodes[i].in[m] == v)
                return 1;
    return 0;
}

int64_t nnop__partition_bytes(const nnop_graph *g, const nnop__partition *part)
{
    const int32_t end = part->first + part->count;
    int64_t bytes = 0;
    int32_t k;
    int j;
    for (k = part->first; k < end; k++) {
        const nnop__node *n = &g->nodes[k];
        for (j = 0; j < n->n_in; j++) {
            int32_t v = n->in[j], producer;
            if (v == NNOP_NONE_ID)
                continue; /* an absent optional operand */
            producer = g->values[v].producer;
            if ((producer >= part->first && producer < end) || read_before(g, part->first, k, j))
                continue;
            bytes += (int64_t)nnop_tensor_bytes(&g->values[v].desc);
        }
        if (used_outside(g, n->out, part->first, end))
            bytes += (int64_t)nnop_tensor_bytes(&g->values[n->out].desc);
    }
    return bytes;
}
