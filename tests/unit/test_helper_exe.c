/* Finding ktune-tuner (src/proc/helper_exe.c): $KTUNE_HELPER first, then
 * beside the library (not here: a test binary's folder, build/tests, has no
 * ktune-tuner), then through $PATH: a ktune-tuner on it, or the installed
 * layout beside a ktune command on it (bin/ktune, libexec/ktune-tuner). */
#include "harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/helper_exe.h"

/* An executable file at PATH (its folders made first). */
static void executable_at(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *p = dir + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(dir, 0700);
      *p = '/';
    }
  FILE *f = fopen(path, "w");
  ASSERT_TRUE(f != NULL);
  fprintf(f, "#!/bin/sh\nexit 0\n");
  fclose(f);
  ASSERT_EQ(chmod(path, 0700), 0);
}

/* kt__helper_exe_path with PATH set to SEARCH and no KTUNE_HELPER: the
 * path found into FOUND, or the reason into WHY. */
static bool look_with_path(const char *search, char *found, size_t len, kt__sbuf *why) {
  unsetenv("KTUNE_HELPER");
  setenv("PATH", search, 1);
  return kt__helper_exe_path(found, len, why);
}

TEST(ktune_helper_comes_first) {
  setenv("KTUNE_HELPER", "/somewhere/ktune-tuner", 1);
  char found[4096];
  kt__sbuf why = {0};
  ASSERT_TRUE(kt__helper_exe_path(found, sizeof found, &why));
  ASSERT_STREQ(found, "/somewhere/ktune-tuner");
  kt__sbuf_free(&why);
}

TEST(a_ktune_tuner_on_path_is_found) {
  char tuner[4096], search[8192];
  snprintf(tuner, sizeof tuner, "%s", kt_test_tmp_path("tools/ktune-tuner"));
  executable_at(tuner);
  snprintf(search, sizeof search, "%s:%s", kt_test_tmp_path("empty"), kt_test_tmp_path("tools"));
  char found[4096];
  kt__sbuf why = {0};
  ASSERT_TRUE(look_with_path(search, found, sizeof found, &why));
  ASSERT_STREQ(found, tuner);
  kt__sbuf_free(&why);
}

TEST(the_installed_layout_beside_ktune_on_path_is_found) {
  char tuner[4096];
  executable_at(kt_test_tmp_path("prefix/bin/ktune"));
  snprintf(tuner, sizeof tuner, "%s", kt_test_tmp_path("prefix/libexec/ktune-tuner"));
  executable_at(tuner);
  char found[4096];
  kt__sbuf why = {0};
  ASSERT_TRUE(look_with_path(kt_test_tmp_path("prefix/bin"), found, sizeof found, &why));
  ASSERT_CONTAINS(found, "prefix/bin/../libexec/ktune-tuner");
  kt__sbuf_free(&why);
}

TEST(a_relative_path_folder_is_not_searched) {
  executable_at(kt_test_tmp_path("rel/ktune-tuner"));
  ASSERT_EQ(chdir(kt_test_tmp_path("")), 0);
  char found[4096];
  kt__sbuf why = {0};
  ASSERT_FALSE(look_with_path("rel", found, sizeof found, &why));
  kt__sbuf_free(&why);
}

TEST(none_found_says_where_it_looked_and_what_to_do) {
  executable_at(kt_test_tmp_path("bin/ktune")); /* a command without its helper */
  char found[4096];
  kt__sbuf why = {0};
  ASSERT_FALSE(look_with_path(kt_test_tmp_path("bin"), found, sizeof found, &why));
  ASSERT_CONTAINS(why.s, "no ktune-tuner beside the library or the ktune command on PATH (looked for ");
  ASSERT_CONTAINS(why.s, "/bin/ktune-tuner, ");
  ASSERT_CONTAINS(why.s, "/bin/../libexec/ktune-tuner");
  ASSERT_CONTAINS(why.s, "put ktune's bin folder on PATH, or set KTUNE_HELPER");
  kt__sbuf_free(&why);
}
