/* onnx_pointwise.c: the element-wise operators: activations, Clip, PRelu, Identity,
 * Dropout, Add/Sub/Mul/Div (folded when both are constant) and Sum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* ---------------------------------------------------------------- activations */
nnop_status ox_op_act(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const alpha_attrs[] = {"alpha", "consumed_inputs", NULL};
    static const char *const hs_attrs[] = {"alpha", "beta", NULL};
    static const char *const selu_attrs[] = {"alpha", "gamma", "consumed_inputs", NULL};
    static const char *const gelu_attrs[] = {"approximate", NULL};
    const char *op = n->op_type;
    ox_tensor *xt;
    nnop_value x, y;
    float alpha = 0.0f, beta, gamma;
    nnop_act_kind kind;
    nnop_status s = ox_need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (strcmp(op, "Relu") == 0 || strcmp(op, "Sigmoid") == 0 || strcmp(op, "Tanh") == 0) {
        s = ox_check_attrs(ox, n, ox_no_attrs);
        kind = op[0] == 'R' ? NNOP_ACT_RELU : op[0] == 'S' ? NNOP_ACT_SIGMOID : NNOP_ACT_TANH;
    } else if (strcmp(op, "HardSwish") == 0 || strcmp(op, "Mish") == 0) {
        s = ox_check_attrs(ox, n, ox_no_attrs);
        kind = op[0] == 'H' ? NNOP_ACT_HARDSWISH : NNOP_ACT_MISH;
    } else if (strcmp(op, "LeakyRelu") == 0 || strcmp(op, "Elu") == 0) {
        s = ox_check_attrs(ox, n, alpha_attrs);
        if (!s)
            s = ox_attr_f(ox, n, "alpha", op[0] == 'L' ? 0.01f : 1.0f, &alpha);
        kind = op[0] == 'L' ? NNOP_ACT_LEAKY_RELU : NNOP_ACT_ELU;
    } else if (strcmp(op, "Gelu") == 0) {
        s = ox_check_attrs(ox, n, gelu_attrs);
        if (ox_attr_s_is(n, "approximate", "none", "none"))
            kind = NNOP_ACT_GELU;
        else if (ox_attr_s_is(n, "approximate", "none", "tanh"))
            kind = NNOP_ACT_GELU_TANH;
        else
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "attribute approximate: unknown value");
    } else if (strcmp(op, "HardSigmoid") == 0) {
        s = ox_check_attrs(ox, n, hs_attrs);
        if (!s)
            s = ox_attr_f(ox, n, "alpha", 0.2f, &alpha);
        if (!s)
            s = ox_attr_f(ox, n, "beta", 0.5f, &beta);
        if (s)
            return s;
        if (fabsf(alpha - 1.0f / 6.0f) < 1e-7f && beta == 0.5f) {
            kind = NNOP_ACT_HARDSIGMOID;
        } else { /* max(0, min(1, alpha x + beta)) */
            s = ox_affine1(ox, xt, x, alpha, beta, &y);
            if (s)
                return s;
            y = nnop_clamp(ox->g, y, 0.0f, 1.0f);
            return ox_set_value(ox, n, 0, y, xt->elem);
        }
    } else { /* Selu: gamma * elu_alpha(x) */
        s = ox_check_attrs(ox, n, selu_attrs);
        if (!s)
            s = ox_attr_f(ox, n, "alpha", 1.67326319217681884765625f, &alpha);
        if (!s)
            s = ox_attr_f(ox, n, "gamma", 1.05070102214813232421875f, &gamma);
        if (s)
            return s;
        y = nnop_act(ox->g, x, NNOP_ACT_ELU, alpha);
        s = ox_check(ox, y);
        if (!s)
            s = ox_affine1(ox, xt, y, gamma, 0.0f, &y);
        return s ? s : ox_set_value(ox, n, 0, y, xt->elem);
    }
    if (s)
        return s;
    y = nnop_act(ox->g, x, kind, alpha);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_clip(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const old_attrs[] = {"min", "max", "consumed_inputs", NULL};
    ox_tensor *xt;
    nnop_value x, y;
    double lo = -INFINITY, hi = INFINITY, v;
    int present;
    nnop_status s = ox_need_value(ox, n, 0, &xt, &x);
    if (s)
        return s;
    if (ox->opset < 11) {
        float f;
        s = ox_check_attrs(ox, n, old_attrs);
        if (!s && ox_attr(n, "min"))
            s = ox_attr_f(ox, n, "min", 0.0f, &f), lo = f;
        if (!s && ox_attr(n, "max"))
            s = ox_attr_f(ox, n, "max", 0.0f, &f), hi = f;
    } else {
        s = ox_check_attrs(ox, n, ox_no_attrs);
        if (!s)
            s = ox_const_scalar(ox, n, 1, "min", &v, &present);
        if (!s && present)
            lo = v;
        if (!s)
            s = ox_const_scalar(ox, n, 2, "max", &v, &present);
        if (!s && present)
            hi = v;
    }
    if (s)
        return s;
    if (lo > hi)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "min %g above max %g", lo, hi);
    y = nnop_clamp(ox->g, x, (float)lo, (float)hi);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_prelu(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *xt, *st;
    nnop_value x, y, neg, slope;
    int64_t c, k, adims[OX_MAX_DIMS];
    float *buf;
    int d, per_channel = 1, uniform = 1;
    nnop_status s = ox_check_attrs(ox, n, ox_no_attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &xt, &x);
    if (!s)
        s = ox_need_in(ox, n, 1, &st);
    if (s)
        return s;
    if (st->kind != OX_CONST || !st->f)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "slope '%s' is not a float constant", st->name);
    for (k = 1; k < st->numel; k++)
        if (st->f[k] != st->f[0])
            uniform = 0;
    if (uniform && st->numel >= 1) {
        y = nnop_act(ox->g, x, NNOP_ACT_LEAKY_RELU, st->f[0]);
        return ox_set_value(ox, n, 0, y, xt->elem);
    }
    /* per channel: relu(x) - slope[c] * relu(-x) */
    if (xt->ndim < 2 || st->ndim > xt->ndim)
        per_channel = 0;
    for (d = 0; per_channel && d < xt->ndim; d++) {
        int sd = d - (xt->ndim - st->ndim);
        adims[d] = sd >= 0 ? st->dims[sd] : 1;
        if (d != 1 && adims[d] != 1)
            per_channel = 0;
    }
    if (!per_channel || adims[1] != xt->dims[1])
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "slope '%s' is neither one value nor one per "
                       "channel",
                       st->name);
    c = xt->dims[1];
    if ((s = ox_made(ox, c, "a per-channel slope")) != NNOP_OK)
        return s;
    buf = (float *)malloc((size_t)c * 2 * sizeof(float));
    if (!buf)
        return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < c; k++) {
        buf[k] = -1.0f;
        buf[c + k] = 0.0f;
    }
    s = ox_affine(ox, x, buf, buf + c, c, &neg);
    if (!s) {
        neg = nnop_act(ox->g, neg, NNOP_ACT_RELU, 0.0f);
        s = ox_check(ox, neg);
    }
    if (!s) {
        for (k = 0; k < c; k++)
            buf[k] = -st->f[k];
        s = ox_affine(ox, neg, buf, buf + c, c, &slope); /* -slope * relu(-x) */
    }
    free(buf);
    if (s)
        return s;
    y = nnop_act(ox->g, x, NNOP_ACT_RELU, 0.0f);
    if ((s = ox_check(ox, y)) != NNOP_OK)
        return s;
    y = nnop_add(ox->g, y, slope);
    return ox_set_value(ox, n, 0, y, xt->elem);
}

