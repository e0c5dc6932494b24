/* tensor_copy.c: nnop_tensor_copy, a host copy between two descriptions of one tensor (layout
 * and dtype change), for weights laid out one way and a graph that wants another. */
#include <string.h>

#include "internal.h"

static int same_dims(const nnop_tensor_desc *a, const nnop_tensor_desc *b)
{
    int i;
    if (a->ndim != b->ndim)
        return 0;
    for (i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

/* Walk the elements in logical row-major order, each read at its src offset and written at
 * its dst offset (an odometer over the dims keeps both offsets without divisions). */
static void copy_elements(const nnop_tensor_desc *sd, const char *src, const nnop_tensor_desc *dd,
                          char *dst)
{
    const size_t ss = nnop_dtype_size(sd->dtype), ds = nnop_dtype_size(dd->dtype);
    int64_t idx[NNOP_MAX_DIMS] = {0}, so = 0, doff = 0, n = nnop_tensor_elements(sd), e;
    int d;
    for (e = 0; e < n; e++) {
        float f;
        nnop__to_f32(sd->dtype, src + so * (int64_t)ss, &f, 1);
        nnop__from_f32(dd->dtype, &f, dst + doff * (int64_t)ds, 1);
        for (d = sd->ndim - 1; d >= 0; d--) {
            so += sd->strides[d], doff += dd->strides[d];
            if (++idx[d] < sd->dims[d])
                break;
            so -= idx[d] * sd->strides[d], doff -= idx[d] * dd->strides[d];
            idx[d] = 0;
        }
    }
}

nnop_status nnop_tensor_copy(const nnop_tensor_desc *src_desc, const void *src,
                             const nnop_tensor_desc *dst_desc, void *dst)
{
    char msg[256];
    if (!src_desc || !src || !dst_desc || !dst)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (nnop__check_stored_desc(src_desc, msg, sizeof msg) != NNOP_OK ||
        nnop__check_stored_desc(dst_desc, msg, sizeof msg) != NNOP_OK)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (!same_dims(src_desc, dst_desc))
        return NNOP_ERR_SHAPE;
    if (nnop__ranges_overlap(src, nnop_tensor_bytes(src_desc), dst, nnop_tensor_bytes(dst_desc)))
        return NNOP_ERR_INVALID_ARGUMENT; /* a permutation in place would read what it wrote */
    copy_elements(src_desc, (const char *)src, dst_desc, (char *)dst);
    return NNOP_OK;
}
