/* Whom the results database trusts: its stored winners are launched by
 * kt_launch and warm-start every tuning, so, as ssh and ccache do with
 * their files (and the binary cache with its folder), a database file that
 * another user owns or that others can write, or one in a folder that
 * another user owns or that others can write (unless sticky, as /tmp), is
 * refused with why and how to fix it. Root's folders are trusted, as ssh
 * trusts them. */
#ifndef KT_STORE_TRUST_H
#define KT_STORE_TRUST_H

#include "../common.h"

/* KT_OK when the database PATH (which may not exist yet) and its folder
 * are trusted; else KT_INVALID with the reason in EB. LABEL names the option
 * that chose the file (--db). */
int kt__store_check_trusted(const char *path, const char *label, kt__errbuf *eb);

/* Whether this user can write PATH (when it exists) and its folder: when not,
 * reading commands open the database read-only. */
bool kt__store_writable(const char *path);
/* Whether this user can create files beside PATH (SQLite's -wal and -shm). */
bool kt__store_folder_writable(const char *path);

#endif