nnop_status ox_op_identity(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *x;
    nnop_status s = ox_check_attrs(ox, n, ox_no_attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &x);
    return s ? s : ox_set_alias(ox, n, 0, x);
}

nnop_status ox_op_dropout(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"ratio", "is_test", "seed", "consumed_inputs", NULL};
    ox_tensor *x, *tm;
    int64_t is_test = 0;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &x);
    if (!s)
        s = ox_attr_i(ox, n, "is_test", 0, &is_test);
    if (s)
        return s;
    if (ox_out_used(ox, n, 1))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "output 1 ('%s', the mask)", n->output[1]);
    tm = ox_in(ox, n, 2); /* opset 12: training_mode */
    if (tm && (tm->kind != OX_CONST || tm->numel != 1 || ox_const_get(tm, 0) != 0.0))
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "training_mode '%s' is not constant false "
                       "(nnop runs inference)",
                       tm->name);
    return ox_set_alias(ox, n, 0, x);
}

/* ---------------------------------------------------------------- elementwise binary */
typedef enum { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV } bin_kind;

static nnop_status fold_binary(ox_ctx *ox, const Onnx__NodeProto *n, bin_kind op, ox_tensor *a,
                               ox_tensor *b, const int64_t *bd, int bn)
{
    int64_t od[OX_MAX_DIMS], k;
    int on;
    ox_tensor *t;
    size_t ia = (size_t)(a - ox->t), ib = (size_t)(b - ox->t);
    int isf = a->f != NULL;
    if ((a->f != NULL) != (b->f != NULL))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operands of different element types");
    if (!ox_bcast_shape(a->dims, a->ndim, bd, bn, od, &on))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes do not broadcast");
    t = ox_set_const(ox, n, 0, a->elem, on, od);
    if (!t)
        return ox->status;
    a = &ox->t[ia];
    b = &ox->t[ib];
    for (k = 0; k < t->numel; k++) {
        int64_t i = ox_bcast_index(k, od, on, a->dims, a->ndim);
        int64_t j = ox_bcast_index(k, od, on, bd, bn);
        if (isf) {
            float x = a->f[i], y = b->f[j];
            t->f[k] = op == BIN_ADD ? x + y : op == BIN_SUB ? x - y : op == BIN_MUL ? x * y : x / y;
        } else {
            int64_t x = a->i[i], y = b->i[j];
            if (op == BIN_DIV && y == 0)
                return ox_fail(ox, NNOP_ERR_FORMAT, "integer division by zero");
            t->i[k] = op == BIN_ADD                 ? (int64_t)((uint64_t)x + (uint64_t)y)
                      : op == BIN_SUB               ? (int64_t)((uint64_t)x - (uint64_t)y)
                      : op == BIN_MUL               ? (int64_t)((uint64_t)x * (uint64_t)y)
                      : (x == INT64_MIN && y == -1) ? x
                                                    : x / y;
        }
    }
    return NNOP_OK;
}

