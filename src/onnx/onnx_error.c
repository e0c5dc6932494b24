/* onnx_error.c: the importer's one error path: the first failure of an import, with the ONNX
 * node it was converting, kept in the import's context (below every other file of the
 * importer, so that reporting an error never calls back up into the loader). */
#include <stdarg.h>
#include <stdio.h>

#include "onnx_internal.h"

nnop_status ox_fail(ox_ctx *ox, nnop_status s, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    if (ox->status) /* the first error wins */
        return ox->status;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ox->status = s;
    if (ox->node) {
        const char *name = ox->node->name && *ox->node->name ? ox->node->name : "";
        snprintf(ox->err, sizeof ox->err, "%s: node '%s' (%s): %s", nnop_status_string(s), name,
                 ox->node->op_type ? ox->node->op_type : "?", msg);
    } else
        snprintf(ox->err, sizeof ox->err, "%s: %s", nnop_status_string(s), msg);
    return s;
}

nnop_status ox_check(ox_ctx *ox, nnop_value v)
{
    nnop_status s;
    if (v.id >= 0)
        return NNOP_OK;
    s = nnop_graph_status(ox->g);
    if (s == NNOP_OK)
        s = NNOP_ERR_INTERNAL;
    /* a builder's refusal is what nnop cannot run: unsupported, its own status in the text */
    return ox_fail(ox, s == NNOP_ERR_OUT_OF_MEMORY ? s : NNOP_ERR_UNSUPPORTED,
                   "nnop refused it: %s", nnop_context_last_error(ox->ctx));
}
