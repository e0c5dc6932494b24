/* nnop_doctor.c: print what nnop sees of the installation (each library's file and version,
 * the loader's own error for one that does not load, version mismatches, the driver, the
 * devices, which cuDNN nnop itself loads), each problem with its fix, whether a context can be
 * created and, with --cache FILE, the state of a plan cache file, so a broken setup is
 * diagnosed in one command. The verdict, the last line, counts every problem printed.
 *
 * Exit status: 0 when nothing is wrong (a machine without a GPU is not wrong: the CPU backend
 * is used; --require-gpu makes it a problem; notes, such as a missing cuBLASLt, never count),
 * 1 when any problem was found, 2 on bad usage. NNOP_CUDNN_PATH=<folder> checks the cuDNN
 * libraries of that folder only. --json prints one JSON object, the cache check included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnop/nnop.h"

/* --cache FILE, checked with nnop_cache_file_check. */
typedef struct cache_check {
    const char *path;
    nnop_status st;
    char text[1024];   /* the check's one line, without its newline */
    const char *state; /* "ok", "missing", "damaged", "unreadable", "not checked" */
    const char *fix;   /* NULL: fine */
} cache_check;

/* The check's status in words, with the fix. A missing file is fine to the library (it is
 * created at the first save) but a problem here: the user named it to have it checked. */
static void judge_cache(cache_check *c, int missing)
{
    c->state = "ok";
    c->fix = NULL;
    if (missing) {
        c->state = "missing";
        if (c->st == NNOP_OK) /* else the library's text says its folder is missing too */
            snprintf(c->text, sizeof c->text, "cache file %s does not exist", c->path);
        c->fix = "check the path: nnop writes the file when a context using it saves plans "
                 "(nnop_graph_warmup writes one ahead of time)";
    } else if (c->st == NNOP_ERR_FORMAT) {
        c->state = "damaged";
        c->fix = "delete the file: nnop builds the plans again and writes a new one (a damaged "
                 "plan cache it also rewrites at its next save, keeping the intact entries; a "
                 "file that is no plan cache at all it never overwrites)";
    } else if (c->st == NNOP_ERR_IO) {
        c->state = "unreadable";
        c->fix = "make it a regular file that the programs using it may read and write, or "
                 "give them another cache path";
    } else if (c->st == NNOP_ERR_INVALID_ARGUMENT) {
        c->state = "not checked";
        c->fix = "name the cache file: --cache FILE";
    } else if (c->st != NNOP_OK) {
        c->state = "not checked";
        c->fix = "run nnop-doctor again with more memory free";
    }
}

static void check_cache(cache_check *c)
{
    FILE *f = NULL;
    size_t n;
    c->text[0] = '\0';
    c->st = nnop_cache_file_check(c->path, c->text, sizeof c->text);
    if (c->st == NNOP_ERR_INVALID_ARGUMENT) /* the library writes nothing then */
        snprintf(c->text, sizeof c->text, "cache file \"\": the path is empty");
    n = strlen(c->text);
    if (n && c->text[n - 1] == '\n')
        c->text[n - 1] = '\0';
    if (c->st == NNOP_OK) /* a good file or a missing one: a good one opens */
        f = fopen(c->path, "rb");
    judge_cache(c, (c->st == NNOP_OK && !f) ||
                           (c->st == NNOP_ERR_IO && strstr(c->text, ": missing, and its folder")));
    if (f)
        fclose(f);
}

/* Its line, or a PROBLEM with the fix; 1 for a problem. */
static int print_cache_text(const cache_check *c)
{
    if (!c->fix) {
        printf("%s\n", c->text);
        return 0;
    }
    printf("PROBLEM: %s\n  fix: %s\n", c->text, c->fix);
    return 1;
}

/* s as a JSON string, quotes included. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch == '\n')
            printf("\\n");
        else if (ch < 0x20 || ch == 0x7f)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void json_cache(const cache_check *c)
{
    printf("{\"path\": ");
    json_string(c->path);
    printf(", \"state\": ");
    json_string(c->state);
    printf(", \"status\": ");
    json_string(nnop_status_string(c->st));
    printf(", \"report\": ");
    json_string(c->text);
    printf(", \"ok\": %s}", c->fix ? "false" : "true");
}

/* The library's report with the cache check put inside it: a "cache" field before "ok", its
 * problem (if any) added to "problems" and "ok" recounted. nnop_diagnose_ex ends its object
 * with the problems array and "ok" (src/doctor.c): that is where they go. */
