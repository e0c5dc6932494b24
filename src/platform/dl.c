/* dl.c: shared libraries loaded and looked at at run time (dlopen / LoadLibrary): the
 * doctor's probes of cuDNN, its sub-libraries, cuBLASLt, NVRTC and the CUDA driver. */
#ifndef _WIN32
#define _GNU_SOURCE 1 /* dlinfo, RTLD_DI_LINKMAP, RTLD_NOLOAD, dladdr */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform/platform.h"

static void put_text(char *dst, size_t len, const char *src)
{
    size_t n;
    if (!dst || !len)
        return;
    n = src ? strlen(src) : 0;
    n = n < len - 1 ? n : len - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

#ifdef _WIN32
#include <windows.h>

static void last_error_text(const char *name, char *err, size_t len)
{
    char msg[512];
    DWORD code = GetLastError();
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
                             0, msg, (DWORD)sizeof msg, NULL);
    while (n > 0 && (msg[n - 1] == '\r' || msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    if (!err || !len)
        return;
    if (n == 0)
        snprintf(err, len, "%s: error %lu", name, (unsigned long)code);
    else
        snprintf(err, len, "%s: %s (error %lu)", name, msg, (unsigned long)code);
}

int nnop__dl_file_cut(const char *path, char *err, size_t len)
{
    (void)path;
    (void)err;
    (void)len;
    return 0;
}

nnop__dl *nnop__dl_open(const char *name, int only_if_loaded, char *err, size_t len)
{
    HMODULE h = NULL;
    put_text(err, len, "");
    if (only_if_loaded) {
        if (!GetModuleHandleExA(0, name, &h))
            h = NULL;
        if (!h)
            put_text(err, len, "not loaded in this process");
        return (nnop__dl *)h;
    }
    /* a path: its dependencies are searched in its own folder first, as the program's
     * folder is for a plain name */
    if (strchr(name, '\\') || strchr(name, '/'))
        h = LoadLibraryExA(name, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    else
        h = LoadLibraryA(name);
    if (!h)
        last_error_text(name, err, len);
    return (nnop__dl *)h;
}

void *nnop__dl_sym(nnop__dl *h, const char *symbol)
{
    FARPROC f;
    void *p = NULL;
    if (!h)
        return NULL;
    f = GetProcAddress((HMODULE)h, symbol);
    if (f)
        memcpy(&p, &f, sizeof p < sizeof f ? sizeof p : sizeof f);
    return p;
}

int nnop__dl_path(nnop__dl *h, char *buf, size_t len)
{
    DWORD n;
    if (!h || !buf || len < 2)
        return -1;
    n = GetModuleFileNameA((HMODULE)h, buf, (DWORD)(len > 0x7fffffff ? 0x7fffffff : len));
    if (n == 0 || n >= len) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}

void nnop__dl_close(nnop__dl *h)
{
    if (h)
        FreeLibrary((HMODULE)h);
}

char nnop__dl_dir_separator(void)
{
    return '\\';
}
#else
#include <dlfcn.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <link.h>
#define NNOP_HAVE_DLINFO 1
#endif
#ifdef __linux__
#include <elf.h>
#include <sys/stat.h>

/* The bytes a 64-bit ELF file's headers say it holds (program and section header tables,
 * every loaded segment), or 0 when f is not one or cannot be read. */
static uint64_t elf_extent(FILE *f)
{
    Elf64_Ehdr eh;
    Elf64_Phdr ph;
    uint64_t need;
    int i;
    if (fread(&eh, 1, sizeof eh, f) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof ph)
        return 0;
    need = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof ph;
    if (eh.e_shoff && eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > need)
        need = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
    for (i = 0; i < eh.e_phnum; i++) {
        if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET) != 0 ||
            fread(&ph, 1, sizeof ph, f) != sizeof ph)
            return need; /* past the end: need already says so */
        if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > need)
            need = ph.p_offset + ph.p_filesz;
    }
    return need;
}

/* 1, with why in err, when path is an ELF file shorter than its headers say. Why: the loader
 * maps such a file and the process dies of SIGBUS on the first missing page (a cut copy of
 * libcudnn.so.9 killed every program and the doctor, an outside test found). */
static int elf_truncated(const char *path, char *err, size_t len)
{
    struct stat st;
    uint64_t need;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* dlopen says why */
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return 0;
    }
    need = elf_extent(f);
    fclose(f);
    if (need <= (uint64_t)st.st_size)
        return 0;
    if (err && len)
        snprintf(err, len,
                 "%s: truncated file: %lld bytes, where its ELF headers describe %llu (a cut "
                 "download or copy; not loaded)",
                 path, (long long)st.st_size, (unsigned long long)need);
    return 1;
}
#endif

int nnop__dl_file_cut(const char *path, char *err, size_t len)
{
#ifdef __linux__
    return elf_truncated(path, err, len);
#else
    (void)path;
    (void)err;
    (void)len;
    return 0;
#endif
}

