/* crash_on_load.c: a shared module that dies of SIGBUS while it loads, as a library cut short
 * or damaged in the middle does. test_doctor_libs probes it in place of a cuDNN library: the
 * doctor's child-process probe must report it, naming the file, and its caller live on. Not
 * a test of its own (no test_ prefix); built by tests/CMakeLists.txt off Windows. */
#include <signal.h>

__attribute__((constructor)) static void die_while_loading(void)
{
    (void)raise(SIGBUS);
}
