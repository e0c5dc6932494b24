/* doctor.c: nnop_diagnose, the installation report behind tools/nnop-doctor. */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "doctor.h"
#include "internal.h"

static void cudnn_version_text(long v, char *buf, size_t len)
{
    snprintf(buf, len, "%ld.%ld.%ld", v / 10000, (v % 10000) / 100, v % 100);
}

static void cuda_version_text(long v, char *buf, size_t len)
{
    snprintf(buf, len, "%ld.%ld", v / 1000, (v % 1000) / 10);
}

/* A library's version in words: cuDNN and cuBLASLt count MAJOR*10000..., NVRTC and the
 * driver count as CUDA does (MAJOR*1000 + MINOR*10). */
static void lib_version_text(const nnop__doc_lib *l, char *buf, size_t len)
{
    if (!l->version)
        snprintf(buf, len, "%s", "");
    else if (strcmp(l->key, "nvrtc") == 0 || strcmp(l->key, "cuda_driver") == 0)
        cuda_version_text(l->version, buf, len);
    else
        cudnn_version_text(l->version, buf, len);
}

void nnop__doctor_text(const nnop__doctor *d, nnop__text *t)
{
    char a[32], b[32];
    int i;
    nnop__textf(t, "nnop %d.%d.%d (%s build)\n", NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR,
                NNOP_VERSION_PATCH, d->with_cuda ? "CUDA" : "CPU-only");
    if (d->with_cuda) {
        cudnn_version_text(d->cudnn_headers, a, sizeof a);
        cudnn_version_text(NNOP_CUDNN_MIN_VERSION, b, sizeof b);
        nnop__textf(t, "%-28s %s (runs on %s or newer)\n", "cuDNN built against", a, b);
        cuda_version_text(d->cudart_built, a, sizeof a);
        nnop__textf(t, "%-28s %s\n", "CUDA runtime built against", a);
        if (d->cudart_loaded) {
            cuda_version_text(d->cudart_loaded, a, sizeof a);
            nnop__textf(t, "%-28s %s\n", "CUDA runtime loaded", a);
        }
    }
    if (d->driver) {
        cuda_version_text(d->driver, a, sizeof a);
        nnop__textf(t, "%-28s supports CUDA %s\n", "CUDA driver", a);
    } else {
        nnop__textf(t, "%-28s none installed\n", "CUDA driver");
    }
    nnop__textf(t, "%-28s %s%s\n", "cuDNN looked for in",
                d->cudnn_dir_too_long ? "nowhere: NNOP_CUDNN_PATH is too long"
                : d->cudnn_dir[0]     ? "NNOP_CUDNN_PATH="
                                      : "the loader's search path",
                d->cudnn_dir);
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        if (strcmp(l->key, "cuda_driver") == 0 && !d->with_cuda && !l->loaded)
            continue;
        if (!l->loaded) {
            nnop__textf(t, "%s: NOT LOADED: %s\n", l->file, l->error);
            continue;
        }
        lib_version_text(l, a, sizeof a);
        nnop__textf(t, "%s: %s", l->file, l->path);
        if (a[0])
            nnop__textf(t, " (%s%s", strcmp(l->key, "nvrtc") == 0 ? "CUDA " : "", a);
        else if (strncmp(l->key, "cudnn", 5) == 0)
            nnop__textf(t, " (%s",
                        strcmp(l->key, "cudnn") == 0 ? "calls go to libcudnn_graph"
                                                     : "no version of its own");
        if (l->cudart) {
            cuda_version_text(l->cudart, b, sizeof b);
            nnop__textf(t, ", for CUDA %s", b);
        }
        if (l->check >= 0) {
            const nnop__doc_lib *g = nnop__doctor_lib(d, "cudnn_graph");
            nnop__textf(t, ", version check %s",
                        l->check == 0               ? "ok"
                        : g && !g->loaded && g != l ? "FAILED (it needs the graph library)"
                                                    : "FAILED");
        }
        nnop__textf(t, "%s\n", a[0] || strncmp(l->key, "cudnn", 5) == 0 ? ")" : "");
    }
    if (d->with_cuda) {
        if (d->gpu == NNOP__DOC_GPU_OK)
            nnop__textf(t, "%-28s %d\n%s", "CUDA devices", d->n_devices, d->devices);
        else
            nnop__textf(t, "%-28s none (%s)%s\n", "CUDA devices", d->gpu_error,
                        d->gpu == NNOP__DOC_GPU_NONE ? ": the CPU backend is used" : "");
    }
    for (i = 0; i < d->n_problem; i++)
        nnop__textf(t, "PROBLEM: %s\n  fix: %s\n", d->problem[i].what, d->problem[i].fix);
    if (d->n_problem)
        nnop__textf(t, "verdict: %d problem%s\n", d->n_problem, d->n_problem == 1 ? "" : "s");
    else
        nnop__textf(t, "verdict: ok%s\n",
                    d->with_cuda && d->gpu != NNOP__DOC_GPU_OK ? " (no GPU on this machine)" : "");
}

/* s as a JSON string, quotes included. */
static void json_string(nnop__text *t, const char *s)
{
    nnop__textf(t, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            nnop__textf(t, "\\%c", c);
        else if (c == '\n')
            nnop__textf(t, "\\n");
        else if (c == '\t')
            nnop__textf(t, "\\t");
        else if (c == '\r')
            nnop__textf(t, "\\r");
        else if (c < 0x20 || c == 0x7f)
            nnop__textf(t, "\\u%04x", c);
        else
            nnop__textf(t, "%c", c);
    }
    nnop__textf(t, "\"");
}

static void json_key(nnop__text *t, const char *key, const char *value)
{
    json_string(t, key);
    nnop__textf(t, ": ");
    if (value)
        json_string(t, value);
    else
        nnop__textf(t, "null");
}

