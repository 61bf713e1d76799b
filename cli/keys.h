/* The keys one `ktune tune` run tunes: the product of the --dim lists
 * (--dim M=1024,2048 --dim N=4096,8192 is four keys), times the lines of a
 * --sizes file when one is given. Each key is a list of "NAME=VALUE" sizes
 * for kt_kernel_set_size_arg. Parsed before anything runs, so that bad
 * input is found (and named: the option or FILE:LINE) before any tuning. */
#ifndef KTUNE_CLI_KEYS_H
#define KTUNE_CLI_KEYS_H

#include <stddef.h>

enum { KEY_MAX_SIZES = 64, KEYS_MAX = 100000 };

typedef struct key {
  char *sizes[KEY_MAX_SIZES]; /* "NAME=VALUE", owned */
  int nsizes;
  char where[300]; /* "FILE:LINE" for a --sizes line, "" for --dim alone */
  char label[512]; /* "M=1024 N=4096", for the progress line */
} key;

typedef struct keys {
  key *list;
  int n;
} keys;

/* Builds KS from the --dim options DIMS (each "NAME=V1,V2,...") and the
 * --sizes file SIZES_FILE (NULL: none). On bad input returns -1 with the
 * message (what, where, how to fix it) in ERR; KS is then empty. */
int keys_build(const char *const *dims, int ndims, const char *sizes_file, keys *ks, char *err, size_t errlen);
void keys_free(keys *ks);

#endif
