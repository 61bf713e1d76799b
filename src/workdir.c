/* kt__workdir: the per-process folder of compiler outputs (workdir.h). */
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "envvars.h"

/* The private working directory: created once per process, mode 0700,
 * removed at exit with everything in it. Its name carries the owner's pid
 * namespace and pid, ktune-NS-PID-XXXXXX, so that a later process can tell
 * the folder of a tuner that was killed (SIGKILL runs no exit handler) and
 * remove it. */
static char workdir[PATH_MAX];
static int workdir_errno;
static const char *workdir_problem; /* TMPDIR is unusable: why, when set */
static pthread_once_t workdir_once = PTHREAD_ONCE_INIT;
static pid_t workdir_owner;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_workdir(void) {
  if (workdir[0] && getpid() == workdir_owner) nftw(workdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Pids are per pid namespace: a folder from a process in another namespace
 * (a container sharing TMPDIR) names a pid that means nothing here. */
static unsigned long long pid_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* A folder ktune-NS-PID-XXXXXX of this namespace, this user, whose owner no
 * longer exists (kill(PID, 0) says ESRCH: EPERM is a live process of another
 * user). A live owner's folder is never touched; a reused pid only delays
 * the removal until that process ends too. */
static bool is_stale(const char *dir, const char *name, unsigned long long ns) {
  unsigned long long their_ns;
  long pid;
  char tail[16];
  int end = 0;
  if (sscanf(name, "ktune-%llu-%ld-%15[A-Za-z0-9]%n", &their_ns, &pid, tail, &end) != 3 || name[end] ||
      strlen(tail) != 6 || their_ns != ns || pid <= 0 || pid == (long)getpid())
    return false;
  char path[PATH_MAX];
  struct stat st;
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path || lstat(path, &st) != 0) return false;
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) return false;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void remove_stale_workdirs(const char *dir, unsigned long long ns) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[PATH_MAX];
    if (!is_stale(dir, e->d_name, ns) || snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
      continue;
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
  closedir(d);
}

static void make_workdir(void) {
  const char *tmp = kt__envvar_text(KT__ENV_TMPDIR);
  if (tmp && *tmp && tmp[0] != '/') {
    /* Compilers and the worker run in other directories: a relative path
     * would name a different place for each. */
    workdir_problem = "is not an absolute path";
    return;
  }
  const char *dir = tmp && *tmp ? tmp : "/tmp";
  unsigned long long ns = pid_namespace();
  remove_stale_workdirs(dir, ns);
  int n = snprintf(workdir, sizeof workdir, "%s/ktune-%llu-%ld-XXXXXX", dir, ns, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof workdir) {
    workdir[0] = 0;
    workdir_problem = "is too long a path";
    return;
  }
  if (!mkdtemp(workdir)) {
    workdir_errno = errno;
    workdir[0] = 0;
    return;
  }
  workdir_owner = getpid();
  atexit(remove_workdir);
}

/* A TMPDIR that is missing, read-only or relative is bad input: the user's
 * to fix, and nothing can be compiled without it. */
const char *kt__workdir(kt__errbuf *eb) {
  pthread_once(&workdir_once, make_workdir);
  if (workdir[0]) return workdir;
  const char *tmp = kt__envvar_text(KT__ENV_TMPDIR);
  const char *where = tmp && *tmp ? tmp : "/tmp";
  if (workdir_problem)
    kt__err(eb, KT_INVALID,
            "ktune: error: TMPDIR=%s %s: ktune keeps its compiled configurations in a private folder there; "
            "set TMPDIR to an absolute path of a writable directory (or unset it for /tmp)",
            where, workdir_problem);
  else
    kt__err(eb, KT_INVALID,
            "ktune: error: cannot create a private temporary folder in %s%s: %s; set TMPDIR to an existing, "
            "writable directory",
            tmp && *tmp ? "TMPDIR=" : "", where, strerror(workdir_errno));
  return NULL;
}