nnop__dl *nnop__dl_open(const char *name, int only_if_loaded, char *err, size_t len)
{
    void *h;
    int flags = RTLD_NOW | RTLD_LOCAL;
#ifdef RTLD_NOLOAD
    if (only_if_loaded)
        flags |= RTLD_NOLOAD;
#else
    if (only_if_loaded) {
        put_text(err, len, "not loaded in this process");
        return NULL;
    }
#endif
#ifdef __linux__
    if (!only_if_loaded && strchr(name, '/') && elf_truncated(name, err, len))
        return NULL;
#endif
    (void)dlerror(); /* drop an older message */
    h = dlopen(name, flags);
    if (!h) {
        const char *e = dlerror();
        put_text(err, len, only_if_loaded ? "not loaded in this process" : e ? e : "dlopen failed");
        return NULL;
    }
    put_text(err, len, "");
    return (nnop__dl *)h;
}

void *nnop__dl_sym(nnop__dl *h, const char *symbol)
{
    return h ? dlsym((void *)h, symbol) : NULL;
}

int nnop__dl_path(nnop__dl *h, char *buf, size_t len)
{
    if (!h || !buf || len < 2)
        return -1;
    buf[0] = '\0';
#ifdef NNOP_HAVE_DLINFO
    {
        struct link_map *lm = NULL;
        if (dlinfo((void *)h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
            put_text(buf, len, lm->l_name);
            return strlen(lm->l_name) < len ? 0 : -1;
        }
    }
#endif
    return -1;
}

void nnop__dl_close(nnop__dl *h)
{
    if (h)
        dlclose((void *)h);
}

char nnop__dl_dir_separator(void)
{
    return '/';
}
#endif

void nnop__dl_dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/'), *back = strrchr(path, '\\');
    size_t n;
    if (!len)
        return;
    if (back && (!slash || back > slash))
        slash = back;
    n = slash ? (size_t)(slash - path) : 0;
    if (n >= len)
        n = 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
}

int nnop__env_get(const char *name, char *buf, size_t len)
{
#ifdef _WIN32
    DWORD n = GetEnvironmentVariableA(name, buf, (DWORD)(len > 0x7fffffff ? 0x7fffffff : len));
    if (n == 0 || n >= len) {
        if (buf && len)
            buf[0] = '\0';
        return -1;
    }
    return 0;
#else
    const char *v = getenv(name);
    if (!v || strlen(v) >= len) {
        if (buf && len)
            buf[0] = '\0';
        return -1;
    }
    put_text(buf, len, v);
    return 0;
#endif
}

int nnop__env_is_set(const char *name)
{
#ifdef _WIN32
    return GetEnvironmentVariableA(name, NULL, 0) > 1; /* the count holds the NUL */
#else
    const char *v = getenv(name);
    return v && v[0];
#endif
}

int nnop__platform_can_load(const char *name)
{
    nnop__dl *h = nnop__dl_open(name, 0, NULL, 0);
    nnop__dl_close(h);
    return h != NULL;
}

/* A library file rather than a folder: its last part ends in ".so" or ".dll" or holds ".so."
 * (libcudnn.so.9). */
static int names_library_file(const char *path)
{
    const char *slash = strrchr(path, '/'), *back = strrchr(path, '\\'), *base = path;
    size_t n;
    if (slash)
        base = slash + 1;
    if (back && back + 1 > base)
        base = back + 1;
    n = strlen(base);
    return strstr(base, ".so.") != NULL || (n > 3 && strcmp(base + n - 3, ".so") == 0) ||
           (n > 4 && (strcmp(base + n - 4, ".dll") == 0 || strcmp(base + n - 4, ".DLL") == 0));
}

int nnop__list_has(const char *list, const char *item)
{
    const char *at;
    size_t n = item ? strlen(item) : 0;
    if (n == 0 || !list)
        return 0;
    for (at = strstr(list, item); at; at = strstr(at + 1, item))
        if ((at == list || at[-1] == ',') && (at[n] == '\0' || at[n] == ','))
            return 1;
    return 0;
}

int nnop__env_lists(const char *name, const char *item)
{
    char list[1024];
    return nnop__env_get(name, list, sizeof list) == 0 && nnop__list_has(list, item);
}

void nnop__path_join(char *out, size_t len, const char *dir, const char *file)
{
    if (dir && dir[0])
        snprintf(out, len, "%s%c%s", dir, nnop__dl_dir_separator(), file);
    else
        put_text(out, len, file);
}

int nnop__lib_places(const char *file, const char *only, const char *fallback,
                     char places[NNOP__LIB_PLACES][NNOP__LIB_PATH_LEN])
{
    if (only && only[0]) {
        nnop__path_join(places[0], NNOP__LIB_PATH_LEN, only, file);
        return 1;
    }
    put_text(places[0], NNOP__LIB_PATH_LEN, file);
    if (!fallback || !fallback[0])
        return 1;
    nnop__path_join(places[1], NNOP__LIB_PATH_LEN, fallback, file);
    return 2;
}

int nnop__env_lib_dir(const char *name, char *buf, size_t len)
{
    char value[NNOP__PATH_LEN];
    if (buf && len)
        buf[0] = '\0';
    if (nnop__env_get(name, value, sizeof value) != 0)
        return nnop__env_is_set(name) ? NNOP__ENV_TOO_LONG : -1;
    if (strlen(value) >= len)
        return NNOP__ENV_TOO_LONG;
    if (names_library_file(value))
        nnop__dl_dir_of(value, buf, len);
    else
        put_text(buf, len, value);
    return 0;
}
