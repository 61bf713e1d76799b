/* What each NVML reading that ktune takes around a timed sample costs on
 * this machine (src/backend/nvml.c, kt__nvml_read and kt__nvml_energy):
 * the median and the largest of N calls of each, device 0. On a GPU
 * machine:
 *
 *   cc -O2 -o /tmp/nvml_call_cost bench/nvml_call_cost.c -ldl && /tmp/nvml_call_cost [N]
 *
 * A sample's readings are two energy reads, clock, throttle reasons, power,
 * temperature and the compute process list; their sum is the host time
 * every sample adds to a tuning beside its kernel launches. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_fn)(void);
typedef int (*handle_fn)(unsigned, void **);
typedef int (*uint_fn)(void *, unsigned, unsigned *);
typedef int (*u1_fn)(void *, unsigned *);
typedef int (*ull_fn)(void *, unsigned long long *);
typedef int (*procs_fn)(void *, unsigned *, void *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) fprintf(stderr, "nvml_call_cost: no %s\n", name);
  return p;
}

/* Prints the median and the largest of N timings of CALL, in microseconds. */
#define TIME(label, call)                                                       \
  do {                                                                          \
    for (int i_ = 0; i_ < n; i_++) {                                            \
      double t0_ = now();                                                       \
      (void)(call);                                                             \
      t[i_] = (now() - t0_) * 1e6;                                              \
    }                                                                           \
    qsort(t, (size_t)n, sizeof *t, cmp);                                        \
    printf("%-44s median %9.1f us  max %9.1f us\n", label, t[n / 2], t[n - 1]); \
  } while (0)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50;
  if (n < 1) n = 1;
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "nvml_call_cost: %s\n", dlerror());
    return 1;
  }
  init_fn init = (init_fn)sym(lib, "nvmlInit_v2");
  handle_fn handle = (handle_fn)sym(lib, "nvmlDeviceGetHandleByIndex_v2");
  uint_fn clock = (uint_fn)sym(lib, "nvmlDeviceGetClockInfo");
  ull_fn throttle = (ull_fn)sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  u1_fn power = (u1_fn)sym(lib, "nvmlDeviceGetPowerUsage");
  uint_fn temp = (uint_fn)sym(lib, "nvmlDeviceGetTemperature");
  ull_fn energy = (ull_fn)sym(lib, "nvmlDeviceGetTotalEnergyConsumption");
  procs_fn procs = (procs_fn)sym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!init || !handle || !clock || !throttle || !power || !temp || !energy || !procs || init() != 0) return 1;
  void *dev = NULL;
  if (handle(0, &dev) != 0) return 1;
  double *t = malloc((size_t)n * sizeof *t);
  unsigned v;
  unsigned long long u;
  static unsigned char infos[64 * 64];
  unsigned count;
  TIME("nvmlDeviceGetClockInfo(SM)", clock(dev, 1, &v));
  TIME("nvmlDeviceGetCurrentClocksThrottleReasons", throttle(dev, &u));
  TIME("nvmlDeviceGetPowerUsage", power(dev, &v));
  TIME("nvmlDeviceGetTemperature", temp(dev, 0, &v));
  TIME("nvmlDeviceGetTotalEnergyConsumption", energy(dev, &u));
  TIME("nvmlDeviceGetComputeRunningProcesses_v3", (count = 64, procs(dev, &count, infos)));
  free(t);
  return 0;
}
