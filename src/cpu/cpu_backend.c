/* cpu_backend.c: the CPU reference backend: runs a plan node by node with the ops' reference
 * kernels on float32 buffers allocated at compile time. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void nnop__cpu_plan_destroy(nnop_plan *p)
{
    int32_t i;
    if (!p->cpu_buf)
        return;
    for (i = 0; i < p->g->n_values; i++)
        free(p->cpu_buf[i]);
    free(p->cpu_buf);
    p->cpu_buf = NULL;
}

nnop_status nnop__cpu_plan_build(nnop_plan *p)
{
    const nnop_graph *g = p->g;
    int32_t i;
    p->cpu_buf = (float **)nnop__calloc((size_t)g->n_values, sizeof *p->cpu_buf);
    if (!p->cpu_buf)
        return NNOP_ERR_OUT_OF_MEMORY;
    for (i = 0; i < g->n_values; i++) {
        const nnop__value *v = &g->values[i];
        int64_t n = nnop_tensor_elements(&v->desc);
        p->cpu_buf[i] = (float *)malloc((size_t)n * sizeof(float));
        if (!p->cpu_buf[i])
            return NNOP_ERR_OUT_OF_MEMORY;
        if (v->kind == NNOP_VALUE_CONSTANT)
            nnop__to_f32(v->desc.dtype, v->data, p->cpu_buf[i], n);
    }
    return NNOP_OK;
}

static void run_node(nnop_plan *p, const nnop__node *node)
{
    const nnop_graph *g = p->g;
    const float *in[NNOP_MAX_NODE_INPUTS];
    const nnop_tensor_desc *in_desc[NNOP_MAX_NODE_INPUTS];
    int i;
    for (i = 0; i < node->n_in; i++) {
        int32_t id = node->in[i];
        in[i] = id == NNOP_NONE_ID ? NULL : p->cpu_buf[id];
        in_desc[i] = id == NNOP_NONE_ID ? NULL : &g->values[id].desc;
    }
    nnop__op(node->op)->reference(node, in, in_desc, p->cpu_buf[node->out],
                                  &g->values[node->out].desc);
    /* every value is a tensor of its dtype (as in PyTorch eager): a 16-bit result is stored
     * rounded, so a chain of nodes matches a GPU plan that stores between its steps */
    nnop__round_to(g->values[node->out].desc.dtype, p->cpu_buf[node->out],
                   nnop_tensor_elements(&g->values[node->out].desc));
}

nnop_status nnop__cpu_plan_execute(nnop_plan *p, const void *const *in, void *const *out)
{
    const nnop_graph *g = p->g;
    int32_t i;
    for (i = 0; i < g->n_inputs; i++) {
        const nnop__value *v = &g->values[g->inputs[i]];
        nnop__to_f32(v->desc.dtype, in[i], p->cpu_buf[g->inputs[i]],
                     nnop_tensor_elements(&v->desc));
    }
    for (i = 0; i < g->n_nodes; i++)
        run_node(p, &g->nodes[i]);
    for (i = 0; i < g->n_outputs; i++) {
        const nnop__value *v = &g->values[g->outputs[i]];
        nnop__from_f32(v->desc.dtype, p->cpu_buf[g->outputs[i]], out[i],
                       nnop_tensor_elements(&v->desc));
    }
    return NNOP_OK;
}
