/* A key process that ends with the process that started it (key_parent.h). */
#include "key_parent.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc/process.h"

#define KEY_PARENT_ENV "KTUNE_KEY_PARENT"

void key_parent_mark(void) {
  char pid[32];
  snprintf(pid, sizeof pid, "%ld", (long)getpid());
  setenv(KEY_PARENT_ENV, pid, 1);
}

void key_parent_watch(void) {
  const char *v = getenv(KEY_PARENT_ENV);
  if (!v) return;
  long parent = strtol(v, NULL, 10);
  unsetenv(KEY_PARENT_ENV); /* for this process alone, not what it starts */
  kt__proc_die_with_parent(SIGTERM, (pid_t)parent, 130);
}
