/* The per-key lock beside the results database (key_lock.h). */
#include "key_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* FNV-1a, folded into 40 bits: a byte offset any file system takes. */
static off_t key_offset(const char *key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
  return (off_t)(h & ((UINT64_C(1) << 40) - 1));
}

int kt__key_lock(const char *db_path, const char *key, const volatile sig_atomic_t *stop, int *fd, kt__errbuf *eb) {
  char path[4096];
  snprintf(path, sizeof path, "%s.tuning", db_path);
  *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  KT__RETURN_IF(*fd < 0, eb, KT_STORE, "%s: cannot open the tuning lock beside the results database: %s", path,
                strerror(errno));
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = key_offset(key), .l_len = 1};
  while (fcntl(*fd, F_OFD_SETLKW, &fl) != 0) {
    int e = errno;
    if (e == EINTR && !*stop) continue;
    close(*fd);
    *fd = -1;
    if (e == EINTR) return kt__err(eb, KT_INTERRUPTED, "interrupted while another process tuned the same key");
    return kt__err(eb, KT_STORE, "%s: cannot lock the key's tuning: %s", path, strerror(e));
  }
  return KT_OK;
}
