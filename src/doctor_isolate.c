/* doctor_isolate.c: the doctor's library probe in child processes. A damaged library can
 * kill the process that loads it: a cut copy that another library pulls in (SIGBUS in the
 * loader), one with bytes zeroed in the middle (SIGSEGV in its initializers), an outside
 * test found. The doctor exists for broken installations, so it probes in a child: each
 * library, and the CUDA runtime's first call (which loads libcuda.so.1), is named on a pipe
 * before it runs, and when a child dies the last one named is recorded and skipped by the
 * next child, until one finishes and sends its report back. The caller's process then has
 * loaded nothing and started no CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "internal.h"
#include "platform/platform.h"

/* A child silent this long is taken as hung (a lock held at fork) and killed. */
#define PROBE_SILENCE_MS 120000
#define CUDA_FIRST_CALL  "the CUDA runtime's first call (it loads libcuda.so.1)"

static void probe_child(void *arg, int fd)
{
    nnop__doctor *d = (nnop__doctor *)arg;
    char why[sizeof d->gpu_error];
    d->progress_fd = fd;
    nnop__doctor_probe(d);
    if (d->with_cuda) {
        if (nnop__doctor_before_load(d, CUDA_FIRST_CALL, why, sizeof why)) {
            d->gpu = NNOP__DOC_GPU_ERROR;
            snprintf(d->gpu_error, sizeof d->gpu_error, "%s", why);
        } else {
            nnop__cuda_doctor_facts(d);
        }
    }
    /* the report as bytes: its only pointers (nnop__doc_lib.key) are string literals of this
     * library, at the same address in the parent, which fork copied */
    (void)nnop__fd_write(fd, "D", 1);
    (void)nnop__fd_write(fd, d, sizeof *d);
}

/* Read the child's records: "O" name NUL for each step it was about to run (the last into
 * last), "D" and the whole report at the end. 1 when the report came (into d). */
static int read_records(const unsigned char *buf, size_t n, nnop__doctor *d, char *last,
                        size_t last_len)
{
    size_t at = 0;
    while (at < n) {
        if (buf[at] == 'O') {
            const unsigned char *end = (const unsigned char *)memchr(buf + at + 1, 0, n - at - 1);
            size_t len;
            if (!end)
                return 0; /* cut while naming it */
            len = (size_t)(end - (buf + at + 1));
            if (len >= last_len)
                len = last_len - 1;
            memcpy(last, buf + at + 1, len);
            last[len] = '\0';
            at = (size_t)(end - buf) + 1;
        } else if (buf[at] == 'D' && n - at - 1 == sizeof *d) {
            memcpy(d, buf + at + 1, sizeof *d);
            d->progress_fd = -1;
            return 1;
        } else {
            return 0;
        }
    }
    return 0;
}

void nnop__doctor_probe_isolated(nnop__doctor *d)
{
    char last[NNOP__LIB_PATH_LEN];
    int round;
    for (round = 0; round <= NNOP__DOC_MAX_LIBS; round++) {
        unsigned char *buf = NULL;
        size_t n = 0;
        int fate = nnop__run_in_child(probe_child, d, PROBE_SILENCE_MS, &buf, &n);
        int reported;
        last[0] = '\0';
        reported = buf && read_records(buf, n, d, last, sizeof last);
        free(buf);
        if (reported)
            return;
        if (fate <= 0 || !last[0] || nnop__doctor_crashed(d, last) >= 0 ||
            d->n_crashed == NNOP__DOC_MAX_LIBS) {
            snprintf(d->probe_failure, sizeof d->probe_failure, "%s%s%s",
                     fate < 0    ? "no library probe process could run, or one hung"
                     : fate == 0 ? "the library probe process ended without a report"
                                 : "the library probe process died",
                     last[0] ? " while loading or probing " : "", last);
            return;
        }
        snprintf(d->crashed[d->n_crashed], sizeof d->crashed[0], "%s", last);
        d->crash_fate[d->n_crashed++] = fate;
    }
}