static void print_json(const char *report, const cache_check *c, int problems)
{
    const char *end = NULL, *p = report;
    while ((p = strstr(p, "], \"ok\": ")) != NULL)
        end = p++;
    if (!c || !end) { /* nothing to add, or no report to add it to (out of memory) */
        fputs(report, stdout);
        return;
    }
    fwrite(report, 1, (size_t)(end - report), stdout);
    if (c->fix) {
        for (p = end; p > report && p[-1] == ' '; p--)
            ;
        printf("%s{\"what\": ", p > report && p[-1] == '[' ? "" : ", ");
        json_string(c->text);
        printf(", \"fix\": ");
        json_string(c->fix);
        printf("}");
    }
    printf("], \"cache\": ");
    json_cache(c);
    printf(", \"ok\": %s}\n", problems || c->fix ? "false" : "true");
}

/* The start of the report's verdict line (its last), or NULL. */
static const char *verdict_line(const char *report)
{
    const char *v = NULL, *p = report;
    if (strncmp(report, "verdict: ", 9) == 0)
        v = report;
    while ((p = strstr(p, "\nverdict: ")) != NULL)
        v = ++p;
    return v;
}

/* The verdict, recounted when the tool found problems of its own; the report's note count
 * (", 1 note") is kept. */
static void print_verdict(const char *line, int problems, int extra)
{
    const char *notes = line ? strstr(line, ", ") : NULL;
    int n = 0;
    if (line && !extra) {
        fputs(line, stdout);
        return;
    }
    if (notes) { /* up to a remark in parentheses or the end of the line */
        n = (int)strcspn(notes, "(\n");
        while (n > 0 && notes[n - 1] == ' ')
            n--;
    }
    problems += extra;
    printf("verdict: %d problem%s%.*s\n", problems, problems == 1 ? "" : "s", n,
           notes ? notes : "");
}

/* A context, when the report found nothing that could abort the process in cuDNN's own
 * loader; 1 when it cannot be created (a problem). */
static int try_context(int problems)
{
    nnop_context *ctx = NULL;
    if (problems) {
        printf("context (AUTO backend): not tried: fix the problems above first\n");
        return 0;
    }
    if (nnop_context_create(NULL, &ctx) != NNOP_OK) {
        printf("context (AUTO backend): FAILED: %s\n", nnop_context_create_error());
        return 1;
    }
    printf("context (AUTO backend): %s\n",
           nnop_context_backend(ctx) == NNOP_BACKEND_CUDA ? "CUDA" : "CPU reference (no GPU)");
    nnop_context_destroy(ctx);
    return 0;
}

/* The report without its verdict, the cache check, the context, then the verdict over all. */
static int print_text(const char *report, const cache_check *c, int problems)
{
    const char *verdict = verdict_line(report);
    int extra = 0;
    fwrite(report, 1, verdict ? (size_t)(verdict - report) : strlen(report), stdout);
    if (c)
        extra += print_cache_text(c);
    extra += try_context(problems);
    print_verdict(verdict, problems, extra);
    return extra;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: nnop-doctor [--json] [--require-gpu] [--cache FILE]\n"
                "  --json          one JSON object (the cache check in its \"cache\" field)\n"
                "  --require-gpu   no usable GPU is a problem\n"
                "  --cache FILE    also check the plan cache file FILE (missing, unreadable or\n"
                "                  damaged is a problem)\n"
                "  exit status 0: healthy (notes do not count), 1: problems found (each\n"
                "  printed with its fix), 2: bad usage\n"
                "  NNOP_CUDNN_PATH=<folder>: check the cuDNN libraries of that folder\n");
}

int main(int argc, char **argv)
{
    cache_check cache, *c = NULL;
    unsigned flags = NNOP_DIAGNOSE_ISOLATED; /* a damaged library must not end the doctor */
    int problems = 0, extra = 0, i;
    size_t need;
    char *text;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            flags |= NNOP_DIAGNOSE_JSON;
        } else if (strcmp(argv[i], "--require-gpu") == 0) {
            flags |= NNOP_DIAGNOSE_REQUIRE_GPU;
        } else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc) {
            cache.path = argv[++i];
            c = &cache;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout); /* asked for: not an error */
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    need = nnop_diagnose_ex(NULL, 0, flags, NULL) + 256; /* room for a longer second run */
    text = (char *)malloc(need);
    if (!text) {
        fprintf(stderr, "nnop-doctor: out of memory\n");
        return 1;
    }
    nnop_diagnose_ex(text, need, flags, &problems);
    if (c)
        check_cache(c);
    if (flags & NNOP_DIAGNOSE_JSON) /* no context: nothing but the object goes to stdout */
        print_json(text, c, problems);
    else
        extra = print_text(text, c, problems);
    free(text);
    return problems || extra || (c && c->fix) ? 1 : 0;
}
