/* table.c: the calibration table, its entries and its file. The file is text, so a person
 * can read and edit it:
 *     nnop-calibration 1 entropy bins 2048 percentile 99.99 batches 4 entries 3
 *     2.71828175 input#0
 *     ...
 * one "amax name" line an entry (the name is the rest of the line). Nine significant digits
 * read back to the same float. */
#include <float.h>
#include <locale.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/platform.h"
#include "calib.h"

#define HEADER         "nnop-calibration"
#define FORMAT_VERSION 1
/* A line: an amax, a space, a name, the line's end. */
#define LINE_MAX_LEN (32 + NNOP__CALIB_NAME_LEN)

/* Numbers in the file are written and read as in the C locale, whatever LC_NUMERIC the
 * program set: the locale's decimal point (a string: ps_AF's is two bytes) is swapped for '.'
 * on the way out and back. */
static const char *locale_point(void)
{
    const struct lconv *lc = localeconv();
    return lc && lc->decimal_point && lc->decimal_point[0] ? lc->decimal_point : ".";
}

/* v with `digits` significant digits. */
static void format_number(char *buf, size_t len, int digits, double v)
{
    const char *point = locale_point();
    char *at;
    snprintf(buf, len, "%.*g", digits, v);
    if (strcmp(point, ".") != 0 && (at = strstr(buf, point)) != NULL) {
        *at = '.';
        memmove(at + 1, at + strlen(point), strlen(at + strlen(point)) + 1);
    }
}

/* A number starting with a digit at s, as format_number writes it; *end past it (s when
 * there is none). Only C-locale characters are taken: the locale's own point (a comma) ends
 * the number, as it would in the C locale. */
static double parse_number(const char *s, const char **end)
{
    const char *point = locale_point();
    size_t plen = strlen(point), n = 0, k = 0, dot = (size_t)-1, taken;
    char buf[64], *stop;
    double v;
    *end = s;
    if (*s < '0' || *s > '9')
        return -1.0;
    for (; s[n] && strchr("0123456789.eE+-", s[n]) && k + plen < sizeof buf; n++)
        if (s[n] == '.' && dot == (size_t)-1) { /* the first '.': the locale's point */
            dot = k;
            memcpy(buf + k, point, plen);
            k += plen;
        } else {
            buf[k++] = s[n];
        }
    buf[k] = '\0';
    v = strtod(buf, &stop);
    taken = (size_t)(stop - buf);
    *end = s + (taken > dot ? taken - (plen - 1) : taken); /* the point is one byte in s */
    return v;
}

nnop_calib_table *nnop__calib_table_new(int32_t n)
{
    nnop_calib_table *t = (nnop_calib_table *)nnop__calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->entry = (nnop__calib_entry *)nnop__calloc((size_t)(n > 0 ? n : 1), sizeof *t->entry);
    if (!t->entry) {
        nnop__free(t);
        return NULL;
    }
    t->n = n;
    nnop_calib_options_init(&t->opts);
    return t;
}

/* 1 when an entry before r is named name. */
static int name_taken(const nnop_calib_table *t, int32_t r, const char *name)
{
    int32_t k;
    for (k = 0; k < r; k++)
        if (strcmp(t->entry[k].name, name) == 0)
            return 1;
    return 0;
}

/* Name entry r after value v: its own name ("input#i" for an unnamed input); when an earlier
 * entry has it, "@v" appended, then "@v.2", "@v.3", ... until none has it (a graph may name a
 * node "x@2" itself): of these r + 2 names one is free. */
static void name_entry(nnop_calib_table *t, int32_t r, const nnop__value *v, int32_t v_id,
                       int32_t input_index)
{
    char base[NNOP_NAME_LEN], *name = t->entry[r].name;
    int32_t k;
    if (v->name[0])
        snprintf(base, sizeof base, "%s", v->name);
    else
        snprintf(base, sizeof base, "input#%d", (int)input_index);
    snprintf(name, NNOP__CALIB_NAME_LEN, "%s", base);
    for (k = 1; k <= r + 1 && name_taken(t, r, name); k++)
        if (k == 1)
            snprintf(name, NNOP__CALIB_NAME_LEN, "%s@%d", base, (int)v_id);
        else
            snprintf(name, NNOP__CALIB_NAME_LEN, "%s@%d.%d", base, (int)v_id, (int)k);
}

