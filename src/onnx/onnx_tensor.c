/* onnx_tensor.c: the importer's table of named tensors, TensorProto decoding, constants. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

int ox_is_float_elem(int elem)
{
    return elem == OX_FLOAT || elem == OX_DOUBLE || elem == OX_FLOAT16 || elem == OX_BFLOAT16;
}

const char *ox_elem_name(int elem)
{
    switch (elem) {
    case OX_FLOAT:
        return "float";
    case OX_UINT8:
        return "uint8";
    case OX_INT8:
        return "int8";
    case OX_UINT16:
        return "uint16";
    case OX_INT16:
        return "int16";
    case OX_INT32:
        return "int32";
    case OX_INT64:
        return "int64";
    case 8:
        return "string";
    case OX_BOOL:
        return "bool";
    case OX_FLOAT16:
        return "float16";
    case OX_DOUBLE:
        return "double";
    case OX_UINT32:
        return "uint32";
    case OX_UINT64:
        return "uint64";
    case OX_BFLOAT16:
        return "bfloat16";
    default:
        return "an element type nnop does not read";
    }
}

/* bytes of one element in raw_data, 0 for types the importer does not read */
static size_t elem_size(int elem)
{
    switch (elem) {
    case OX_UINT8:
    case OX_INT8:
    case OX_BOOL:
        return 1;
    case OX_UINT16:
    case OX_INT16:
    case OX_FLOAT16:
    case OX_BFLOAT16:
        return 2;
    case OX_FLOAT:
    case OX_INT32:
    case OX_UINT32:
        return 4;
    case OX_INT64:
    case OX_DOUBLE:
    case OX_UINT64:
        return 8;
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- the name table */
static size_t hash_name(const char *s)
{
    size_t h = 1469598103u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

ox_tensor *ox_find(ox_ctx *ox, const char *name)
{
    size_t h, k;
    if (!name || !ox->hcap)
        return NULL;
    h = hash_name(name) & (ox->hcap - 1);
    for (k = 0; k < ox->hcap; k++) {
        size_t slot = (h + k) & (ox->hcap - 1);
        size_t idx = ox->hash[slot];
        if (!idx)
            return NULL;
        if (strcmp(ox->t[idx - 1].name, name) == 0)
            return &ox->t[idx - 1];
    }
    return NULL;
}

int ox_used(ox_ctx *ox, const char *name)
{
    const ox_tensor *t = ox_find(ox, name);
    return t && t->used;
}

static int rehash(ox_ctx *ox, size_t hcap)
{
    size_t i, *h = (size_t *)calloc(hcap, sizeof *h);
    if (!h)
        return 0;
    for (i = 0; i < ox->nt; i++) {
        size_t s = hash_name(ox->t[i].name) & (hcap - 1);
        while (h[s])
            s = (s + 1) & (hcap - 1);
        h[s] = i + 1;
    }
    free(ox->hash);
    ox->hash = h;
    ox->hcap = hcap;
    return 1;
}

ox_tensor *ox_add(ox_ctx *ox, const char *name)
{
    ox_tensor *t = ox_find(ox, name);
    size_t s;
    if (t)
        return t;
    if (ox->nt == ox->cap) {
        size_t cap = ox->cap ? ox->cap * 2 : 64;
        ox_tensor *nt = (ox_tensor *)realloc(ox->t, cap * sizeof *nt);
        if (!nt) {
            ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory for the tensor table");
            return NULL;
        }
        ox->t = nt;
        ox->cap = cap;
    }
    if ((ox->nt + 1) * 2 > ox->hcap && !rehash(ox, ox->hcap ? ox->hcap * 2 : 128)) {
        ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory for the tensor table");
        return NULL;
    }
    t = &ox->t[ox->nt];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->v.id = -1;
    s = hash_name(name) & (ox->hcap - 1);
    while (ox->hash[s])
        s = (s + 1) & (ox->hcap - 1);
    ox->hash[s] = ++ox->nt;
    return t;
}

/* ---------------------------------------------------------------- constants */
int64_t ox_numel(const int64_t *dims, int ndim)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < ndim; d++) {
        if (dims[d] < 0)
            return -1;
        if (dims[d] && n > NNOP_MAX_TENSOR_ELEMENTS / dims[d])
            return -1;
        n *= dims[d];
    }
    return n;
}

nnop_status ox_const_alloc(ox_ctx *ox, ox_tensor *t, int elem)
{
    int64_t n = ox_numel(t->dims, t->ndim);
    size_t bytes;
    if (n < 0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': too many elements", t->name);
    free(t->f);
    free(t->i);
    t->f = NULL;
    t->i = NULL;
    t->kind = OX_CONST;
    t->elem = elem;
    t->numel = n;
    bytes = (size_t)(n ? n : 1);
    if (ox_is_float_elem(elem))
        t->f = (float *)malloc(bytes * sizeof(float));
    else
        t->i = (int64_t *)malloc(bytes * sizeof(int64_t));
    if (!t->f && !t->i)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "tensor '%s': out of memory (%lld elements)",
                       t->name, (long long)n);
    return NNOP_OK;
}

double ox_const_get(const ox_tensor *t, int64_t k)
{
    return t->f ? (double)t->f[k] : (double)t->i[k];
}

static uint64_t le_bytes(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    size_t b;
    for (b = 0; b < n; b++)
        v |= (uint64_t)p[b] << (8 * b);
    return v;
}

static float f32_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float f16_or_bf16(int elem, uint16_t bits)
{
    if (elem == OX_BFLOAT16)
        return f32_of_bits((uint32_t)bits << 16);
    {
        float f = 0;
        nnop_convert(NNOP_F16, &bits, NNOP_F32, &f, 1);
        return f;
    }
}

/* one element of a raw_data buffer */
static void store_raw(ox_tensor *t, int64_t k, const uint8_t *p)
{
    uint64_t u = le_bytes(p, elem_size(t->elem));
    switch (t->elem) {
    case OX_FLOAT:
        t->f[k] = f32_of_bits((uint32_t)u);
        break;
    case OX_DOUBLE: {
        double d;
        memcpy(&d, &u, sizeof d);
        t->f[k] = (float)d;
        break;
    }
    case OX_FLOAT16:
    case OX_BFLOAT16:
        t->f[k] = f16_or_bf16(t->elem, (uint16_t)u);
        break;
    case OX_INT8:
        t->i[k] = (int8_t)(uint8_t)u;
        break;
    case OX_INT16:
        t->i[k] = (int16_t)(uint16_t)u;
        break;
    case OX_INT32:
        t->i[k] = (int32_t)(uint32_t)u;
        break;
    case OX_INT64:
        t->i[k] = (int64_t)u;
        break;
    case OX_UINT64:
        t->i[k] = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
        break;
    default: /* uint8, uint16, uint32, bool */
        t->i[k] = (int64_t)u;
        break;
    }
}

nnop_status ox_tensor_from_proto(ox_ctx *ox, ox_tensor *t, const Onnx__TensorProto *p)
{
    int64_t k, n;
    size_t count = 0;
    int elem = p->has_data_type ? p->data_type : 0;
    int external =
            p->has_data_location && p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const uint8_t *raw = p->has_raw_data ? p->raw_data.data : NULL;
    unsigned char *ext = NULL;
    nnop_status s;
    if (!elem_size(elem))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': element type %s (%d)", t->name,
                       ox_elem_name(elem), elem);
    if (p->n_dims > OX_MAX_DIMS)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': %zu dims (at most %d)", t->name,
                       p->n_dims, OX_MAX_DIMS);
    if (p->segment)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': segmented tensors", t->name);
    t->ndim = (int)p->n_dims;
    for (k = 0; k < t->ndim; k++) {
        if (p->dims[k] < 0)
            return ox_fail(ox, NNOP_ERR_FORMAT, "tensor '%s': dim %lld is %lld", t->name,
                           (long long)k, (long long)p->dims[k]);
        t->dims[k] = p->dims[k];
    }
    n = ox_numel(t->dims, t->ndim);
    if (n < 0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "tensor '%s': too many elements", t->name);
    /* the count the data holds must be the dims' before anything is allocated (an external
     * file's, by its size and the length key) */
    if (external) {
        s = ox_external_read(ox, p, t->name, (size_t)n * elem_size(elem), &ext);
        if (s)
            return s;
        raw = ext;
    } else if (p->has_raw_data) {
        if (p->raw_data.len != (size_t)n * elem_size(elem))
            return ox_fail(ox, NNOP_ERR_FORMAT,
                           "tensor '%s': raw_data holds %zu bytes, its dims need %lld", t->name,
                           p->raw_data.len, (long long)((size_t)n * elem_size(elem)));
    } else {
        switch (elem) {
        case OX_FLOAT:
            count = p->n_float_data;
            break;
        case OX_DOUBLE:
            count = p->n_double_data;
            break;
        case OX_INT64:
            count = p->n_int64_data;
            break;
        case OX_UINT32:
        case OX_UINT64:
            count = p->n_uint64_data;
            break;
        default:
            count = p->n_int32_data;
            break;
        }
        if (count != (size_t)n)
            return ox_fail(ox, NNOP_ERR_FORMAT,
                           "tensor '%s': holds %zu %s elements, its dims need %lld", t->name, count,
                           ox_elem_name(elem), (long long)n);
    }
    s = ox_const_alloc(ox, t, elem);
    if (s) {
        free(ext);
        return s;
    }
    for (k = 0; k < n; k++) {
        if (raw) {
            store_raw(t, k, raw + (size_t)k * elem_size(elem));
            continue;
        }
        switch (elem) {
        case OX_FLOAT:
            t->f[k] = p->float_data[k];
            break;
        case OX_DOUBLE:
            t->f[k] = (float)p->double_data[k];
            break;
        case OX_FLOAT16:
        case OX_BFLOAT16:
            t->f[k] = f16_or_bf16(elem, (uint16_t)p->int32_data[k]);
            break;
        case OX_INT64:
            t->i[k] = p->int64_data[k];
            break;
        case OX_UINT32:
        case OX_UINT64:
            t->i[k] = p->uint64_data[k] > (uint64_t)INT64_MAX ? INT64_MAX
                                                              : (int64_t)p->uint64_data[k];
            break;
        default:
            t->i[k] = p->int32_data[k];
            break;
        }
    }
    free(ext);
    return NNOP_OK;
}

