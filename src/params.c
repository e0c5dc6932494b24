/* params.c: the parameter structs' init functions (the defaults an importer starts from). */
#include <string.h>

#include "internal.h"

void nnop_conv_params_init(nnop_conv_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->stride[0] = p->stride[1] = 1;
    p->dilation[0] = p->dilation[1] = 1;
    p->groups = 1;
}

void nnop_pool_params_init(nnop_pool_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->window[0] = p->window[1] = 1;
    p->stride[0] = p->stride[1] = 1;
    p->count_include_pad = 1;
}

void nnop_resize_params_init(nnop_resize_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->mode = NNOP_RESIZE_NEAREST;
    p->scale[0] = p->scale[1] = 1.0;
}

void nnop_conv_transpose_params_init(nnop_conv_transpose_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->stride[0] = p->stride[1] = 1;
    p->dilation[0] = p->dilation[1] = 1;
    p->groups = 1;
}
