/* Whom the results database trusts (trust.h). */
#include "trust.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH's folder ("." for a bare name) into DIR. */
static void folder_of(const char *path, char *dir, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, size, ".");
  else if (slash == path) snprintf(dir, size, "/");
  else snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

static const char *writers(mode_t mode) { return mode & S_IWOTH ? "every user" : "its group"; }

static int refuse_folder(const char *dir, const struct stat *st, const char *label, kt__errbuf *eb) {
  if (st->st_uid != geteuid() && st->st_uid != 0)
    return kt__err(eb, KT_INVALID,
                   "the results database's folder %s belongs to user %ld, not to you (%ld): that user "
                   "could replace the winners kt_launch runs; use a folder of your own (%s or KTUNE_DB)",
                   dir, (long)st->st_uid, (long)geteuid(), label);
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
    return kt__err(eb, KT_INVALID,
                   "the results database's folder %s can be written by %s (mode %03o): anyone who can "
                   "could replace the database and the winners kt_launch runs; `chmod go-w %s`, or choose a private "
                   "folder (%s or KTUNE_DB)",
                   dir, writers(st->st_mode), (unsigned)(st->st_mode & 0777), dir, label);
  return KT_OK;
}

static int refuse_file(const char *path, const struct stat *st, const char *label, kt__errbuf *eb) {
  if (st->st_uid != geteuid())
    return kt__err(eb, KT_INVALID,
                   "the results database %s belongs to user %ld, not to you (%ld): its winners would "
                   "be launched as yours; copy it (cp, then it is yours) or use a database of your own (%s or "
                   "KTUNE_DB)",
                   path, (long)st->st_uid, (long)geteuid(), label);
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return kt__err(eb, KT_INVALID,
                   "the results database %s can be written by %s (mode %03o): anyone who can could "
                   "plant the winners kt_launch runs; `chmod go-w %s`",
                   path, writers(st->st_mode), (unsigned)(st->st_mode & 0777), path);
  return KT_OK;
}

int kt__store_check_trusted(const char *path, const char *label, kt__errbuf *eb) {
  char dir[4096];
  folder_of(path, dir, sizeof dir);
  struct stat st;
  if (stat(dir, &st) == 0) KT__FORWARD(refuse_folder(dir, &st, label, eb));
  if (stat(path, &st) == 0) KT__FORWARD(refuse_file(path, &st, label, eb));
  return KT_OK;
}

bool kt__store_folder_writable(const char *path) {
  char dir[4096];
  folder_of(path, dir, sizeof dir);
  return access(dir, W_OK) == 0;
}

bool kt__store_writable(const char *path) {
  return kt__store_folder_writable(path) && (access(path, F_OK) != 0 || access(path, W_OK) == 0);
}
