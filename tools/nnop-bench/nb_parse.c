/* nb_parse.c: nnop-bench problem descriptors and problem files. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nb.h"

#define NB_MAX_DIM ((int64_t)1 << 40)

static const char *const op_names[NB_OP_COUNT] = {"conv",    "pool",    "gap",     "linear",
                                                  "softmax", "flatten", "eltwise", "deconv",
                                                  "norm",    "resize"};
/* dimension letters each op takes, and the ones it needs */
static const char *const op_dims[NB_OP_COUNT] = {"nchwkrs", "nchwrs", "nchw",    "nck",  "nchw",
                                                 "nchw",    "nchw",   "nchwkrs", "nchw", "nchw"};
static const char *const op_need[NB_OP_COUNT] = {"nchkr", "nchr", "nch",   "nck", "nc",
                                                 "nch",   "nc",   "nchkr", "nch", "nch"};
static const char *const op_example[NB_OP_COUNT] = {
        "n32c64h56w56k64r3s3", "n32c64h112w112r3s3", "n32c2048h7w7",
        "n32c2048k1000",       "n32c1000",           "n32c2048h1w1",
        "n32c64h56w56",        "n1c64h28w28k32r2s2", "n8c96h56w56",
        "n1c64h32w32"};
static const char *const norm_names[] = {"layer", "layer_chw", "group", "rms"};

static const struct {
    const char *name;
    nnop_act_kind act;
    float alpha;
} acts[] = {
        {"identity", NNOP_ACT_IDENTITY, 0.0f},   {"relu", NNOP_ACT_RELU, 0.0f},
        {"relu6", NNOP_ACT_RELU6, 0.0f},         {"leaky_relu", NNOP_ACT_LEAKY_RELU, 0.01f},
        {"gelu", NNOP_ACT_GELU, 0.0f},           {"gelu_tanh", NNOP_ACT_GELU_TANH, 0.0f},
        {"sigmoid", NNOP_ACT_SIGMOID, 0.0f},     {"tanh", NNOP_ACT_TANH, 0.0f},
        {"silu", NNOP_ACT_SILU, 0.0f},           {"elu", NNOP_ACT_ELU, 1.0f},
        {"hardswish", NNOP_ACT_HARDSWISH, 0.0f}, {"hardsigmoid", NNOP_ACT_HARDSIGMOID, 0.0f},
        {"mish", NNOP_ACT_MISH, 0.0f},
};

static int fail(char *err, size_t len, const char *fmt, ...) NB_PRINTF(3, 4);
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (err && len) {
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *nb_op_name(nb_op op)
{
    return (unsigned)op < NB_OP_COUNT ? op_names[op] : "?";
}

const char *nb_dtype_name(nnop_dtype t)
{
    return t == NNOP_F16 ? "f16" : t == NNOP_BF16 ? "bf16" : "f32";
}

const char *nb_layout_name(nnop_layout l)
{
    return l == NNOP_NHWC ? "nhwc" : "nchw";
}

int nb_parse_dtype(const char *s, nnop_dtype *t)
{
    if (strcmp(s, "f32") == 0)
        *t = NNOP_F32;
    else if (strcmp(s, "f16") == 0)
        *t = NNOP_F16;
    else if (strcmp(s, "bf16") == 0)
        *t = NNOP_BF16;
    else
        return -1;
    return 0;
}

int nb_parse_layout(const char *s, nnop_layout *l)
{
    if (strcmp(s, "nchw") == 0)
        *l = NNOP_NCHW;
    else if (strcmp(s, "nhwc") == 0)
        *l = NNOP_NHWC;
    else
        return -1;
    return 0;
}

/* A decimal integer in [lo, NB_MAX_DIM] at *s; advances *s. */
static int number(const char **s, int64_t lo, int64_t *out)
{
    const char *p = *s;
    int64_t v = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p - '0');
        if (v > NB_MAX_DIM)
            return -1;
        p++;
    }
    if (v < lo)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

/* "<a>" or "<a>x<b>" (height x width) after a prefix; the whole token. */
static int pair(const char *s, int64_t lo, int64_t out[2])
{
    if (number(&s, lo, &out[0]) != 0)
        return -1;
    out[1] = out[0];
    if (*s == 'x') {
        s++;
        if (number(&s, lo, &out[1]) != 0)
            return -1;
    }
    return *s ? -1 : 0;
}

