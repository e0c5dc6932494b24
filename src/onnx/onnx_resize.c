/* onnx_resize.c: Resize (opsets 10 to 19) and Upsample (7, 9) onto nnop_resize, whose nearest
 * and bilinear modes are PyTorch's (nnop.h). A node is taken only where nnop computes what ONNX
 * defines: nearest when the source index of every output row and column, by ONNX's coordinate
 * transform and rounding, is the one nnop takes (compared index by index at load); bilinear
 * for the half-pixel and align-corners transforms, which are PyTorch's align_corners 0 and 1
 * (ONNX's edge padding gives what PyTorch's clamping gives). */
#include <math.h>
#include <string.h>

#include "onnx_internal.h"

enum { CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_TF_HALF_NN };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL };

/* ONNX's source coordinate of output index dst (onnx/reference/ops/op_resize.py) */
static double onnx_coord(int ct, double dst, int64_t in, int64_t out, double scale)
{
    switch (ct) {
    case CT_ALIGN_CORNERS:
        return out == 1 ? 0.0 : dst * (double)(in - 1) / (double)(out - 1);
    case CT_ASYMMETRIC:
        return dst / scale;
    case CT_TF_HALF_NN:
        return (dst + 0.5) / scale;
    case CT_PYTORCH_HALF_PIXEL:
        return out == 1 ? -0.5 : (dst + 0.5) / scale - 0.5;
    default:
        return (dst + 0.5) / scale - 0.5;
    }
}

static int64_t onnx_nearest(int ct, int nm, int64_t dst, int64_t in, int64_t out, double scale)
{
    double x = onnx_coord(ct, (double)dst, in, out, scale), f = floor(x), r = x - f;
    int64_t i = (int64_t)f;
    if (r > 0.0 &&
        (nm == NM_CEIL || (nm == NM_ROUND_FLOOR && r > 0.5) || (nm == NM_ROUND_CEIL && r >= 0.5)))
        i++;
    return i < 0 ? 0 : i > in - 1 ? in - 1 : i;
}

/* nnop's nearest source index (nnop.h, nnop_resize): floor(dst * s) in float, clamped */
static int64_t nnop_nearest(const nnop_resize_params *p, int axis, int64_t dst, int64_t in,
                            int64_t out)
{
    float s;
    int64_t i;
    if (out == in)
        return dst;
    if (out == 2 * in)
        return dst >> 1;
    s = p->size[0] == 0 && p->size[1] == 0 ? (float)(1.0 / p->scale[axis]) : (float)in / (float)out;
    i = (int64_t)floorf((float)dst * s);
    return i < in - 1 ? i : in - 1;
}

/* the string attribute name: the index of its value in vals (NULL-ended), def when absent,
 * -1 for another value */
static int attr_choice(const Onnx__NodeProto *n, const char *name, const char *def,
                       const char *const *vals)
{
    int i;
    for (i = 0; vals[i]; i++)
        if (ox_attr_s_is(n, name, def, vals[i]))
            return i;
    return -1;
}

/* scales (floats) of the 4 dims, or the output sizes; from Upsample's attribute (opset 7) or
 * a constant input k (absent or empty: none) */
static nnop_status read_scales(ox_ctx *ox, const Onnx__NodeProto *n, size_t k, int is_sizes,
                               const int64_t *axes, int naxes, double *v, int *given)
{
    ox_tensor *t = ox_in(ox, n, k);
    int i;
    *given = 0;
    if (!t || (t->kind == OX_CONST && t->numel == 0))
        return NNOP_OK;
    if (t->kind != OX_CONST)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%s computed at run time",
                       is_sizes ? "sizes" : "scales");
    if (t->numel != naxes)
        return ox_fail(ox, NNOP_ERR_FORMAT, "%s has %lld values, not %d",
                       is_sizes ? "sizes" : "scales", (long long)t->numel, naxes);
    for (i = 0; i < naxes; i++)
        v[axes[i]] = ox_const_get(t, i);
    *given = 1;
    return NNOP_OK;
}

