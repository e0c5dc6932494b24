/* nb_output.c: nnop-bench results as a terminal table, JSON and CSV. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nb.h"

void nb_result_init(nb_result *r)
{
    memset(r, 0, sizeof *r);
    r->compile_ms = r->gpu_us = r->host_us = -1.0;
    r->tflops = r->gbs = r->frac_flops = r->frac_bw = r->roofline = -1.0;
    r->images_s = r->efficiency = -1.0;
    r->lat_p99_us = r->mem_mib = -1.0;
    r->check = -1;
    r->check_err = r->check_tol = -1.0;
    r->device_id = -1;
    strcpy(r->status, "ok");
}

void nb_result_derive(nb_result *r, const nb_report *rep)
{
    double us = r->gpu_us > 0 ? r->gpu_us : r->host_us;
    if (us <= 0)
        return;
    if (r->flops > 0)
        r->tflops = r->flops / (us * 1e-6) / 1e12;
    if (r->bytes > 0)
        r->gbs = r->bytes / (us * 1e-6) / 1e9;
    if (r->batch > 0)
        r->images_s = (double)r->batch / (us * 1e-6);
    if (r->tflops > 0 && rep->peak_tflops > 0)
        r->frac_flops = r->tflops / rep->peak_tflops;
    if (r->gbs > 0 && rep->peak_gbs > 0)
        r->frac_bw = r->gbs / rep->peak_gbs;
    if (r->frac_flops >= 0 || r->frac_bw >= 0) /* time the roofline allows over the time taken */
        r->roofline = r->frac_flops > r->frac_bw ? r->frac_flops : r->frac_bw;
}

void nb_report_init(nb_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->peak_gbs = rep->peak_tflops = -1.0;
}

nb_result *nb_report_add(nb_report *rep)
{
    if (rep->n == rep->cap) {
        int cap = rep->cap ? 2 * rep->cap : 16;
        nb_result *v = (nb_result *)realloc(rep->r, (size_t)cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "nnop-bench: out of memory\n");
            exit(2);
        }
        rep->r = v;
        rep->cap = cap;
    }
    nb_result_init(&rep->r[rep->n]);
    return &rep->r[rep->n++];
}

void nb_report_free(nb_report *rep)
{
    int i;
    for (i = 0; i < rep->n; i++)
        free(rep->r[i].plan);
    free(rep->r);
    rep->r = NULL;
    rep->n = rep->cap = 0;
}

static const char *check_word(int c)
{
    return c == 1 ? "pass" : c == 0 ? "FAIL" : c == 2 ? "error" : "-";
}

static void num(char *buf, size_t len, double v, int prec)
{
    if (v < 0 || v != v)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", prec, v);
}

void nb_write_table(const nb_report *rep, FILE *f)
{
    int i;
    fprintf(f, "%-24s %-5s %-6s %-20s %10s %10s %10s %9s %8s %6s %10s %6s  %s\n", "name", "bknd",
            "check", "err/tol", "compile_ms", "gpu_us", "host_us", "GFLOP/s", "GB/s", "roof%",
            "img/s", "eff%", "notes");
    for (i = 0; i < rep->n; i++) {
        const nb_result *r = &rep->r[i];
        char et[32], c[16], g[16], h[16], t[16], b[16], rf[16], im[16], ef[16];
        if (r->check == 0 || r->check == 1)
            snprintf(et, sizeof et, "%.2e/%.0e", r->check_err, r->check_tol);
        else
            snprintf(et, sizeof et, "-");
        num(c, sizeof c, r->compile_ms, 1);
        num(g, sizeof g, r->gpu_us, 2);
        num(h, sizeof h, r->host_us, 2);
        num(t, sizeof t, r->tflops < 0 ? -1.0 : 1e3 * r->tflops, 1);
        num(b, sizeof b, r->gbs, 1);
        num(rf, sizeof rf, r->roofline < 0 ? -1.0 : 100.0 * r->roofline, 1);
        num(im, sizeof im, r->images_s, 1);
        num(ef, sizeof ef, r->efficiency < 0 ? -1.0 : 100.0 * r->efficiency, 1);
        fprintf(f, "%-24.24s %-5s %-6s %-20s %10s %10s %10s %9s %8s %6s %10s %6s  %s%s%s\n",
                r->name, r->backend, check_word(r->check), et, c, g, h, t, b, rf, im, ef,
                strcmp(r->status, "ok") ? r->status : "", strcmp(r->status, "ok") ? " " : "",
                r->note);
    }
    if (rep->peak_gbs > 0 || rep->peak_tflops > 0)
        fprintf(f, "peaks of this run: copy %.1f GB/s, %s matmul %.3f TFLOP/s\n", rep->peak_gbs,
                rep->peak_dtype, rep->peak_tflops);
}

