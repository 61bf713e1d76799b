/* RAPL's energy counters (src/backend/rapl.c) on fake powercap trees
 * ($KTUNE_POWERCAP_ROOT): which zones count, the joules between two reads
 * with a counter that wrapped, and why a machine without them has none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/rapl.h"
#include "harness.h"

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT_TRUE(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* ROOT/ZONE/energy_uj holding UJ, and max_energy_range_uj RANGE unless 0. */
static void zone(const char *root, const char *name, const char *uj, const char *range) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, name);
  ASSERT_EQ(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/%s/energy_uj", root, name);
  write_text(path, uj);
  if (range) {
    snprintf(path, sizeof path, "%s/%s/max_energy_range_uj", root, name);
    write_text(path, range);
  }
}

/* Two packages with a subzone (psys and the cores' subzone are not
 * counted); package 1's counter wraps between the reads. */
TEST(packages_are_summed_and_a_wrapped_counter_counted) {
  const char *root = kt_test_tmp_path("powercap");
  ASSERT_EQ(mkdir(root, 0700), 0);
  zone(root, "intel-rapl:0", "1000000", "262143328850");
  zone(root, "intel-rapl:0/intel-rapl:0:0", "500", NULL);
  zone(root, "intel-rapl:1", "999000000", "1000000000");
  zone(root, "intel-rapl-mmio:0", "7", NULL);
  setenv("KTUNE_POWERCAP_ROOT", root, 1);
  kt__rapl r;
  char why[256] = "";
  ASSERT_TRUE(kt__rapl_open(&r, why, sizeof why));
  ASSERT_EQ(r.n, 2);
  kt__rapl_counts a, b;
  ASSERT_TRUE(kt__rapl_read(&r, &a));
  char path[512];
  snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
  write_text(path, "3500000"); /* +2.5 J */
  snprintf(path, sizeof path, "%s/intel-rapl:0/intel-rapl:0:0/energy_uj", root);
  write_text(path, "900000500"); /* a subzone: already in its package's count */
  snprintf(path, sizeof path, "%s/intel-rapl:1/energy_uj", root);
  write_text(path, "500000"); /* wrapped at 1000 J: +1 J to the range, +0.5 J after */
  ASSERT_TRUE(kt__rapl_read(&r, &b));
  ASSERT_NEAR(kt__rapl_joules(&r, &a, &b), 2.5 + 1.0 + 0.5, 1e-9);
  unsetenv("KTUNE_POWERCAP_ROOT");
}

/* No powercap folder (this CI's machine, a virtual machine), or one with no
 * package zone: no counter, and why names the folder. */
TEST(no_package_zone_is_no_energy_and_says_where_it_looked) {
  const char *root = kt_test_tmp_path("nopowercap");
  setenv("KTUNE_POWERCAP_ROOT", root, 1);
  kt__rapl r;
  char why[256] = "";
  ASSERT_FALSE(kt__rapl_open(&r, why, sizeof why));
  ASSERT_CONTAINS(why, root);
  ASSERT_CONTAINS(why, "does not exist");
  ASSERT_EQ(mkdir(root, 0700), 0);
  zone(root, "intel-rapl-mmio:0", "7", NULL);
  ASSERT_FALSE(kt__rapl_open(&r, why, sizeof why));
  ASSERT_CONTAINS(why, "holds no intel-rapl:N package zone");
  unsetenv("KTUNE_POWERCAP_ROOT");
}

/* A counter only root may read (Linux 5.10 and later) is no energy, and
 * says how to get it; as root the file is readable whatever its mode. */
TEST(an_unreadable_counter_is_no_energy_and_says_why) {
  if (geteuid() == 0) return;
  const char *root = kt_test_tmp_path("lockedpowercap");
  ASSERT_EQ(mkdir(root, 0700), 0);
  zone(root, "intel-rapl:0", "1000", NULL);
  char path[512];
  snprintf(path, sizeof path, "%s/intel-rapl:0/energy_uj", root);
  ASSERT_EQ(chmod(path, 0), 0);
  setenv("KTUNE_POWERCAP_ROOT", root, 1);
  kt__rapl r;
  char why[256] = "";
  ASSERT_FALSE(kt__rapl_open(&r, why, sizeof why));
  ASSERT_CONTAINS(why, "cannot be read");
  ASSERT_CONTAINS(why, "only root reads it");
  unsetenv("KTUNE_POWERCAP_ROOT");
}