nnop_calib_table *nnop__calib_table_for_graph(const nnop_graph *g, int32_t *row)
{
    nnop_calib_table *t = nnop__calib_table_new(g->n_inputs + g->n_nodes);
    int32_t i, r = 0;
    if (!t)
        return NULL;
    for (i = 0; i < g->n_values; i++)
        row[i] = -1;
    for (i = 0; i < g->n_inputs; i++, r++) {
        row[g->inputs[i]] = r;
        name_entry(t, r, &g->values[g->inputs[i]], g->inputs[i], i);
    }
    for (i = 0; i < g->n_nodes; i++, r++) {
        int32_t v = g->nodes[i].out;
        row[v] = r;
        name_entry(t, r, &g->values[v], v, -1);
    }
    return t;
}

void nnop_calib_table_destroy(nnop_calib_table *t)
{
    if (!t)
        return;
    nnop__free(t->entry);
    nnop__free(t);
}

int32_t nnop_calib_table_count(const nnop_calib_table *t)
{
    return t ? t->n : 0;
}

nnop_status nnop_calib_table_entry(const nnop_calib_table *t, int32_t i, const char **name,
                                   float *amax)
{
    if (!t || i < 0 || i >= t->n)
        return NNOP_ERR_INVALID_ARGUMENT;
    if (name)
        *name = t->entry[i].name;
    if (amax)
        *amax = t->entry[i].amax;
    return NNOP_OK;
}

nnop_status nnop_calib_table_find(const nnop_calib_table *t, const char *name, float *amax)
{
    int32_t i;
    if (!t || !name || !amax)
        return NNOP_ERR_INVALID_ARGUMENT;
    for (i = 0; i < t->n; i++)
        if (strcmp(t->entry[i].name, name) == 0) {
            *amax = t->entry[i].amax;
            return NNOP_OK;
        }
    return NNOP_ERR_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------- saving */
static int write_table(FILE *f, const nnop_calib_table *t)
{
    int32_t i;
    char num[64];
    format_number(num, sizeof num, 17, t->opts.percentile);
    if (fprintf(f, "%s %d %s bins %d percentile %s batches %d entries %d\n", HEADER, FORMAT_VERSION,
                nnop__calib_method_name(t->opts.method), (int)t->opts.bins, num, (int)t->batches,
                (int)t->n) < 0)
        return 0;
    for (i = 0; i < t->n; i++) {
        format_number(num, sizeof num, 9, (double)t->entry[i].amax);
        if (fprintf(f, "%s %s\n", num, t->entry[i].name) < 0)
            return 0;
    }
    return 1;
}

nnop_status nnop_calib_table_save(nnop_context *ctx, const nnop_calib_table *t, const char *path)
{
    size_t len;
    char *tmp;
    FILE *f;
    nnop__open_result why;
    int ok;
    int32_t i;
    if (!t || !path || !path[0])
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                          "nnop_calib_table_save: %s is NULL or empty", t ? "path" : "the table");
    for (i = 0; i < t->n; i++)
        if (strpbrk(t->entry[i].name, "\r\n"))
            return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT,
                              "nnop_calib_table_save: entry %d's name has a line break (a "
                              "line of the file is one entry)",
                              (int)i);
    len = strlen(path) + 48;
    tmp = (char *)nnop__calloc(len, 1);
    if (!tmp)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_calib_table_save: out of memory");
    snprintf(tmp, len, "%s.tmp.%llu.%llx", path, (unsigned long long)nnop__process_id(),
             (unsigned long long)(uintptr_t)t);
    f = nnop__fopen_create(tmp, &why);
    if (!f) {
        nnop__free(tmp);
        return nnop__fail(ctx, why == NNOP__OPEN_NO_MEMORY ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_IO,
                          "nnop_calib_table_save: cannot create a file beside %s", path);
    }
    ok = write_table(f, t);
    ok = (fclose(f) == 0) && ok;
    ok = ok && nnop__rename_replace(tmp, path) == 0;
    if (!ok)
        nnop__remove(tmp);
    nnop__free(tmp);
    return ok ? NNOP_OK
              : nnop__fail(ctx, NNOP_ERR_IO,
                           "nnop_calib_table_save: cannot write %s (disk full or no permission?)",
                           path);
}

/* ---------------------------------------------------------------- loading */
/* The text being parsed: lines are taken from at, up to end. */
typedef struct cursor {
    const char *at, *end;
} cursor;

/* The next line into buf without its end ("\n" or "\r\n"): 1 read, 0 at the end of the
 * text, -1 a line longer than the buffer or holding a NUL. */
