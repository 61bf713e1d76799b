/* Process plumbing (src/proc/process.h): a connected fork that writes
 * nothing buffered twice, a child that ends when its parent is gone, a
 * spawned child with the descriptors it was given and no others. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "proc/process.h"

static int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The child ends with exit(), which flushes its copy of the stdio buffers:
 * text buffered before the fork would be written twice. */
TEST(fork_connected_flushes_stdio_and_connects) {
  char path[] = "/tmp/kt-test-proc-XXXXXX";
  int tmp = mkstemp(path);
  ASSERT_GE(tmp, 0);
  FILE *f = fdopen(tmp, "w");
  fputs("once", f); /* buffered */
  int fd = -1;
  pid_t pid = kt__proc_fork_connected(&fd);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    char c = 'k';
    exit(write(fd, &c, 1) == 1 ? 0 : 1);
  }
  ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  char c = 0;
  ASSERT_EQ(read(fd, &c, 1), 1);
  ASSERT_EQ(c, 'k');
  ASSERT_EQ(wait_status(pid), 0);
  close(fd);
  fclose(f);
  char got[16] = "";
  FILE *r = fopen(path, "r");
  size_t n = fread(got, 1, sizeof got - 1, r);
  fclose(r);
  unlink(path);
  got[n] = 0;
  ASSERT_STREQ(got, "once");
}

/* A child whose parent is not the pid it was given (its parent has died and
 * it was reparented) exits at once with the status asked for. */
TEST(die_with_parent_exits_when_the_parent_is_gone) {
  pid_t self = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    kt__proc_die_with_parent(SIGKILL, self, 7); /* the parent: stays */
    kt__proc_die_with_parent(SIGKILL, self + 100000, 9);
    _exit(0);
  }
  ASSERT_EQ(wait_status(pid), 9);
}

/* The pipe's write end as fd 5 (a descriptor that close-on-exec would have
 * kept from the child), stdin on /dev/null, and a descriptor above
 * CLOSE_FROM that the child must not see. */
TEST(spawn_gives_the_child_its_descriptors_only) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  int leak = fcntl(p[1], F_DUPFD, 20); /* not close-on-exec */
  ASSERT_GE(leak, 20);
  char script[128];
  snprintf(script, sizeof script, "read x; echo \"in=$? $(test -e /proc/self/fd/%d && echo leaked)\" >&5", leak);
  char *argv[] = {"sh", "-c", script, NULL};
  kt__proc_fd fds[] = {{p[1], 5}, {-1, 6}};
  kt__proc_spawn_opts o = {.fds = fds, .nfds = 2, .null_stdin = true, .close_from = 6, .search_path = true};
  pid_t pid;
  ASSERT_EQ(kt__proc_spawn("sh", argv, &o, &pid), 0);
  close(p[1]);
  close(leak);
  char got[64] = "";
  ssize_t n = read(p[0], got, sizeof got - 1);
  close(p[0]);
  ASSERT_EQ(wait_status(pid), 0);
  ASSERT_GE(n, 1);
  got[n] = 0;
  ASSERT_STREQ(got, "in=1 \n"); /* read found the end of /dev/null; nothing leaked */
}
