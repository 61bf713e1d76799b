/* A fake libnvidia-ml.so.1 for test_nvml.c (KTUNE_LIBNVML names it): the
 * few functions src/backend/nvml.c calls, answering as $FAKE_NVML says:
 * "quiet" (at the maximum clock, alone), "throttled" (below it, hardware
 * thermal slowdown), "shared" (another process beside the caller),
 * "foreign" (a process list without the caller: another PID namespace).
 * The energy counter advances by 250 mJ at each read. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
} process;

static int mode(const char *m) {
  const char *v = getenv("FAKE_NVML");
  return v && strcmp(v, m) == 0;
}

static int handle;

int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev) {
  (void)bus;
  *dev = &handle;
  return 0;
}
int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz) {
  (void)dev, (void)type;
  *mhz = mode("throttled") ? 1200 : 1980;
  return 0;
}
int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz) {
  (void)dev, (void)type;
  *mhz = 1980;
  return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *reasons) {
  (void)dev;
  *reasons = mode("throttled") ? 0x40 : 0;
  return 0;
}
int nvmlDeviceGetPowerUsage(void *dev, unsigned *mw) {
  (void)dev;
  *mw = 350000;
  return 0;
}
int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c) {
  (void)dev, (void)sensor;
  *c = 45;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj) {
  static unsigned long long counter = 1000000;
  (void)dev;
  *mj = counter += 250;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *n, process *list) {
  (void)dev;
  unsigned want = mode("shared") ? 2 : 1;
  if (*n < want) {
    *n = want;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  list[0] = (process){.pid = mode("foreign") ? 999999u : (unsigned)getpid()};
  if (want == 2) list[1] = (process){.pid = 1};
  *n = want;
  return 0;
}
