/* A kernel's configuration: the names it tunes, in the order of every values
 * array (the @autotune names, then the @cluster names), their defaults, the
 * "NAME=VALUE NAME=VALUE" text that stores, prints and pins configurations,
 * and --autotune pins. */
#ifndef KT_CONFIG_H
#define KT_CONFIG_H

#include "lang/decl.h"

/* The most names (both stages) a tuning handles: requests, trials and the
 * strategies' buffers hold this many values. */
enum { KT__MAX_NAMES = 64 };

typedef struct kt__config {
  const char **names; /* n entries, then NULL; the strings belong to the declaration */
  int64_t *defaults;  /* each name's first choice: the default configuration */
  int n, ntune;       /* names [0, ntune) are @autotune's, [ntune, n) @cluster's */
} kt__config;

/* The names of D's two stages with their defaults. */
void kt__config_init(kt__config *c, const kt__kernel_decl *d);
void kt__config_free(kt__config *c);
/* KT_INVALID, naming PATH and KERNEL, when C has more than KT__MAX_NAMES. */
int kt__config_check_size(const kt__config *c, const char *path, const char *kernel, kt__errbuf *eb);

/* Where stage STAGE's names (0 @autotune, 1 @cluster) start, and how many. */
int kt__config_stage_first(const kt__config *c, int stage);
int kt__config_stage_count(const kt__config *c, int stage);

/* ---- "NAME=VALUE NAME=VALUE" text ---- */

/* One item of a list: spans of the text, not NUL-terminated. */
typedef struct kt__config_item {
  const char *text; /* the whole item */
  size_t len;
  size_t name_len;   /* text[0, name_len): up to the first '=', or the whole item */
  const char *value; /* after the first '=', to the item's end; NULL without '=' */
  size_t value_len;
} kt__config_item;

/* The tokenizer: the next item of the list at *P, which advances past it.
 * Items are separated by white space and commas. False at the list's end. */
bool kt__config_next(const char **p, kt__config_item *item);
/* One item that is the whole of TEXT, white space and commas included (a
 * --dim expression, an --input path): false unless it has a name before its
 * first '=' and a value after it. */
bool kt__config_split(const char *text, kt__config_item *item);
/* The item's value as an integer (a sign, decimal, 0x hex or 0 octal), all
 * of it; false when it is no integer or does not fit 64 bits. */
bool kt__config_item_int(const kt__config_item *item, int64_t *v);
/* The index of the item's name among NAMES (N of them), or -1. */
int kt__config_find(const char *const *names, int n, const kt__config_item *item);

/* The formatter: "NAME=VALUE NAME=VALUE" of N names and values, each item
 * after PREFIX ("-D" for compiler flags), appended to OUT, which holds a
 * string afterwards even when N is 0. */
void kt__config_format(const char *const *names, const int64_t *values, int n, const char *prefix, kt__sbuf *out);
/* Reads stored TEXT into VALUES (indexed like C's names): names the text
 * lacks keep their value, and items that are no NAME=integer of C are
 * ignored. */
void kt__config_read(const kt__config *c, const char *text, int64_t *values);

/* ---- --autotune pins ---- */

/* Which of a list of names are pinned, and to what: set[i] and values[i]
 * belong to the list's name i. */
typedef struct kt__config_pins {
  bool *set;
  int64_t *values;
} kt__config_pins;

/* N names, none pinned. */
void kt__config_pins_init(kt__config_pins *p, int n);
void kt__config_pins_free(kt__config_pins *p);
/* The pins of stage STAGE's names (a view into P, indexed from the stage's
 * first name). */
kt__config_pins kt__config_pins_stage(const kt__config *c, const kt__config_pins *p, int stage);
/* Parses SPEC, "NAME=VALUE NAME=VALUE ..." over NAMES (N of them; VALUE an
 * integer), into OUT: every entry is rewritten, names SPEC does not mention
 * are not pinned. A malformed item, a name not in NAMES or a name given
 * twice is KT_INVALID saying which item, where (LABEL: what the caller calls
 * the pins, kt_labels.pin) and what is expected, and leaves OUT as it was. */
int kt__config_parse_pins(const char *const *names, int n, const char *spec, const char *label, kt__config_pins *out,
                          kt__errbuf *eb);

#endif