nnop_status ox_op_binary(ox_ctx *ox, const Onnx__NodeProto *n)
{
    static const char *const attrs[] = {"broadcast", "axis", "consumed_inputs", NULL};
    const char *op = n->op_type;
    bin_kind kind = op[0] == 'A'   ? BIN_ADD
                    : op[0] == 'S' ? BIN_SUB
                    : op[0] == 'M' ? BIN_MUL
                                   : BIN_DIV;
    ox_tensor *a, *b;
    int64_t bd[OX_MAX_DIMS], od[OX_MAX_DIMS], axis = -1, bcast = 0;
    int bn, on, d, per_channel, uniform;
    char sa[128], sb[128];
    nnop_value va, vb, y;
    nnop_status s = ox_check_attrs(ox, n, attrs);
    if (!s)
        s = ox_need_in(ox, n, 0, &a);
    if (!s)
        s = ox_need_in(ox, n, 1, &b);
    if (!s)
        s = ox_attr_i(ox, n, "broadcast", 0, &bcast);
    if (!s)
        s = ox_attr_i(ox, n, "axis", -1, &axis);
    if (s)
        return s;
    if (a->kind == OX_CONST && b->kind == OX_CONST && ox->opset >= 7) {
        /* fall through to folding below with b's own dims */
    }
    bn = b->ndim;
    memcpy(bd, b->dims, sizeof bd);
    if (ox->opset < 7 && bcast && ox_attr(n, "axis")) {
        /* legacy broadcast: b's dims line up with a's from axis on */
        int64_t ax = ox_norm_axis(axis, a->ndim);
        if (ax < 0 || ax + b->ndim > a->ndim)
            return ox_fail(ox, NNOP_ERR_FORMAT, "attribute axis %lld out of range",
                           (long long)axis);
        for (d = 0; d < a->ndim; d++)
            bd[d] = d >= ax && d < ax + b->ndim ? b->dims[d - ax] : 1;
        bn = a->ndim;
    } else if (ox->opset < 7 && !bcast && !ox_same_dims(a->dims, a->ndim, b->dims, b->ndim)) {
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes differ without broadcast");
    }
    if (a->kind == OX_CONST && b->kind == OX_CONST)
        return fold_binary(ox, n, kind, a, b, bd, bn);
    if (!ox_bcast_shape(a->dims, a->ndim, bd, bn, od, &on))
        return ox_fail(ox, NNOP_ERR_FORMAT, "operand shapes do not broadcast");
    /* the run-time operand goes first */
    if (a->kind == OX_CONST || !ox_same_dims(od, on, a->dims, a->ndim)) {
        if (kind == BIN_ADD || kind == BIN_MUL) {
            ox_tensor *t = a;
            if (bn != b->ndim)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "legacy broadcast of a constant first "
                               "operand");
            a = b;
            b = t;
            bn = b->ndim;
            memcpy(bd, b->dims, sizeof bd);
        } else if (kind == BIN_SUB && a->kind == OX_CONST &&
                   ox_same_dims(od, on, b->dims, b->ndim)) {
            /* c - x = (-x) + c */
            ox_tensor *t = a;
            s = ox_value_of(ox, b, &vb);
            if (!s)
                s = ox_affine1(ox, b, vb, -1.0f, 0.0f, &va);
            if (s)
                return s;
            kind = BIN_ADD;
            a = NULL;
            b = t;
            bn = b->ndim;
            memcpy(bd, b->dims, sizeof bd);
            goto have_a;
        }
    }
    if (a->kind == OX_CONST || !ox_same_dims(od, on, a->dims, a->ndim)) {
        ox_shape_str(sa, sizeof sa, a->dims, a->ndim);
        ox_shape_str(sb, sizeof sb, b->dims, b->ndim);
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                       "%s %s by %s: nnop broadcasts the second operand only", op, sa, sb);
    }
    s = ox_value_of(ox, a, &va);
    if (s)
        return s;
