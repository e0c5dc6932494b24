/* doctor.c: nnop_diagnose, the installation report behind tools/nnop-doctor. */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "doctor.h"
#include "internal.h"
#include "platform/platform.h"

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

/* The last line, "verdict: ok" or "verdict: N problems", notes counted apart (", 1 note": they
 * never fail it). tools/nnop_doctor.c recounts it with its own checks, keeping the notes. */
static void verdict_text(const nnop__doctor *d, nnop__text *t)
{
    if (d->n_problem)
        nnop__textf(t, "verdict: %d problem%s", d->n_problem, d->n_problem == 1 ? "" : "s");
    else
        nnop__textf(t, "verdict: ok");
    if (d->n_note)
        nnop__textf(t, ", %d note%s", d->n_note, d->n_note == 1 ? "" : "s");
    nnop__textf(t, "%s\n",
                !d->n_problem && d->with_cuda && d->gpu != NNOP__DOC_GPU_OK
                        ? " (no GPU on this machine)"
                        : "");
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
    if (d->cudnn_used_known)
        nnop__textf(t, "%-28s %s (%s)\n", "cuDNN nnop loads",
                    d->cudnn_used[0] ? d->cudnn_used : "none", d->cudnn_used_how);
    if (d->with_cuda) {
        if (d->gpu == NNOP__DOC_GPU_OK)
            nnop__textf(t, "%-28s %d\n%s", "CUDA devices", d->n_devices, d->devices);
        else
            nnop__textf(t, "%-28s none (%s)%s\n", "CUDA devices", d->gpu_error,
                        d->gpu == NNOP__DOC_GPU_NONE ? ": the CPU backend is used" : "");
    }
    for (i = 0; i < d->n_note; i++)
        nnop__textf(t, "NOTE: %s\n  fix: %s\n", d->note[i].what, d->note[i].fix);
    for (i = 0; i < d->n_problem; i++)
        nnop__textf(t, "PROBLEM: %s\n  fix: %s\n", d->problem[i].what, d->problem[i].fix);
    verdict_text(d, t);
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

/* [{"what": ..., "fix": ...}, ...] */
static void json_findings(nnop__text *t, const nnop__doc_problem *p, int n)
{
    int i;
    nnop__textf(t, "[");
    for (i = 0; i < n; i++) {
        nnop__textf(t, "%s{", i ? ", " : "");
        json_key(t, "what", p[i].what);
        nnop__textf(t, ", ");
        json_key(t, "fix", p[i].fix);
        nnop__textf(t, "}");
    }
    nnop__textf(t, "]");
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
    /* set but unusable: not the same as unset (null above) */
    nnop__textf(t, ", \"cudnn_path_env_too_long\": %s", d->cudnn_dir_too_long ? "true" : "false");
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
    nnop__textf(t, "}, ");
    json_key(t, "cudnn_used", d->cudnn_used[0] ? d->cudnn_used : NULL);
    nnop__textf(t, ", ");
    json_key(t, "cudnn_used_how", d->cudnn_used_known ? d->cudnn_used_how : NULL);
    nnop__textf(t, ", \"notes\": ");
    json_findings(t, d->note, d->n_note);
    /* problems, then ok, last: tools/nnop_doctor.c adds its own checks' problems there */
    nnop__textf(t, ", \"problems\": ");
    json_findings(t, d->problem, d->n_problem);
    nnop__textf(t, ", \"ok\": %s}\n", d->n_problem ? "false" : "true");
}

/* One report at a time in the process: the probe opens and closes libraries and reads the
 * loader's names of them, which threads probing at once raced on (ThreadSanitizer, from an
 * outside test with 8 threads). Without the lock (out of memory) it runs unserialized. */
static nnop__mutex *doctor_lock;

static void make_doctor_lock(void)
{
    if (nnop__mutex_create(&doctor_lock) != NNOP_OK)
        doctor_lock = NULL;
}

static void examine(nnop__doctor *d, unsigned flags)
{
    nnop__once(NNOP__ONCE_DOCTOR, make_doctor_lock);
    if (doctor_lock)
        nnop__mutex_lock(doctor_lock);
    nnop__doctor_init(d, (flags & NNOP_DIAGNOSE_REQUIRE_GPU) != 0);
    if ((flags & NNOP_DIAGNOSE_ISOLATED) && nnop__fork_available()) { /* CUDA's start too */
        nnop__cuda_doctor_build_facts(d);
        nnop__doctor_probe_isolated(d);
    } else {
        nnop__cuda_doctor_facts(d);
        nnop__doctor_probe(d);
    }
    nnop__doctor_judge(d);
    if (doctor_lock)
        nnop__mutex_unlock(doctor_lock);
}

size_t nnop_diagnose_ex(char *buf, size_t len, unsigned flags, int *problems)
{
    nnop__text t;
    nnop__doctor *d = (nnop__doctor *)nnop__calloc(1, sizeof *d);
    nnop__text_init(&t, buf, len);
    if (problems)
        *problems = 0;
    if (!d) { /* still what was asked for: under NNOP_DIAGNOSE_JSON, a JSON object */
        nnop__textf(&t,
                    flags & NNOP_DIAGNOSE_JSON
                            ? "{\"nnop\": \"%d.%d.%d\", \"error\": \"out of memory for the "
                              "report\", \"problems\": [], \"ok\": false}\n"
                            : "nnop %d.%d.%d: out of memory for the report\n",
                    NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR, NNOP_VERSION_PATCH);
        if (problems)
            *problems = 1;
        return t.used;
    }
    examine(d, flags);
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

/* Why a file that exists cannot be read, asked again of the platform (the check keeps only
 * NNOP_ERR_IO): the fix differs for a directory and for a missing permission. */
static const char *why_unreadable(const char *path)
{
    nnop__open_result why = NNOP__OPEN_FAILED;
    FILE *f = nnop__fopen_read(path, &why);
    if (f) {
        fclose(f);
        return "an I/O error while reading it";
    }
    return why == NNOP__OPEN_NOT_REGULAR ? "not a regular file (a directory, FIFO or device)"
                                         : "no permission to read it, or an I/O error";
}

static void ignore_entry(void *user, const char *name)
{
    (void)user;
    (void)name;
}

/* Whether the folder a file at path would be written to can be read (so exists). */
static int folder_exists(const char *path)
{
    char dir[NNOP__PATH_LEN];
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] != '/' && path[n - 1] != nnop__dl_dir_separator())
        n--;
    if (n >= sizeof dir)
        return 1; /* too long to tell: let the save say */
    memcpy(dir, path, n);
    dir[n] = '\0';
    return nnop__list_dir(n ? dir : ".", ignore_entry, NULL) == 0;
}

nnop_status nnop_cache_file_check(const char *path, char *buf, size_t len)
{
    nnop__cache_report rep;
    nnop_status st;
    nnop__text t;
    if (!path || !path[0]) /* a failed call writes nothing (nnop.h) */
        return NNOP_ERR_INVALID_ARGUMENT;
    nnop__text_init(&t, buf, len);
    memset(&rep, 0, sizeof rep);
    st = nnop__cache_check_file(path, 0, NULL, &rep);
    if (rep.missing && !folder_exists(path)) {
        nnop__textf(&t,
                    "cache file %s: missing, and its folder does not exist or cannot be read: "
                    "nothing can be saved there\n",
                    path);
        return NNOP_ERR_IO;
    }
    if (rep.missing) {
        nnop__textf(&t, "cache file %s: missing (plans will be built and saved)\n", path);
        return NNOP_OK;
    }
    if (st == NNOP_ERR_IO) {
        nnop__textf(&t, "cache file %s: exists but cannot be read: %s\n", path,
                    why_unreadable(path));
        return st;
    }
    if (st != NNOP_OK && st != NNOP_ERR_FORMAT) { /* out of memory: nothing was checked */
        nnop__textf(&t, "cache file %s: not checked: %s\n", path, nnop_status_string(st));
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