void nnop__doctor_json(const nnop__doctor *d, nnop__text *t)
{
    char a[32], v[32];
    int i;
    snprintf(v, sizeof v, "%d.%d.%d", NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR, NNOP_VERSION_PATCH);
    nnop__textf(t, "{");
    json_key(t, "nnop", v);
    nnop__textf(t, ", \"cuda_build\": %s, ", d->with_cuda ? "true" : "false");
    cudnn_version_text(d->cudnn_headers, a, sizeof a);
    json_key(t, "cudnn_headers", d->with_cuda ? a : NULL);
    nnop__textf(t, ", ");
    cudnn_version_text(NNOP_CUDNN_MIN_VERSION, a, sizeof a);
    json_key(t, "cudnn_min", a);
    nnop__textf(t, ", ");
    cuda_version_text(d->cudart_built, a, sizeof a);
    json_key(t, "cuda_runtime_built", d->with_cuda ? a : NULL);
    nnop__textf(t, ", ");
    cuda_version_text(d->cudart_loaded, a, sizeof a);
    json_key(t, "cuda_runtime_loaded", d->cudart_loaded ? a : NULL);
    nnop__textf(t, ", ");
    cuda_version_text(d->driver, a, sizeof a);
    json_key(t, "cuda_driver", d->driver ? a : NULL);
    nnop__textf(t, ", ");
    json_key(t, "cudnn_path_env", d->cudnn_dir[0] ? d->cudnn_dir : NULL);
    nnop__textf(t, ", \"libraries\": [");
    for (i = 0; i < d->n_lib; i++) {
        const nnop__doc_lib *l = &d->lib[i];
        nnop__textf(t, "%s{", i ? ", " : "");
        json_key(t, "name", l->key);
        nnop__textf(t, ", ");
        json_key(t, "file", l->file);
        nnop__textf(t, ", \"loaded\": %s, ", l->loaded ? "true" : "false");
        json_key(t, "path", l->loaded ? l->path : NULL);
        nnop__textf(t, ", ");
        lib_version_text(l, a, sizeof a);
        json_key(t, "version", a[0] ? a : NULL);
        nnop__textf(t, ", ");
        json_key(t, "error", l->loaded ? NULL : l->error);
        if (l->check >= 0)
            nnop__textf(t, ", \"version_check\": %d", l->check);
        nnop__textf(t, "}");
    }
    nnop__textf(t, "], \"gpu\": {\"devices\": %d, ", d->gpu == NNOP__DOC_GPU_OK ? d->n_devices : 0);
    json_key(t, "error", d->gpu_error[0] ? d->gpu_error : NULL);
    nnop__textf(t, "}, \"problems\": [");
    for (i = 0; i < d->n_problem; i++) {
        nnop__textf(t, "%s{", i ? ", " : "");
        json_key(t, "what", d->problem[i].what);
        nnop__textf(t, ", ");
        json_key(t, "fix", d->problem[i].fix);
        nnop__textf(t, "}");
    }
    nnop__textf(t, "], \"ok\": %s}\n", d->n_problem ? "false" : "true");
}

size_t nnop_diagnose_ex(char *buf, size_t len, unsigned flags, int *problems)
{
    nnop__text t;
    nnop__doctor *d = (nnop__doctor *)nnop__calloc(1, sizeof *d);
    nnop__text_init(&t, buf, len);
    if (problems)
        *problems = 0;
    if (!d) {
        nnop__textf(&t, "nnop %d.%d.%d: out of memory for the report\n", NNOP_VERSION_MAJOR,
                    NNOP_VERSION_MINOR, NNOP_VERSION_PATCH);
        if (problems)
            *problems = 1;
        return t.used;
    }
    nnop__doctor_init(d, (flags & NNOP_DIAGNOSE_REQUIRE_GPU) != 0);
    nnop__cuda_doctor_facts(d);
    nnop__doctor_probe(d);
    nnop__doctor_judge(d);
    if (flags & NNOP_DIAGNOSE_JSON)
        nnop__doctor_json(d, &t);
    else
        nnop__doctor_text(d, &t);
    if (problems)
        *problems = d->n_problem;
    nnop__free(d);
    return t.used;
}

size_t nnop_diagnose(char *buf, size_t len)
{
    return nnop_diagnose_ex(buf, len, 0, NULL);
}

nnop_status nnop_cache_file_check(const char *path, char *buf, size_t len)
{
    nnop__cache_report rep;
    nnop_status st;
    nnop__text t;
    nnop__text_init(&t, buf, len);
    if (!path)
        return NNOP_ERR_INVALID_ARGUMENT;
    memset(&rep, 0, sizeof rep);
    st = nnop__cache_check_file(path, 0, NULL, &rep);
    if (rep.missing) {
        nnop__textf(&t, "cache file %s: missing (plans will be built and saved)\n", path);
        return NNOP_OK;
    }
    if (st == NNOP_ERR_IO) {
        nnop__textf(&t, "cache file %s: exists but cannot be read\n", path);
        return st;
    }
    nnop__textf(&t,
                "cache file %s: %s; %llu good entries, %llu corrupt, %llu of another device, "
                "%llu of another cuDNN%s%s\n",
                path, rep.rejected ? "header rejected (whole file ignored)" : "header ok",
                (unsigned long long)rep.entries_ok, (unsigned long long)rep.ignored_corrupt,
                (unsigned long long)rep.ignored_other_device,
                (unsigned long long)rep.ignored_other_cudnn,
                rep.message[0] ? "; first problem: " : "", rep.message);
    return rep.rejected || rep.ignored_corrupt ? NNOP_ERR_FORMAT : NNOP_OK;
}
