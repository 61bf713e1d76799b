/* The devices one `ktune tune` or `ktune bench` run measures on: --device N
 * (one), --device 0,2,3 (a list) or --device all (every device of the
 * kernel's backend, known only once the kernel is loaded). Parsed when the
 * command line is, so that a malformed list is exit status 2 before
 * anything runs; the indices are checked against the backend's devices
 * before any key is tuned. */
#ifndef KTUNE_CLI_DEVICE_LIST_H
#define KTUNE_CLI_DEVICE_LIST_H

#include <stddef.h>

enum { DEVICE_LIST_MAX = 64 };

typedef struct device_list {
  const char *spec; /* as written, for messages; NULL: --device not given (device 0) */
  int all;          /* --device all: the indices come from device_list_resolve */
  int n;
  int index[DEVICE_LIST_MAX];
} device_list;

/* Parses SPEC ("all", "3", "0,2,3") into D. On bad input returns -1 with
 * the message (what, where, how to fix it) in ERR. */
int device_list_parse(const char *spec, device_list *d, char *err, size_t errlen);

/* Against the COUNT devices of BACKEND: "all" becomes 0..COUNT-1, and an
 * index past the last is refused (-1, the message in ERR, naming how to
 * list the devices). */
int device_list_resolve(device_list *d, int count, const char *backend, char *err, size_t errlen);

/* Whether more than one device was asked for (a list or "all"), before
 * resolving: what `ktune space` refuses. */
int device_list_several(const device_list *d);

#endif