have_a:
    /* b aligned to the output's rank */
    {
        int64_t al[OX_MAX_DIMS];
        for (d = 0; d < on; d++) {
            int sd = d - (on - bn);
            al[d] = sd >= 0 ? bd[sd] : 1;
        }
        per_channel = on >= 2;
        for (d = 0; d < on; d++)
            if (d != 1 && al[d] != 1)
                per_channel = 0;
        if (b->kind == OX_CONST) {
            int64_t k, c = od[1];
            float *ab;
            if (!b->f)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "operand '%s' is %s", b->name,
                               ox_elem_name(b->elem));
            uniform = 1;
            for (k = 1; k < b->numel; k++)
                if (b->f[k] != b->f[0])
                    uniform = 0;
            if (ox_same_dims(bd, bn, od, on) && !uniform) {
                s = ox_value_of(ox, b, &vb);
            } else if ((uniform || per_channel) && on >= 2 && kind != BIN_DIV) {
                if ((s = ox_made(ox, c, "a per-channel operand")) != NNOP_OK)
                    return s;
                ab = (float *)malloc((size_t)c * 2 * sizeof(float));
                if (!ab)
                    return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
                for (k = 0; k < c; k++) {
                    float v = b->f[uniform ? 0 : k];
                    ab[k] = kind == BIN_MUL ? v : 1.0f;
                    ab[c + k] = kind == BIN_ADD ? v : kind == BIN_SUB ? -v : 0.0f;
                }
                s = ox_affine(ox, va, ab, ab + c, c, &y);
                free(ab);
                return s ? s : ox_set_value(ox, n, 0, y, a ? a->elem : b->elem);
            } else { /* the constant broadcast to the output's shape */
                float *full;
                int64_t total = ox_numel(od, on);
                if (total <= 0)
                    return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "empty operand");
                if ((s = ox_made(ox, total, "a constant broadcast")) != NNOP_OK)
                    return s;
                full = (float *)malloc((size_t)total * sizeof(float));
                if (!full)
                    return ox_fail(ox, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
                for (k = 0; k < total; k++)
                    full[k] = b->f[ox_bcast_index(k, od, on, bd, bn)];
                if (on == 4 && per_channel) { /* 1,C,1,1: nnop's own broadcast */
                    int64_t cd[4] = {1, od[1], 1, 1};
                    for (k = 0; k < c; k++)
                        full[k] = b->f[uniform ? 0 : k];
                    s = ox_make_const(ox, b->name, full, 4, cd, &vb);
                } else
                    s = ox_make_const(ox, b->name, full, on, od, &vb);
                free(full);
            }
            if (s)
                return s;
        } else {
            /* squeeze-excitation's N,C,1,1 (any N: per_channel above wants 1,C,1,1) */
            int se = on == 4 && bn == 4 && bd[0] == od[0] && bd[1] == od[1] && bd[2] == 1 &&
                     bd[3] == 1;
            s = ox_value_of(ox, b, &vb);
            if (s)
                return s;
            if (!ox_same_dims(bd, bn, od, on) &&
                !(on == 4 && bn == 4 && (per_channel || se) && (kind != BIN_ADD))) {
                ox_shape_str(sa, sizeof sa, od, on);
                ox_shape_str(sb, sizeof sb, b->dims, b->ndim);
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                               "%s of %s by %s computed at run time "
                               "(nnop broadcasts N,C,1,1 over N,C,H,W for Mul, Sub and Div)",
                               op, sa, sb);
            }
        }
    }
    y = kind == BIN_ADD   ? nnop_add(ox->g, va, vb)
        : kind == BIN_SUB ? nnop_sub(ox->g, va, vb)
        : kind == BIN_MUL ? nnop_mul(ox->g, va, vb)
                          : nnop_div(ox->g, va, vb);
    return ox_set_value(ox, n, 0, y, a ? a->elem : b->elem);
}

