/* Where the code of ktune is on disk: the folder of the shared library, or
 * of the executable libktune.a is linked into. The installed tree is found
 * relative to it (ktune-tuner in libexec, ktune.h in include), so that an
 * installation works wherever its prefix is moved. */
#ifndef KT_CODE_DIR_H
#define KT_CODE_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The folder into DIR (LEN bytes); false when neither dladdr nor
 * /proc/self/exe says. */
bool kt__code_dir(char *dir, size_t len);

#endif
