/* dl.c: can a shared library be loaded? (the doctor's check for cuDNN sub-libraries) */
#include "internal.h"

#ifdef _WIN32
#include <windows.h>

int nnop__platform_can_load(const char *name)
{
    HMODULE h = LoadLibraryA(name);
    if (!h)
        return 0;
    FreeLibrary(h);
    return 1;
}
#else
#include <dlfcn.h>

int nnop__platform_can_load(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}
#endif