/* Sum of values of one shape (older exporters' residual add): a chain of adds */
nnop_status ox_op_sum(ox_ctx *ox, const Onnx__NodeProto *n)
{
    ox_tensor *first, *t;
    nnop_value acc, v;
    size_t k;
    nnop_status s = ox_check_attrs(ox, n, ox_no_attrs);
    if (!s)
        s = ox_need_value(ox, n, 0, &first, &acc);
    if (s)
        return s;
    if (n->n_input == 1)
        return ox_set_alias(ox, n, 0, first);
    for (k = 1; k < n->n_input; k++) {
        if ((s = ox_need_value(ox, n, k, &t, &v)) != NNOP_OK)
            return s;
        if (!ox_same_dims(t->dims, t->ndim, first->dims, first->ndim))
            return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                           "inputs of different shapes (nnop sums "
                           "values of one shape)");
        acc = nnop_add(ox->g, acc, v);
        if ((s = ox_check(ox, acc)) != NNOP_OK)
            return s;
    }
    return ox_set_value(ox, n, 0, acc, first->elem);
}

/* Erf alone: nnop has GELU, whose erf form onnx_fuse.c takes whole, and no erf. */
nnop_status ox_op_erf(ox_ctx *ox, const Onnx__NodeProto *n)
{
    (void)n;
    return ox_fail(ox, NNOP_ERR_UNSUPPORTED,
                   "Erf outside GELU's erf form (x -> Div sqrt 2 -> Erf -> Add 1 -> Mul x -> "
                   "Mul 0.5, each step read once): nnop has GELU, not erf");
}
