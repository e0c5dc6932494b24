/* doctor.c: nnop_diagnose, the installation report behind tools/nnop-doctor. */
#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "internal.h"

size_t nnop_diagnose(char *buf, size_t len)
{
    nnop__text t;
    nnop__text_init(&t, buf, len);
    nnop__textf(&t, "nnop %d.%d.%d\n", NNOP_VERSION_MAJOR, NNOP_VERSION_MINOR, NNOP_VERSION_PATCH);
    nnop__cuda_diagnose(&t);
    return t.used;
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