static nnop_status lower(ox_ctx *ox, const Onnx__NodeProto *n, ox_tensor *xt, nnop_value x,
                         int linear, int ct, int nm, const double *scales, const double *sizes)
{
    nnop_resize_params p;
    nnop_tensor_desc d;
    nnop_value y;
    int64_t out[2], in[2];
    double sc[2];
    int i;
    memset(&p, 0, sizeof p);
    p.mode = linear ? NNOP_RESIZE_BILINEAR : NNOP_RESIZE_NEAREST;
    for (i = 0; i < 2; i++) {
        in[i] = xt->dims[2 + i];
        if (sizes) {
            out[i] = (int64_t)sizes[2 + i];
            sc[i] = (double)out[i] / (double)in[i];
            p.size[i] = out[i];
        } else {
            if (!(scales[2 + i] > 0.0) || scales[2 + i] > 1e6)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "scale %g of axis %d", scales[2 + i],
                               2 + i);
            sc[i] = scales[2 + i];
            out[i] = (int64_t)floor((double)in[i] * sc[i]);
            p.scale[i] = sc[i];
        }
        if (out[i] < 1)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "an output of size %lld on axis %d",
                           (long long)out[i], 2 + i);
    }
    if (linear) {
        for (i = 0; i < 2; i++) {
            int same = out[i] == in[i];
            if (same && sc[i] != 1.0) /* nnop copies an axis that keeps its size */
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "linear with scale %g keeping axis %d's size %lld (nnop copies "
                               "it)",
                               sc[i], 2 + i, (long long)in[i]);
            if (same)
                continue;
            if (ct == CT_ASYMMETRIC || ct == CT_TF_HALF_NN)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "linear with coordinate_transformation_mode %s (nnop's bilinear "
                               "is half-pixel or align-corners)",
                               ct == CT_ASYMMETRIC ? "asymmetric" : "tf_half_pixel_for_nn");
            if (ct == CT_PYTORCH_HALF_PIXEL && out[i] == 1)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "pytorch_half_pixel to a size of 1 (axis %d)", 2 + i);
            if (ct == CT_ALIGN_CORNERS && (double)out[i] != (double)in[i] * sc[i])
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "align_corners with a scale that does not give a whole size "
                               "(axis %d)",
                               2 + i);
        }
        p.align_corners = ct == CT_ALIGN_CORNERS;
    } else {
        int64_t j;
        for (i = 0; i < 2; i++)
            for (j = 0; j < out[i]; j++) {
                int64_t a = onnx_nearest(ct, nm, j, in[i], out[i], sc[i]);
                int64_t b = nnop_nearest(&p, i, j, in[i], out[i]);
                if (a != b)
                    return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                                   "nearest: output %lld of axis %d reads input %lld, nnop's "
                                   "nearest (PyTorch's) %lld",
                                   (long long)j, 2 + i, (long long)a, (long long)b);
            }
    }
    y = nnop_resize(ox->g, x, &p);
    if (ox_check(ox, y))
        return ox->status;
    if (nnop_value_desc(ox->g, y, &d) != NNOP_OK || d.dims[2] != out[0] || d.dims[3] != out[1])
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "nnop_resize's output size differs from ONNX's");
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_resize(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"antialias",
                                        "axes",
                                        "coordinate_transformation_mode",
                                        "cubic_coeff_a",
                                        "exclude_outside",
                                        "extrapolation_value",
                                        "keep_aspect_ratio_policy",
                                        "mode",
                                        "nearest_mode",
                                        "scales",
                                        NULL};
    static const char *const modes[] = {"nearest", "linear", NULL};
    static const char *const cts[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                      NULL};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                      NULL};
    int upsample = n->op_type[0] == 'U', legacy = upsample || ox->opset < 11;
    int mode, ct = CT_HALF_PIXEL, nm = NM_ROUND_FLOOR, i, naxes = 4, have_sc = 0, have_sz = 0;
    int64_t axes[4] = {0, 1, 2, 3}, antialias = 0, excl = 0;
    double scales[4] = {1, 1, 1, 1}, sizes[4] = {0, 0, 0, 0};
    const int64_t *ax;
    int nax;
    ox_tensor *xt;
    nnop_value x;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (xt->ndim != 4)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "%d-D input (nnop resizes N,C,H,W)", xt->ndim);
    mode = attr_choice(n, "mode", "nearest", modes);
    if (mode < 0)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute mode other than nearest or linear");
    if (legacy) { /* Upsample, Resize-10: asymmetric, rounding down (upsampling) */
        ct = CT_ASYMMETRIC;
        nm = NM_FLOOR;
    } else {
        ct = attr_choice(n, "coordinate_transformation_mode", "half_pixel", cts);
        nm = attr_choice(n, "nearest_mode", "round_prefer_floor", nms);
        if (ct < 0)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "attribute coordinate_transformation_mode tf_crop_and_resize or "
                           "unknown");
        if (nm < 0)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute nearest_mode: unknown value");
        if (!ox_attr_s_is(n, "keep_aspect_ratio_policy", "stretch", "stretch"))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "attribute keep_aspect_ratio_policy other than stretch");
        s = ox_attr_i(ox, n, "antialias", 0, &antialias);
        if (!s)
            s = ox_attr_i(ox, n, "exclude_outside", 0, &excl);
        if (!s)
            s = ox_attr_ints(ox, n, "axes", &ax, &nax);
        if (s)
            return s;
        if (nax != -1) {
            if (nax < 1 || nax > 4)
                return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axes has %d values", nax);
            naxes = nax;
            for (i = 0; i < nax; i++) {
                axes[i] = ax[i] < 0 ? ax[i] + 4 : ax[i];
                if (axes[i] < 0 || axes[i] > 3)
                    return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axes: %lld out of range",
                                   (long long)ax[i]);
            }
        }
    }
    if (upsample && ox->opset < 9) {
        const Onnx__AttributeProto *a = ox_attr(n, "scales");
        if (!a || a->n_floats != 4)
            return ox_fail(ox, NNOP_ERR_FORMAT, "attribute scales must have 4 values");
        for (i = 0; i < 4; i++)
            scales[i] = a->floats[i];
        have_sc = 1;
    } else {
        if (ox_attr(n, "scales"))
            return ox_fail(ox, NNOP_ERR_FORMAT, "attribute scales from opset 9 on");
        s = read_scales(ox, n, legacy ? 1 : 2, 0, axes, naxes, scales, &have_sc);
        if (!s && !legacy)
            s = read_scales(ox, n, 3, 1, axes, naxes, sizes, &have_sz);
        if (s)
            return s;
    }
    if (have_sc == have_sz)
        return ox_fail(ox, NNOP_ERR_FORMAT, "give scales or sizes, one of them");
    /* half_pixel_symmetric is half_pixel where in * scale is the output size */
    if (ct == 5) {
        for (i = 2; i < 4 && have_sc; i++)
            if ((double)xt->dims[i] * scales[i] != floor((double)xt->dims[i] * scales[i]))
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "half_pixel_symmetric with a scale that does not give a whole "
                               "size (axis %d)",
                               i);
        ct = CT_HALF_PIXEL;
    }
    for (i = 0; i < 2; i++)
        if ((have_sc && scales[i] != 1.0) || (have_sz && sizes[i] != (double)xt->dims[i]))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "a resize of axis %d (nnop resizes H, W)", i);
    for (i = 2; i < 4; i++)
        if (have_sc && scales[i] < 1.0 && antialias && mode == 1)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "antialias 1 when downsampling");
    if (legacy && mode == 1)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "linear %s (asymmetric coordinates: nnop's bilinear is half-pixel or "
                       "align-corners)",
                       upsample ? "Upsample" : "Resize before opset 11");
    for (i = 2; legacy && i < 4; i++)
        if (scales[i] < 1.0)
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "nearest %s downsampling (axis %d)",
                           upsample ? "Upsample" : "Resize before opset 11", i);
    return lower(ox, n, xt, x, mode == 1, ct, nm, have_sc ? scales : NULL, have_sz ? sizes : NULL);
}
