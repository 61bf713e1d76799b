/* The annotation parser: finds the comment blocks above kernels in a C,
 * OpenCL C or CUDA C file and builds their kt__kernel_decl. */
#ifndef KT_LANG_PARSER_H
#define KT_LANG_PARSER_H

#include "decl.h"

/* Expands a choice list per docs/LANGUAGE.md: two values 0 < a < b double from a
 * while below b, then b; otherwise the list as written. Writes the result to
 * *out (malloc'ed). -1 with MSG when the expansion is empty or too large. */
int kt__expand_choices(const int64_t *written, int n, int64_t **out, int *count, char msg[256]);

/* Parses the file at PATH (language from its extension unless LANG >= 0).
 * On error returns NULL and D holds "file:line:col: error:" messages. */
kt__file *kt__parse_file(const char *path, int lang, kt__diag *d, kt__errbuf *eb);
/* The same from a string (the source is copied). */
kt__file *kt__parse_string(const char *label, const char *text, kt__lang lang, kt__diag *d);
/* One more holder of F (returned): each holder calls kt__file_free once,
 * and the last call frees. Safe from any thread. */
kt__file *kt__file_retain(kt__file *f);
void kt__file_free(kt__file *f);

/* NAME NULL: the only kernel, else an error listing them that says to
 * choose one with LABEL NAME (LABEL: what the caller calls the name,
 * kt_labels.kernel). */
const kt__kernel_decl *kt__file_kernel(const kt__file *f, const char *name, const char *label, kt__errbuf *eb);

/* Index of a size name, or -1. */
int kt__decl_size_index(const kt__kernel_decl *k, const char *name);

/* For a configuration @where allows (ENV binds its names and the runtime
 * sizes): evaluates what launching and reporting it needs (@grid, @block,
 * @shared, @flops, @bytes, @kernel's scalar bindings). 0 when all evaluate;
 * else -1 with ERR and *WHAT (the attribute) at the first that does not. */
int kt__decl_check_config(const kt__kernel_decl *k, const kt__env *env, kt__eval_error *err, const char **what);

#endif
