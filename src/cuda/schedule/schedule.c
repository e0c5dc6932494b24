/* schedule.c: steps beside the main chain. A step whose output the next step does not read
 * can run on a second stream while the main stream goes on, joined back before its first
 * reader. Only for plans replayed as one CUDA graph, where the fork and join are edges of
 * the captured graph (eager, each would be two more calls). */
#include <string.h>

#include "cuda/schedule/schedule.h"
#include "platform/platform.h"

/* 1 when partition k reads a value that a node of partition i writes. */
static int reads_from(const nnop_plan *p, int32_t k, int32_t i)
{
    const nnop__partition *pi = &p->parts[i], *pk = &p->parts[k];
    int32_t a, b, j;
    for (a = pk->first; a < pk->first + pk->count; a++)
        for (j = 0; j < p->g->nodes[a].n_in; j++)
            for (b = pi->first; b < pi->first + pi->count; b++)
                if (p->g->nodes[a].in[j] == p->g->nodes[b].out)
                    return 1;
    return 0;
}

/* The first partition after i that reads what i writes, or n_parts. */
static int32_t first_reader(const nnop_plan *p, int32_t i)
{
    int32_t k;
    for (k = i + 1; k < p->n_parts; k++)
        if (reads_from(p, k, i))
            return k;
    return p->n_parts;
}

static int wanted(const nnop_plan *p)
{
    int32_t v_i;
    if (!p->opts.cuda_graph || p->n_parts < 3)
        return 0;
    if (!nnop__side_stream(p))
        return 0; /* off unless asked: ResNet-50 ran slower with it (schedule.h) */
    for (v_i = 0; v_i < p->g->n_values; v_i++)
        if (p->cuda->slice_in[v_i] >= 0)
            return 0; /* a concat's slices: writers of one buffer (kept simple) */
    return 1;
}

int32_t nnop__schedule_side_until(const nnop_plan *p, int32_t i)
{
    return first_reader(p, i);
}

nnop_status nnop__schedule_streams(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    int32_t i, n = 0;
    if (!wanted(p))
        return NNOP_OK;
    /* the last step never: nothing after it to overlap with */
    for (i = 0; i + 1 < p->n_parts; i++) {
        int32_t r = first_reader(p, i);
        if (r == i + 1)
            continue;
        cp->steps[i].side = 1;
        if (r < p->n_parts)
            cp->steps[r].wait_side = 1;
        n++;
    }
    return n > 0 ? nnop__device_side_init(p->ctx) : NNOP_OK;
}