static int parse_float(const char *s, float *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end || errno)
        return -1;
    *out = (float)v;
    return 0;
}

static int parse_shape(const char *tok, nb_problem *p, const char *op, char *err, size_t len)
{
    const char *allowed = op_dims[p->op], *need = op_need[p->op], *s = tok;
    int64_t *slot[7];
    int seen[7] = {0, 0, 0, 0, 0, 0, 0};
    const char *letters = "nchwkrs";
    size_t i;
    slot[0] = &p->n, slot[1] = &p->c, slot[2] = &p->h, slot[3] = &p->w, slot[4] = &p->k,
    slot[5] = &p->r, slot[6] = &p->s;
    while (*s) {
        const char *at = strchr(letters, *s);
        char d = *s;
        if (!isalpha((unsigned char)d))
            return fail(err, len, "%s: unexpected '%c' in shape '%s'", op, d, tok);
        if (!at || !strchr(allowed, d))
            return fail(err, len, "%s: '%c' is not a dimension of %s (%s)", op, d, op, allowed);
        i = (size_t)(at - letters);
        if (seen[i])
            return fail(err, len, "%s: dimension '%c' given twice in '%s'", op, d, tok);
        seen[i] = 1;
        s++;
        if (!isdigit((unsigned char)*s))
            return fail(err, len, "%s: expected a number after '%c' in '%s'", op, d, tok);
        if (number(&s, 1, slot[i]) != 0)
            return fail(err, len, "%s: dimension '%c' must be from 1 to 2^40 in '%s'", op, d, tok);
    }
    for (i = 0; need[i]; i++)
        if (!seen[strchr(letters, need[i]) - letters])
            return fail(err, len, "%s: dimension '%c' missing in '%s' (e.g. %s)", op, need[i], tok,
                        op_example[p->op]);
    if (!seen[3])
        p->w = p->h;
    if (!seen[6])
        p->s = p->r;
    p->four_d = seen[2];
    if (p->op == NB_OP_SOFTMAX && seen[3] && !seen[2])
        return fail(err, len, "%s: dimension 'h' missing in '%s' (e.g. %s)", op, tok,
                    op_example[p->op]);
    return 0;
}

static int parse_post(char *list, nb_problem *p, const char *op, char *err, size_t len)
{
    char *save = list, *item;
    while ((item = save) != NULL && *item) {
        char *comma = strchr(item, ',');
        char *colon;
        nb_post *q;
        size_t i;
        save = comma ? comma + 1 : NULL;
        if (comma)
            *comma = '\0';
        if (!*item)
            return fail(err, len, "%s: empty post-op in post=", op);
        if (p->npost == NB_MAX_POST)
            return fail(err, len, "%s: more than %d post-ops", op, NB_MAX_POST);
        q = &p->post[p->npost];
        memset(q, 0, sizeof *q);
        colon = strchr(item, ':');
        if (strncmp(item, "clamp", 5) == 0 && (item[5] == '\0' || item[5] == ':')) {
            char *second = colon ? strchr(colon + 1, ':') : NULL;
            if (!colon || !second)
                return fail(err, len, "%s: clamp needs clamp:lo:hi", op);
            *second = '\0';
            if (parse_float(colon + 1, &q->a) != 0 || parse_float(second + 1, &q->b) != 0)
                return fail(err, len, "%s: bad number in clamp:%s:%s", op, colon + 1, second + 1);
            q->kind = NB_POST_CLAMP;
            p->npost++;
            continue;
        }
        if (colon)
            *colon = '\0';
        if (strcmp(item, "bias") == 0 || strcmp(item, "bn") == 0 || strcmp(item, "add") == 0 ||
            strcmp(item, "mul") == 0) {
            if (colon)
                return fail(err, len, "%s: post-op '%s' takes no parameter", op, item);
            q->kind = item[0] == 'm'   ? NB_POST_MUL
                      : item[0] == 'b' ? (item[1] == 'i' ? NB_POST_BIAS : NB_POST_BN)
                                       : NB_POST_ADD;
            p->npost++;
            continue;
        }
        for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
            if (strcmp(item, acts[i].name) == 0)
                break;
        if (i == sizeof acts / sizeof acts[0])
            return fail(
                    err, len,
                    "%s: unknown post-op '%s' (bias, bn, add, mul, clamp:lo:hi, identity, relu, "
                    "relu6, leaky_relu[:a], gelu, gelu_tanh, sigmoid, tanh, silu, elu[:a], "
                    "hardswish, hardsigmoid, mish)",
                    op, item);
        q->kind = NB_POST_ACT;
        q->act = acts[i].act;
        q->a = acts[i].alpha;
        if (colon) {
            if (q->act != NNOP_ACT_LEAKY_RELU && q->act != NNOP_ACT_ELU)
                return fail(err, len, "%s: post-op '%s' takes no parameter", op, item);
            if (parse_float(colon + 1, &q->a) != 0)
                return fail(err, len, "%s: bad number in %s:%s", op, item, colon + 1);
        }
        p->npost++;
    }
    return 0;
}