/* ---------------------------------------------------------------- broadcasting */
int ox_bcast_shape(const int64_t *a, int an, const int64_t *b, int bn, int64_t *out, int *on)
{
    int n = an > bn ? an : bn, d;
    if (n > OX_MAX_DIMS)
        return 0;
    for (d = 0; d < n; d++) {
        int64_t x = d - (n - an) >= 0 ? a[d - (n - an)] : 1;
        int64_t y = d - (n - bn) >= 0 ? b[d - (n - bn)] : 1;
        if (x != y && x != 1 && y != 1)
            return 0;
        out[d] = x == 1 ? y : x;
    }
    *on = n;
    return 1;
}

int64_t ox_bcast_index(int64_t k, const int64_t *od, int on, const int64_t *sd, int sn)
{
    int64_t idx = 0, stride = 1;
    int d;
    for (d = on - 1; d >= 0; d--) {
        int64_t c = k % od[d];
        int sdim = d - (on - sn);
        k /= od[d];
        if (sdim >= 0) {
            if (sd[sdim] != 1)
                idx += c * stride;
            stride *= sd[sdim];
        }
    }
    return idx;
}

/* ---------------------------------------------------------------- nnop constants */
nnop_status ox_make_const(ox_ctx *ox, const char *name, const float *data, int ndim,
                          const int64_t *dims, nnop_value *out)
{
    nnop_tensor_desc src, dst;
    void *buf;
    nnop_status s;
    int d;
    int64_t n = ox_numel(dims, ndim);
    if (ndim < 1 || ndim > NNOP_MAX_DIMS || n <= 0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "constant '%s': %d dims, %lld elements", name,
                       ndim, (long long)n);
    memset(&src, 0, sizeof src);
    src.dtype = NNOP_F32;
    src.ndim = ndim;
    for (d = ndim - 1; d >= 0; d--) {
        src.dims[d] = dims[d];
        src.strides[d] = d == ndim - 1 ? 1 : src.strides[d + 1] * src.dims[d + 1];
    }
    if (ndim == 4)
        dst = nnop_tensor_4d(ox->o.dtype, ox->o.layout, dims[0], dims[1], dims[2], dims[3]);
    else {
        dst = src;
        dst.dtype = ox->o.dtype;
    }
    buf = malloc(nnop_tensor_bytes(&dst) ? nnop_tensor_bytes(&dst) : 1);
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "constant '%s': out of memory", name);
    s = nnop_tensor_copy(&src, data, &dst, buf);
    if (s) {
        free(buf);
        return ox_fail(ox, s, "constant '%s': conversion failed", name);
    }
    *out = nnop_constant(ox->g, name, &dst, buf);
    free(buf);
    return ox_check(ox, *out);
}

nnop_status ox_value_of(ox_ctx *ox, ox_tensor *t, nnop_value *out)
{
    nnop_status s;
    if (t->kind == OX_VALUE || t->has_v) {
        *out = t->v;
        return NNOP_OK;
    }
    if (t->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_FORMAT, "tensor '%s' is made by no earlier node", t->name);
    if (!t->f)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "tensor '%s' is %s: nnop computes on float tensors only", t->name,
                       ox_elem_name(t->elem));
    if (t->ndim == 0) {
        int64_t one = 1;
        s = ox_make_const(ox, t->name, t->f, 1, &one, out);
    } else
        s = ox_make_const(ox, t->name, t->f, t->ndim, t->dims, out);
    if (s)
        return s;
    t->v = *out;
    t->has_v = 1;
    return NNOP_OK;
}

/* A channels-last view (onnx_view.c) of the value t holds; here, below every converter that
 * makes one. */
void ox_mark_view(ox_tensor *t) /* N,C,H,W -> N,H,W,C */
{
    int64_t c = t->dims[1];
    t->dims[1] = t->dims[2];
    t->dims[2] = t->dims[3];
    t->dims[3] = c;
    t->view_cl = 1;
}