static int read_line(cursor *c, char *buf, size_t len)
{
    const char *nl;
    size_t n;
    if (c->at >= c->end)
        return 0;
    nl = (const char *)memchr(c->at, '\n', (size_t)(c->end - c->at));
    n = (size_t)((nl ? nl : c->end) - c->at);
    if (n >= len || memchr(c->at, '\0', n))
        return -1;
    memcpy(buf, c->at, n);
    buf[n] = '\0';
    c->at += n + (nl != NULL);
    if (n > 0 && buf[n - 1] == '\r')
        buf[n - 1] = '\0';
    return 1;
}

/* "<word> " at *s, then a decimal integer in [lo, hi] ending at a space or the end: *s past
 * it. 0 when the text is not that. */
static int take_int(const char **s, const char *word, long lo, long hi, long *out)
{
    size_t w = strlen(word);
    char *end;
    long v;
    if (w && (strncmp(*s, word, w) != 0 || (*s)[w] != ' '))
        return 0;
    *s += w ? w + 1 : 0;
    if (**s < '0' || **s > '9') /* no sign, no blank: strtol would take both */
        return 0;
    v = strtol(*s, &end, 10);
    if ((*end != ' ' && *end != '\0') || v < lo || v > hi)
        return 0;
    *out = v;
    *s = *end ? end + 1 : end;
    return 1;
}

/* The header's fields, each refused with what is wrong; n is bounded by the bytes left
 * (each entry takes at least four, "0 a\n", the last three), so a small text never asks for a
 * big table. */
static nnop_status parse_header(nnop_context *ctx, const char *path, const char *line,
                                size_t bytes_left, nnop_calib_options *o, int32_t *batches,
                                int32_t *n)
{
    char method[24], why[160];
    const char *s = line, *sp;
    long version = 0, bins = 0, nb = 0, count = 0;
    double pct = 0.0;
    const char *end = NULL;
    int m = -1, ok;
    ok = strncmp(s, HEADER " ", sizeof HEADER) == 0;
    s += ok ? sizeof HEADER : 0;
    ok = ok && take_int(&s, "", 0, 1000000, &version);
    if (ok && version != FORMAT_VERSION)
        return nnop__fail(ctx, NNOP_ERR_FORMAT,
                          "nnop_calib_table_load: %s is version %ld of the format; this nnop "
                          "reads version %d",
                          path, version, FORMAT_VERSION);
    sp = ok ? strchr(s, ' ') : NULL;
    ok = sp && (size_t)(sp - s) < sizeof method;
    if (ok) {
        memcpy(method, s, (size_t)(sp - s));
        method[sp - s] = '\0';
        m = nnop__calib_method_parse(method);
        s = sp + 1;
    }
    ok = ok && take_int(&s, "bins", 0, 1L << 30, &bins) && strncmp(s, "percentile ", 11) == 0;
    if (ok) {
        s += 11;
        pct = parse_number(s, &end);
        ok = end != s && *end == ' ';
        s = ok ? end + 1 : s;
    }
    ok = ok && take_int(&s, "batches", 1, INT32_MAX, &nb) &&
         take_int(&s, "entries", 0, INT32_MAX, &count) && *s == '\0';
    if (!ok)
        return nnop__fail(ctx, NNOP_ERR_FORMAT,
                          "nnop_calib_table_load: %s line 1 is not an nnop calibration header "
                          "(\"" HEADER " 1 <method> bins <n> percentile <p> batches <n> entries "
                          "<n>\")",
                          path);
    nnop_calib_options_init(o);
    o->method = (nnop_calib_method)(m < 0 ? 99 : m);
    o->bins = (int32_t)bins;
    o->percentile = pct;
    nnop__calib_options_check(o, why, sizeof why);
    if (m < 0 || why[0] || (size_t)count > (bytes_left + 1) / 4)
        return nnop__fail(ctx, NNOP_ERR_FORMAT, "nnop_calib_table_load: %s line 1: %s", path,
                          m < 0    ? "the method is not max, percentile or entropy"
                          : why[0] ? why
                                   : "more entries than the file has lines");
    *batches = (int32_t)nb;
    *n = (int32_t)count;
    return NNOP_OK;
}