int nb_parse(const char *text, nb_problem *p, char *err, size_t len)
{
    char buf[1024], *tok, *save;
    const char *op;
    int i, have_shape = 0;
    size_t n;
    memset(p, 0, sizeof *p);
    p->stride[0] = p->stride[1] = p->dil[0] = p->dil[1] = p->groups = 1;
    p->dt = NNOP_F32;
    p->layout = NNOP_NCHW;
    p->pool = NNOP_POOL_MAX;
    p->eps = 1e-5f;
    p->scale[0] = p->scale[1] = 1.0;
    if (!text)
        return fail(err, len, "empty descriptor");
    n = strlen(text);
    if (n >= sizeof buf)
        return fail(err, len, "descriptor longer than %d characters", (int)sizeof buf - 1);
    memcpy(buf, text, n + 1);
    for (i = 0; buf[i]; i++)
        if (buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n')
            buf[i] = ' ';
    save = buf;
    while (*save == ' ')
        save++;
    if (!*save)
        return fail(err, len, "empty descriptor");
    tok = save;
    save = strchr(tok, ' ');
    if (save)
        *save++ = '\0';
    for (i = 0; i < NB_OP_COUNT; i++)
        if (strcmp(tok, op_names[i]) == 0)
            break;
    if (i == NB_OP_COUNT)
        return fail(err, len,
                    "unknown op '%s' (conv, pool, gap, linear, softmax, flatten, eltwise, deconv, "
                    "norm or resize)",
                    tok);
    p->op = (nb_op)i;
    op = op_names[i];
    while (save && *save) {
        char *eq;
        while (*save == ' ')
            save++;
        if (!*save)
            break;
        tok = save;
        save = strchr(tok, ' ');
        if (save)
            *save++ = '\0';
        eq = strchr(tok, '=');
        if (!have_shape && !eq && tok[0] == 'n' && isdigit((unsigned char)tok[1])) {
            if (parse_shape(tok, p, op, err, len) != 0)
                return -1;
            have_shape = 1;
            continue;
        }
        if (eq) {
            *eq = '\0';
            if (strcmp(tok, "dt") == 0) {
                if (nb_parse_dtype(eq + 1, &p->dt) != 0)
                    return fail(err, len, "%s: unknown dtype '%s' (f32, f16 or bf16)", op, eq + 1);
            } else if (strcmp(tok, "layout") == 0) {
                if (nb_parse_layout(eq + 1, &p->layout) != 0)
                    return fail(err, len, "%s: unknown layout '%s' (nchw or nhwc)", op, eq + 1);
            } else if (strcmp(tok, "post") == 0) {
                if (parse_post(eq + 1, p, op, err, len) != 0)
                    return -1;
            } else if (strcmp(tok, "kind") == 0 && p->op == NB_OP_NORM) {
                size_t k;
                for (k = 0; k < 4 && strcmp(eq + 1, norm_names[k]) != 0; k++)
                    ;
                if (k == 4)
                    return fail(err, len, "%s: unknown kind '%s' (layer, layer_chw, group or rms)",
                                op, eq + 1);
                p->norm = (nb_norm_kind)k;
            } else if (strcmp(tok, "eps") == 0 && p->op == NB_OP_NORM) {
                if (parse_float(eq + 1, &p->eps) != 0 || !(p->eps >= 0.0f))
                    return fail(err, len, "%s: bad eps '%s' (a number >= 0)", op, eq + 1);
            } else if (strcmp(tok, "size") == 0 && p->op == NB_OP_RESIZE) {
                if (pair(eq + 1, 1, p->size) != 0)
                    return fail(err, len, "%s: bad size '%s' (size=<n> or size=<h>x<w>)", op,
                                eq + 1);
            } else if (strcmp(tok, "scale") == 0 && p->op == NB_OP_RESIZE) {
                char *x = strchr(eq + 1, 'x');
                float a, b;
                if (x)
                    *x = '\0';
                if (parse_float(eq + 1, &a) != 0 || (x && parse_float(x + 1, &b) != 0) ||
                    !(a > 0.0f) || (x && !(b > 0.0f)))
                    return fail(err, len, "%s: bad scale (scale=<s> or scale=<h>x<w>, > 0)", op);
                p->scale[0] = a;
                p->scale[1] = x ? b : a;
            } else if (strcmp(tok, "name") == 0) {
                if (!eq[1] || strlen(eq + 1) >= NB_NAME_LEN)
                    return fail(err, len, "%s: name must have 1 to %d characters", op,
                                NB_NAME_LEN - 1);
                strcpy(p->name, eq + 1);
            } else {
                return fail(err, len, "%s: unknown option '%s='", op, tok);
            }
            continue;
        }
        if (p->op == NB_OP_RESIZE && strcmp(tok, "nearest") == 0) {
            p->resize = NNOP_RESIZE_NEAREST;
        } else if (p->op == NB_OP_RESIZE && strcmp(tok, "bilinear") == 0) {
            p->resize = NNOP_RESIZE_BILINEAR;
        } else if (p->op == NB_OP_RESIZE && strcmp(tok, "align") == 0) {
            p->align = 1;
        } else if (strncmp(tok, "op", 2) == 0 && isdigit((unsigned char)tok[2])) {
            if (p->op != NB_OP_DECONV)
                return fail(err, len, "%s: option '%s' does not apply to %s", op, tok, op);
            if (pair(tok + 2, 0, p->out_pad) != 0)
                return fail(err, len, "%s: bad output padding '%s' (op<n> or op<h>x<w>)", op, tok);
        } else if (p->op == NB_OP_POOL && strcmp(tok, "max") == 0) {
            p->pool = NNOP_POOL_MAX;
        } else if (p->op == NB_OP_POOL && strcmp(tok, "avg") == 0) {
            p->pool = NNOP_POOL_AVG;
        } else if (p->op == NB_OP_POOL && strcmp(tok, "incpad") == 0) {
            p->incpad = 1;
        } else if (tok[0] == 'p' && isdigit((unsigned char)tok[1])) {
            if (p->op != NB_OP_CONV && p->op != NB_OP_POOL && p->op != NB_OP_DECONV)
                return fail(err, len, "%s: option '%s' does not apply to %s", op, tok, op);
            if (pair(tok + 1, 0, p->pad) != 0)
                return fail(err, len, "%s: bad padding '%s' (p<n> or p<h>x<w>)", op, tok);
        } else if (strncmp(tok, "st", 2) == 0 && isdigit((unsigned char)tok[2])) {
            if (p->op != NB_OP_CONV && p->op != NB_OP_POOL && p->op != NB_OP_DECONV)
                return fail(err, len, "%s: option '%s' does not apply to %s", op, tok, op);
            if (pair(tok + 2, 1, p->stride) != 0)
                return fail(err, len, "%s: bad stride '%s' (st<n> or st<h>x<w>, >= 1)", op, tok);
        } else if (strncmp(tok, "dl", 2) == 0 && isdigit((unsigned char)tok[2])) {
            if (p->op != NB_OP_CONV && p->op != NB_OP_DECONV)
                return fail(err, len, "%s: option '%s' does not apply to %s", op, tok, op);
            if (pair(tok + 2, 1, p->dil) != 0)
                return fail(err, len, "%s: bad dilation '%s' (dl<n> or dl<h>x<w>, >= 1)", op, tok);
        } else if (tok[0] == 'g' && isdigit((unsigned char)tok[1])) {
            const char *s = tok + 1;
            if (p->op != NB_OP_CONV && p->op != NB_OP_DECONV && p->op != NB_OP_NORM)
                return fail(err, len, "%s: option '%s' does not apply to %s", op, tok, op);
            if (number(&s, 1, &p->groups) != 0 || *s)
                return fail(err, len, "%s: bad groups '%s' (g<n>, >= 1)", op, tok);
        } else {
            return fail(err, len, "%s: unknown option '%s'", op, tok);
        }
    }
    if (!have_shape)
        return fail(err, len, "%s: missing shape (e.g. %s)", op, op_example[p->op]);
    if ((p->op == NB_OP_CONV || p->op == NB_OP_DECONV) && (p->c % p->groups || p->k % p->groups))
        return fail(err, len, "%s: groups %lld must divide c %lld and k %lld", op,
                    (long long)p->groups, (long long)p->c, (long long)p->k);
    if (p->op == NB_OP_NORM && p->c % p->groups)
        return fail(err, len, "%s: groups %lld must divide c %lld", op, (long long)p->groups,
                    (long long)p->c);
    if (p->op == NB_OP_NORM && p->groups > 1 && p->norm != NB_NORM_GROUP)
        return fail(err, len, "%s: g%lld needs kind=group", op, (long long)p->groups);
    if (p->op == NB_OP_RESIZE && p->align && p->resize != NNOP_RESIZE_BILINEAR)
        return fail(err, len, "%s: align needs bilinear", op);
    return 0;
}

static size_t cat(char *buf, size_t len, size_t at, const char *fmt, ...) NB_PRINTF(4, 5);
static size_t cat(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    va_list ap;
    int w;
    if (at >= len)
        return at;
    va_start(ap, fmt);
    w = vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
    return w > 0 ? at + (size_t)w : at;
}

static size_t cat_pair(char *buf, size_t len, size_t at, const char *prefix, const int64_t v[2])
{
    if (v[0] == v[1])
        return cat(buf, len, at, " %s%lld", prefix, (long long)v[0]);
    return cat(buf, len, at, " %s%lldx%lld", prefix, (long long)v[0], (long long)v[1]);
}

void nb_format(const nb_problem *p, char *buf, size_t len)
{
    size_t at = 0;
    int i;
    if (!len)
        return;
    buf[0] = '\0';
    at = cat(buf, len, at, "%s n%lld", nb_op_name(p->op), (long long)p->n);
    at = cat(buf, len, at, "c%lld", (long long)p->c);
    if (p->op != NB_OP_LINEAR && (p->op != NB_OP_SOFTMAX || p->four_d))
        at = cat(buf, len, at, "h%lldw%lld", (long long)p->h, (long long)p->w);
    if (p->op == NB_OP_CONV || p->op == NB_OP_LINEAR || p->op == NB_OP_DECONV)
        at = cat(buf, len, at, "k%lld", (long long)p->k);
    if (p->op == NB_OP_CONV || p->op == NB_OP_POOL || p->op == NB_OP_DECONV)
        at = cat(buf, len, at, "r%llds%lld", (long long)p->r, (long long)p->s);
    if (p->op == NB_OP_NORM) {
        at = cat(buf, len, at, " kind=%s", norm_names[p->norm]);
        if (p->norm == NB_NORM_GROUP)
            at = cat(buf, len, at, " g%lld", (long long)p->groups);
        at = cat(buf, len, at, " eps=%g", (double)p->eps);
    }
    if (p->op == NB_OP_RESIZE) {
        at = cat(buf, len, at, " %s%s", p->resize == NNOP_RESIZE_BILINEAR ? "bilinear" : "nearest",
                 p->align ? " align" : "");
        if (p->size[0])
            at = cat_pair(buf, len, at, "size=", p->size);
        else if (p->scale[0] == p->scale[1])
            at = cat(buf, len, at, " scale=%g", p->scale[0]);
        else
            at = cat(buf, len, at, " scale=%gx%g", p->scale[0], p->scale[1]);
    }
    if (p->op == NB_OP_POOL)
        at = cat(buf, len, at, " %s%s", p->pool == NNOP_POOL_AVG ? "avg" : "max",
                 p->incpad ? " incpad" : "");
    if (p->op == NB_OP_CONV || p->op == NB_OP_POOL || p->op == NB_OP_DECONV) {
        at = cat_pair(buf, len, at, "p", p->pad);
        at = cat_pair(buf, len, at, "st", p->stride);
    }
    if (p->op == NB_OP_CONV || p->op == NB_OP_DECONV) {
        at = cat_pair(buf, len, at, "dl", p->dil);
        at = cat(buf, len, at, " g%lld", (long long)p->groups);
    }
    if (p->op == NB_OP_DECONV)
        at = cat_pair(buf, len, at, "op", p->out_pad);
    at = cat(buf, len, at, " dt=%s", nb_dtype_name(p->dt));
    if (p->op != NB_OP_LINEAR && (p->op != NB_OP_SOFTMAX || p->four_d))
        at = cat(buf, len, at, " layout=%s", nb_layout_name(p->layout));
    for (i = 0; i < p->npost; i++) {
        const nb_post *q = &p->post[i];
        at = cat(buf, len, at, i ? "," : " post=");
        if (q->kind == NB_POST_BIAS)
            at = cat(buf, len, at, "bias");
        else if (q->kind == NB_POST_BN)
            at = cat(buf, len, at, "bn");
        else if (q->kind == NB_POST_ADD)
            at = cat(buf, len, at, "add");
        else if (q->kind == NB_POST_MUL)
            at = cat(buf, len, at, "mul");
        else if (q->kind == NB_POST_CLAMP)
            at = cat(buf, len, at, "clamp:%g:%g", (double)q->a, (double)q->b);
        else {
            size_t j;
            for (j = 0; j < sizeof acts / sizeof acts[0]; j++)
                if (acts[j].act == q->act)
                    break;
            at = cat(buf, len, at, "%s", j < sizeof acts / sizeof acts[0] ? acts[j].name : "?");
            if (q->act == NNOP_ACT_LEAKY_RELU || q->act == NNOP_ACT_ELU)
                at = cat(buf, len, at, ":%g", (double)q->a);
        }
    }
    if (p->name[0])
        at = cat(buf, len, at, " name=%s", p->name);
}

int nb_parse_file(const char *path, nb_problem **out, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[1100], msg[512];
    nb_problem *v = NULL;
    int n = 0, cap = 0, lineno = 0;
    *out = NULL;
    if (!f)
        return fail(err, len, "%s: cannot open: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#'), *s = line;
        size_t l;
        lineno++;
        if (hash)
            *hash = '\0';
        l = strlen(line);
        if (l == sizeof line - 1 && line[l - 1] != '\n' && !feof(f)) {
            fclose(f);
            free(v);
            return fail(err, len, "%s:%d: line too long", path, lineno);
        }
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (!*s)
            continue;
        if (n == cap) {
            nb_problem *nv;
            cap = cap ? 2 * cap : 16;
            nv = (nb_problem *)realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                fclose(f);
                free(v);
                return fail(err, len, "%s: out of memory", path);
            }
            v = nv;
        }
        if (nb_parse(s, &v[n], msg, sizeof msg) != 0) {
            fclose(f);
            free(v);
            return fail(err, len, "%s:%d: %s", path, lineno, msg);
        }
        n++;
    }
    fclose(f);
    if (n == 0) {
        free(v);
        return fail(err, len, "%s: no problems in the file", path);
    }
    *out = v;
    return n;
}

