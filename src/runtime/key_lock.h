/* One tuning per key across processes that share a results database: an
 * open-file-description lock (F_OFD_SETLKW) on one byte of a lock file
 * beside the database, the byte chosen by the key's hash. Like flock it
 * belongs to the open file, not the process, and the kernel drops it when
 * the holder dies, however it dies; unlike flock it locks one key, not the
 * whole file, so different keys tune at once (two keys whose hashes
 * collide merely take turns). */
#ifndef KT_KEY_LOCK_H
#define KT_KEY_LOCK_H

#include <signal.h>

#include "../common.h"

/* Waits for KEY's lock in DB_PATH's lock file (DB_PATH + ".tuning") and
 * returns the open file in *FD: closing it releases the lock. KT_INTERRUPTED
 * when *STOP became non-zero while waiting (a signal handler sets it). */
int kt__key_lock(const char *db_path, const char *key, const volatile sig_atomic_t *stop, int *fd, kt__errbuf *eb);

#endif