void nb_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '\t')
            fputs("\\t", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* a number, or null when not measured (JSON has no NaN or infinity) */
static void json_num(FILE *f, const char *key, double v, int last)
{
    fprintf(f, "      \"%s\": ", key);
    if (v < 0 || v != v || v == HUGE_VAL)
        fputs("null", f);
    else
        fprintf(f, "%.6g", v);
    fputs(last ? "\n" : ",\n", f);
}

static void json_str(FILE *f, const char *key, const char *v)
{
    fprintf(f, "      \"%s\": ", key);
    nb_json_string(f, v);
    fputs(",\n", f);
}

void nb_write_json(const nb_report *rep, FILE *f)
{
    int i;
    fputs("{\n  \"tool\": \"nnop-bench\",\n  \"nnop_version\": ", f);
    nb_json_string(f, rep->version);
    fputs(",\n  \"backend\": ", f);
    nb_json_string(f, rep->backend);
    fputs(",\n  \"device\": ", f);
    nb_json_string(f, rep->device);
    fprintf(f, ",\n  \"method\": {\"warmup\": %d, \"reps\": %d, \"calls\": %d},\n", rep->warmup,
            rep->reps, rep->calls);
    fputs("  \"peaks\": {\"copy_gbs\": ", f);
    if (rep->peak_gbs > 0)
        fprintf(f, "%.6g", rep->peak_gbs);
    else
        fputs("null", f);
    fputs(", \"matmul_tflops\": ", f);
    if (rep->peak_tflops > 0)
        fprintf(f, "%.6g", rep->peak_tflops);
    else
        fputs("null", f);
    fputs(", \"matmul_dtype\": ", f);
    nb_json_string(f, rep->peak_dtype);
    fputs("},\n  \"results\": [", f);
    for (i = 0; i < rep->n; i++) {
        const nb_result *r = &rep->r[i];
        fputs(i ? ",\n    {\n" : "\n    {\n", f);
        json_str(f, "name", r->name);
        json_str(f, "kind", r->kind);
        json_str(f, "desc", r->desc);
        json_str(f, "backend", r->backend);
        json_str(f, "device", r->device);
        fprintf(f, "      \"device_id\": %d,\n", r->device_id);
        json_str(f, "policy", r->policy);
        fprintf(f, "      \"cuda_graph\": %s,\n", r->cuda_graph ? "true" : "false");
        fprintf(f, "      \"batch\": %lld,\n", (long long)r->batch);
        json_str(f, "status", r->status);
        json_str(f, "check", check_word(r->check));
        json_str(f, "check_ref", r->check_ref);
        json_num(f, "check_err", r->check_err, 0);
        json_num(f, "check_tol", r->check_tol, 0);
        json_num(f, "compile_ms", r->compile_ms, 0);
        json_num(f, "gpu_us", r->gpu_us, 0);
        json_num(f, "host_us", r->host_us, 0);
        json_num(f, "flops", r->flops > 0 ? r->flops : -1.0, 0);
        json_num(f, "bytes", r->bytes > 0 ? r->bytes : -1.0, 0);
        json_num(f, "tflops", r->tflops, 0);
        json_num(f, "gbs", r->gbs, 0);
        json_num(f, "frac_peak_flops", r->frac_flops, 0);
        json_num(f, "frac_peak_bw", r->frac_bw, 0);
        json_num(f, "roofline", r->roofline, 0);
        json_num(f, "images_s", r->images_s, 0);
        json_num(f, "efficiency", r->efficiency, 0);
        json_num(f, "latency_p99_us", r->lat_p99_us, 0);
        json_num(f, "memory_mib", r->mem_mib, 0);
        fprintf(f, "      \"partitions\": %d,\n", r->partitions);
        json_str(f, "note", r->note);
        fputs("      \"plan\": ", f);
        if (r->plan)
            nb_json_string(f, r->plan);
        else
            fputs("null", f);
        fputs("\n    }", f);
    }
    fputs(rep->n ? "\n  ]\n}\n" : "]\n}\n", f);
}

static void csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (v >= 0 && v == v && v != HUGE_VAL)
        fprintf(f, "%.6g", v);
}

void nb_write_csv(const nb_report *rep, FILE *f)
{
    int i;
    fputs("name,kind,desc,backend,device,device_id,policy,cuda_graph,batch,status,check,"
          "check_err,check_tol,compile_ms,gpu_us,host_us,flops,bytes,tflops,gbs,"
          "frac_peak_flops,frac_peak_bw,roofline,images_s,efficiency,latency_p99_us,memory_mib,"
          "note\n",
          f);
    for (i = 0; i < rep->n; i++) {
        const nb_result *r = &rep->r[i];
        csv_field(f, r->name);
        fputc(',', f);
        csv_field(f, r->kind);
        fputc(',', f);
        csv_field(f, r->desc);
        fprintf(f, ",%s,", r->backend);
        csv_field(f, r->device);
        fprintf(f, ",%d,", r->device_id);
        csv_field(f, r->policy); /* an engine row's is a comma-separated list */
        fprintf(f, ",%d,%lld,%s,%s", r->cuda_graph, (long long)r->batch, r->status,
                check_word(r->check));
        csv_num(f, r->check_err);
        csv_num(f, r->check_tol);
        csv_num(f, r->compile_ms);
        csv_num(f, r->gpu_us);
        csv_num(f, r->host_us);
        csv_num(f, r->flops);
        csv_num(f, r->bytes);
        csv_num(f, r->tflops);
        csv_num(f, r->gbs);
        csv_num(f, r->frac_flops);
        csv_num(f, r->frac_bw);
        csv_num(f, r->roofline);
        csv_num(f, r->images_s);
        csv_num(f, r->efficiency);
        csv_num(f, r->lat_p99_us);
        csv_num(f, r->mem_mib);
        fputc(',', f);
        csv_field(f, r->note);
        fputc('\n', f);
    }
}