static int64_t out_hw(int64_t in, int64_t pad, int64_t k, int64_t dil, int64_t stride)
{
    int64_t span = dil * (k - 1) + 1;
    return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

int64_t nb_deconv_out(const nb_problem *p, int i)
{
    int64_t in = i ? p->w : p->h, r = i ? p->s : p->r;
    return (in - 1) * p->stride[i] - 2 * p->pad[i] + p->dil[i] * (r - 1) + p->out_pad[i] + 1;
}

int64_t nb_resize_out(const nb_problem *p, int i)
{
    int64_t in = i ? p->w : p->h;
    return p->size[0] ? p->size[i] : (int64_t)floor((double)in * p->scale[i]);
}

/* Output elements of the main op (before post-ops). */
static double out_elems(const nb_problem *p)
{
    switch (p->op) {
    case NB_OP_CONV:
        return (double)p->n * (double)p->k *
               (double)out_hw(p->h, p->pad[0], p->r, p->dil[0], p->stride[0]) *
               (double)out_hw(p->w, p->pad[1], p->s, p->dil[1], p->stride[1]);
    case NB_OP_POOL:
        return (double)p->n * (double)p->c *
               (double)out_hw(p->h, p->pad[0], p->r, 1, p->stride[0]) *
               (double)out_hw(p->w, p->pad[1], p->s, 1, p->stride[1]);
    case NB_OP_GAP:
        return (double)p->n * (double)p->c;
    case NB_OP_LINEAR:
        return (double)p->n * (double)p->k;
    case NB_OP_SOFTMAX:
        return (double)p->n * (double)p->c * (p->four_d ? (double)p->h * (double)p->w : 1.0);
    case NB_OP_DECONV:
        return (double)p->n * (double)p->k * (double)nb_deconv_out(p, 0) *
               (double)nb_deconv_out(p, 1);
    case NB_OP_RESIZE:
        return (double)p->n * (double)p->c * (double)nb_resize_out(p, 0) *
               (double)nb_resize_out(p, 1);
    default:
        return (double)p->n * (double)p->c * (double)p->h * (double)p->w;
    }
}

static double in_elems(const nb_problem *p)
{
    if (p->op == NB_OP_LINEAR || (p->op == NB_OP_SOFTMAX && !p->four_d))
        return (double)p->n * (double)p->c;
    return (double)p->n * (double)p->c * (double)p->h * (double)p->w;
}

double nb_problem_flops(const nb_problem *p)
{
    double y = out_elems(p), f = 0.0;
    switch (p->op) {
    case NB_OP_CONV:
        f = 2.0 * y * (double)(p->c / p->groups) * (double)p->r * (double)p->s;
        break;
    case NB_OP_POOL:
        f = y * (double)p->r * (double)p->s;
        break;
    case NB_OP_GAP:
        f = in_elems(p);
        break;
    case NB_OP_LINEAR:
        f = 2.0 * y * (double)p->c;
        break;
    case NB_OP_SOFTMAX:
        f = 5.0 * y;
        break;
    case NB_OP_DECONV:
        f = 2.0 * in_elems(p) * (double)(p->k / p->groups) * (double)p->r * (double)p->s;
        break;
    case NB_OP_NORM:
        f = 8.0 * y;
        break;
    case NB_OP_RESIZE:
        f = p->resize == NNOP_RESIZE_BILINEAR ? 8.0 * y : 0.0;
        break;
    default:
        break;
    }
    return f + y * (double)p->npost;
}

double nb_problem_bytes(const nb_problem *p)
{
    double e = in_elems(p) + out_elems(p), ch;
    int i;
    if (p->op == NB_OP_CONV)
        e += (double)p->k * (double)(p->c / p->groups) * (double)p->r * (double)p->s;
    if (p->op == NB_OP_LINEAR)
        e += (double)p->k * (double)p->c;
    if (p->op == NB_OP_DECONV)
        e += (double)p->c * (double)(p->k / p->groups) * (double)p->r * (double)p->s;
    if (p->op == NB_OP_NORM)
        e += 2.0 * (double)p->c;
    ch = (p->op == NB_OP_CONV || p->op == NB_OP_LINEAR || p->op == NB_OP_DECONV) ? (double)p->k
                                                                                 : (double)p->c;
    for (i = 0; i < p->npost; i++) {
        if (p->post[i].kind == NB_POST_BIAS)
            e += ch;
        else if (p->post[i].kind == NB_POST_BN)
            e += 4.0 * ch;
        else if (p->post[i].kind == NB_POST_ADD)
            e += out_elems(p);
        else if (p->post[i].kind == NB_POST_MUL)
            e += (double)p->n * ch;
    }
    return e * (double)nnop_dtype_size(p->dt);
}
