/* The devices of a run: --device N, 0,2,3 or all (device_list.h). */
#include "device_list.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One item of the list, [START, END): a decimal index. */
static int parse_index(const char *start, const char *end, int *out) {
  if (start == end || end - start > 7) return -1;
  int v = 0;
  for (const char *p = start; p < end; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
  }
  *out = v;
  return 0;
}

static int listed(const device_list *d, int index) {
  for (int i = 0; i < d->n; i++)
    if (d->index[i] == index) return 1;
  return 0;
}

/* list -> INDEX (',' INDEX)* */
static int parse_items(const char *spec, device_list *d, char *err, size_t errlen) {
  const char *p = spec;
  for (int item = 1;; item++) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    int index;
    if (p == end) {
      snprintf(err, errlen, "--device %s: item %d of the list is empty (write the indices comma-separated: 0,1)", spec,
               item);
      return -1;
    }
    if (parse_index(p, end, &index) != 0) {
      snprintf(err, errlen,
               "--device %s: '%.*s' (item %d) is not a device index; give an index, a comma list such as 0,2,3, or "
               "all (`ktune devices` lists them)",
               spec, (int)(end - p), p, item);
      return -1;
    }
    if (listed(d, index)) {
      snprintf(err, errlen, "--device %s: device %d is listed twice (list each device once, e.g. --device 0,1)", spec,
               index);
      return -1;
    }
    if (d->n == DEVICE_LIST_MAX) {
      snprintf(err, errlen, "--device %s: more than %d devices", spec, DEVICE_LIST_MAX);
      return -1;
    }
    d->index[d->n++] = index;
    if (!*end) return 0;
    p = end + 1;
  }
}

int device_list_parse(const char *spec, device_list *d, char *err, size_t errlen) {
  *d = (device_list){.spec = spec};
  if (strcmp(spec, "all") == 0) {
    d->all = 1;
    return 0;
  }
  if (parse_items(spec, d, err, errlen) == 0) return 0;
  *d = (device_list){0};
  return -1;
}

/* "1 device (0)", "2 devices (0..1)", "no device". */
static void describe_count(int count, char *out, size_t len) {
  if (count == 0) snprintf(out, len, "no device");
  else if (count == 1) snprintf(out, len, "1 device (0)");
  else snprintf(out, len, "%d devices (0..%d)", count, count - 1);
}

int device_list_resolve(device_list *d, int count, const char *backend, char *err, size_t errlen) {
  char have[64];
  describe_count(count, have, sizeof have);
  if (d->all) {
    d->n = count < DEVICE_LIST_MAX ? count : DEVICE_LIST_MAX;
    for (int i = 0; i < d->n; i++) d->index[i] = i;
  }
  for (int i = 0; i < d->n || count == 0; i++)
    if (count == 0 || d->index[i] >= count) {
      snprintf(err, errlen, "--device %s: the %s backend has %s; `ktune devices` lists them", d->spec ? d->spec : "0",
               backend, have);
      return -1;
    }
  return 0;
}

int device_list_several(const device_list *d) { return d->all || d->n > 1; }