/* Line `line_no` ("amax name") into entry r; an error names the line. */
static nnop_status parse_entry(nnop_context *ctx, const char *path, int line_no, char *line,
                               nnop_calib_table *t, int32_t r)
{
    const char *end = NULL, *name;
    double amax = parse_number(line, &end);
    int32_t k;
    if (end == line || *end != ' ' || !isfinite(amax) || amax < 0.0 || amax > FLT_MAX)
        return nnop__fail(ctx, NNOP_ERR_FORMAT,
                          "nnop_calib_table_load: %s line %d: the amax is not a finite number "
                          ">= 0 followed by one space",
                          path, line_no);
    name = end + 1;
    if (!name[0] || strlen(name) >= NNOP__CALIB_NAME_LEN)
        return nnop__fail(ctx, NNOP_ERR_FORMAT,
                          "nnop_calib_table_load: %s line %d: the name is empty or longer than %d "
                          "bytes",
                          path, line_no, NNOP__CALIB_NAME_LEN - 1);
    for (k = 0; k < r; k++)
        if (strcmp(t->entry[k].name, name) == 0)
            return nnop__fail(ctx, NNOP_ERR_FORMAT,
                              "nnop_calib_table_load: %s line %d: '%s' has an entry already", path,
                              line_no, name);
    memcpy(t->entry[r].name, name, strlen(name) + 1);
    t->entry[r].amax = (float)amax;
    return NNOP_OK;
}

nnop_status nnop__calib_table_parse(nnop_context *ctx, const char *path, const char *text,
                                    size_t len, nnop_calib_table **out)
{
    char line[LINE_MAX_LEN];
    cursor c;
    nnop_calib_options o;
    nnop_calib_table *t;
    nnop_status st;
    int32_t batches = 0, n = 0, r;
    int got;
    c.at = text;
    c.end = text + len;
    *out = NULL;
    got = read_line(&c, line, sizeof line);
    if (got <= 0)
        return nnop__fail(ctx, NNOP_ERR_FORMAT, "nnop_calib_table_load: %s: %s", path,
                          got == 0 ? "the file is empty" : "line 1 is too long for a header");
    st = parse_header(ctx, path, line, (size_t)(c.end - c.at), &o, &batches, &n);
    if (st != NNOP_OK)
        return st;
    t = nnop__calib_table_new(n);
    if (!t)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_calib_table_load: out of memory");
    t->opts = o;
    t->batches = batches;
    for (r = 0; st == NNOP_OK && r < n; r++) {
        got = read_line(&c, line, sizeof line);
        st = got > 0 ? parse_entry(ctx, path, (int)r + 2, line, t, r)
                     : nnop__fail(ctx, NNOP_ERR_FORMAT, "nnop_calib_table_load: %s line %d: %s",
                                  path, (int)r + 2,
                                  got == 0 ? "the file ends before its entries do"
                                           : "the line is too long or holds a NUL");
    }
    if (st == NNOP_OK && read_line(&c, line, sizeof line) != 0)
        st = nnop__fail(ctx, NNOP_ERR_FORMAT,
                        "nnop_calib_table_load: %s line %d: more lines than the header's %d "
                        "entries",
                        path, (int)n + 2, (int)n);
    if (st != NNOP_OK) {
        nnop_calib_table_destroy(t);
        return st;
    }
    *out = t;
    return NNOP_OK;
}

/* The whole file, at most MAX_FILE bytes, into *text (free it). */
#define MAX_FILE ((size_t)64 << 20)
static nnop_status read_file(nnop_context *ctx, const char *path, char **text, size_t *len)
{
    nnop__open_result why;
    unsigned char *buf;
    int longer;
    if (nnop__read_file(path, MAX_FILE, &buf, len, &longer, &why) != 0)
        return nnop__fail(ctx, why == NNOP__OPEN_NO_MEMORY ? NNOP_ERR_OUT_OF_MEMORY : NNOP_ERR_IO,
                          "nnop_calib_table_load: cannot read %s (%s)", path,
                          nnop__open_problem(why));
    if (longer) {
        free(buf);
        return nnop__fail(ctx, NNOP_ERR_FORMAT,
                          "nnop_calib_table_load: %s: larger than 64 MiB: not a calibration table",
                          path);
    }
    *text = (char *)buf;
    return NNOP_OK;
}

nnop_status nnop_calib_table_load(nnop_context *ctx, const char *path, nnop_calib_table **out)
{
    nnop_status st;
    char *text = NULL;
    size_t len = 0;
    if (out)
        *out = NULL;
    if (!path || !out)
        return nnop__fail(ctx, NNOP_ERR_INVALID_ARGUMENT, "nnop_calib_table_load: %s is NULL",
                          path ? "out" : "path");
    st = read_file(ctx, path, &text, &len);
    if (st == NNOP_OK)
        st = nnop__calib_table_parse(ctx, path, text, len, out);
    free(text);
    if (st == NNOP_OK)
        nnop__clear_error(ctx);
    return st;
}
