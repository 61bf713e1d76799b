/* NVML's readings (src/backend/nvml.c) through a fake libnvidia-ml
 * (tests/unit/fake_nvml.c, $KTUNE_LIBNVML): what a sample's reading says of
 * the clock, throttling, other processes and energy, and so whether the
 * sample was disturbed (kt__reading_disturbance). */
#include <stdlib.h>

#include "backend/nvml.h"
#include "harness.h"
#include "measure/measure.h"

static kt__reading read_as(const char *mode) {
  setenv("KTUNE_LIBNVML", KT_FAKE_NVML, 1);
  setenv("FAKE_NVML", mode, 1);
  char why[256] = "";
  kt__nvml_device *d = kt__nvml_open("0000:18:00.0", why, sizeof why);
  if (!d) kt_test_fail(__FILE__, __LINE__, "fake NVML: %s", why);
  kt__reading r;
  kt__nvml_read(d, &r);
  kt__nvml_close(d);
  return r;
}

TEST(quiet_device_is_not_disturbed) {
  kt__reading r = read_as("quiet");
  ASSERT_TRUE(r.clock_known);
  ASSERT_EQ(r.sm_clock_mhz, 1980);
  ASSERT_EQ(r.max_clock_mhz, 1980);
  ASSERT_TRUE(r.others_known);
  ASSERT_EQ(r.other_processes, 0);
  ASSERT_EQ(kt__reading_disturbance(&r, 0), 0);
}

TEST(throttled_device_is_disturbed) {
  kt__reading r = read_as("throttled");
  ASSERT_EQ(r.sm_clock_mhz, 1200);
  ASSERT_EQ(r.throttle_reasons, 0x40);
  ASSERT_EQ(kt__reading_disturbance(&r, 0), KT__DISTURBED_THROTTLED);
}

TEST(another_process_on_the_device_is_disturbed) {
  kt__reading r = read_as("shared");
  ASSERT_TRUE(r.others_known);
  ASSERT_EQ(r.other_processes, 1);
  ASSERT_EQ(kt__reading_disturbance(&r, 0), KT__DISTURBED_SHARED);
}

/* The application a tuning on a miss is for (the fake's other process is
 * pid 1) has its context on the device all along: it does not make a
 * sample shared, another process still does. */
TEST(the_peer_process_is_not_a_disturbance) {
  kt__reading r = read_as("shared");
  ASSERT_EQ(r.other_pids[0], 1u);
  ASSERT_EQ(kt__reading_disturbance(&r, 1), 0);
  ASSERT_EQ(kt__reading_disturbance(&r, 2), KT__DISTURBED_SHARED);
  r.other_processes = 2; /* the peer and one more */
  r.other_pids[1] = 7;
  ASSERT_EQ(kt__reading_disturbance(&r, 1), KT__DISTURBED_SHARED);
}

/* A process list without this process (NVML in another PID namespace)
 * tells nothing: not a disturbance. */
TEST(a_list_without_this_process_tells_nothing) {
  kt__reading r = read_as("foreign");
  ASSERT_FALSE(r.others_known);
  ASSERT_EQ(kt__reading_disturbance(&r, 0), 0);
}

TEST(energy_counter_in_joules) {
  setenv("KTUNE_LIBNVML", KT_FAKE_NVML, 1);
  char why[256] = "";
  kt__nvml_device *d = kt__nvml_open("0000:18:00.0", why, sizeof why);
  ASSERT_TRUE(d != NULL);
  char no_energy[256] = "";
  kt__nvml_no_energy(d, no_energy, sizeof no_energy);
  ASSERT_STREQ(no_energy, "");
  double a, b;
  ASSERT_TRUE(kt__nvml_energy(d, &a));
  ASSERT_TRUE(kt__nvml_energy(d, &b));
  ASSERT_NEAR(b - a, 0.25, 1e-9);
  kt__nvml_close(d);
}
