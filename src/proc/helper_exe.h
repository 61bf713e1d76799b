/* Finding ktune-tuner, the clean executable that the library starts with
 * posix_spawn instead of forking the calling process: the tuning helper of a
 * kt_launch miss, and the spawned zygote of a kt_tune called in a process
 * that holds a GPU driver (device/zygote.h). */
#ifndef KT_HELPER_EXE_H
#define KT_HELPER_EXE_H

#include "../common.h"

/* The executable: $KTUNE_HELPER, else ktune-tuner beside the library (found
 * with dladdr: the library's own folder, the libexec folder relative to it,
 * ../libexec; for libktune.a, the program's folder), else beside the ktune
 * command on $PATH or in the libexec folder relative to it (the installed
 * layout). False with the places looked at in WHY when none is there. */
bool kt__helper_exe_path(char *path, size_t len, kt__sbuf *why);

#endif
