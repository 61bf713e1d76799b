/* NVRTC, loaded at run time (through dl.h): compiles CUDA C++ configurations
 * to cubins in the tuner process's compile threads. Needs no GPU. */
#ifndef KT_BACKEND_NVRTC_H
#define KT_BACKEND_NVRTC_H

#include "backend.h"

#ifdef KTUNE_HAVE_CUDA_H /* without cuda.h the CUDA backend is unavailable */
/* Loads NVRTC once per process (thread-safe). KT_OK, or KT_NOBACKEND with
 * the libraries tried and why each failed. Candidates: $KTUNE_NVRTC, then
 * libnvrtc.so.13, .so.12, .so, then those under $CUDA_HOME/lib64 and
 * /usr/local/cuda/lib64. */
int kt__nvrtc_load(kt__errbuf *eb);

/* "NVRTC 13.0" into OUT; KT_NOBACKEND when NVRTC is missing. */
int kt__nvrtc_version_string(char *out, size_t len, kt__errbuf *eb);

/* The backend's compile: B's file to <workdir>/<tag>.cubin. When the kernel
 * is not extern "C", its mangled name is written beside, in <tag>.cubin.sym.
 * KT__ST_OK, or KT__ST_COMPILE with the NVRTC log in A->log and EB. NVRTC
 * cannot be interrupted: B->cancel is not looked at (the pool leaves an
 * abandoned build to end in its thread). */
kt__status kt__nvrtc_build(const kt__build *b, kt__artifact *a, kt__errbuf *eb);

/* A standalone SOURCE (no includes, no -D) compiled for ARCH (sm_XY) to a
 * cubin in memory: *IMAGE (malloc'ed) of *LEN bytes. For ktune's own device
 * code (compare_kernel.h), which the worker builds once. KT_OK, or
 * KT_NOBACKEND / KT_INVALID with NVRTC's log in EB. */
int kt__nvrtc_cubin(const char *source, const char *arch, char **image, size_t *len, kt__errbuf *eb);
#endif

/* The options a build is compiled with (arch, language standard, CUDA
 * include directory, -DNAME=VALUE per name), as a NULL-terminated array of
 * malloc'ed strings (free with kt__nvrtc_options_free). ARCH as chosen by
 * kt__cuda_pick_arch; INCLUDE_DIR may be NULL. */
char **kt__nvrtc_options(const kt__build *b, const char *arch, const char *include_dir, int *count);
void kt__nvrtc_options_free(char **opts);
/* The options of B (arch, standard, include folders) for the binary
 * cache's key; the NVRTC version is the device's toolchain_version. */
void kt__nvrtc_binary_flags(const kt__build *b, kt__sbuf *out);

/* The CUDA include directory to give NVRTC ($CUDA_HOME/include, else
 * /usr/local/cuda/include), or NULL when neither exists. */
const char *kt__nvrtc_include_dir(void);

/* The architecture B compiles for: $KTUNE_CUDA_ARCH, the kernel's
 * `@arch(sm_90a)` when it refines the device's, the device's, or sm_90. */
void kt__nvrtc_arch(const kt__build *b, char *out, size_t len);

#endif
