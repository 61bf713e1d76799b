/* NVML through dl.h. The few functions used are declared here by their
 * documented C signatures (nvml.h is not needed to build): every one
 * returns an nvmlReturn_t, 0 on success, and takes the opaque device
 * handle. Loaded once per process (the device worker), shared by its
 * devices. */
#include "nvml.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../envvars.h"
#include "dl.h"

typedef int nvml_ret;
typedef void *nvml_dev;
enum { NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

static struct {
  pthread_once_t once;
  char why[256]; /* non-empty: NVML cannot be used, and why */
  nvml_ret (*Init)(void);
  nvml_ret (*HandleByPciBusId)(const char *, nvml_dev *);
  nvml_ret (*ClockInfo)(nvml_dev, int, unsigned *);
  nvml_ret (*ThrottleReasons)(nvml_dev, unsigned long long *);
  nvml_ret (*PowerUsage)(nvml_dev, unsigned *); /* milliwatts */
  nvml_ret (*Temperature)(nvml_dev, int, unsigned *);
  nvml_ret (*TotalEnergy)(nvml_dev, unsigned long long *); /* millijoules; NULL: an NVML without it */
  nvml_ret (*MaxClock)(nvml_dev, int, unsigned *);         /* NULL: no throttling judged */
  nvml_ret (*Processes)(nvml_dev, unsigned *, void *);     /* _v3 or _v2 (one layout); NULL: no process list */
} nv = {.once = PTHREAD_ONCE_INIT};

struct kt__nvml_device {
  nvml_dev dev;
  unsigned max_clock_mhz; /* 0: unknown */
};

/* nvmlProcessInfo_t of nvmlDeviceGetComputeRunningProcesses_v2 and _v3. */
typedef struct nvml_process {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_process;

static void set_fn(void *slot, void *addr) { memcpy(slot, &addr, sizeof addr); }

static void load_once(void) {
  const char *env = kt__envvar_text(KT__ENV_LIBNVML);
  const char *list[] = {env && *env ? env : "libnvidia-ml.so.1", NULL};
  kt__errbuf eb = {0};
  void *lib = kt__dl_open_any(list, "NVML (libnvidia-ml.so.1)", &eb);
  static const char *const names[] = {"nvmlInit_v2",
                                      "nvmlDeviceGetHandleByPciBusId_v2",
                                      "nvmlDeviceGetClockInfo",
                                      "nvmlDeviceGetCurrentClocksThrottleReasons",
                                      "nvmlDeviceGetPowerUsage",
                                      "nvmlDeviceGetTemperature"};
  enum { N = sizeof names / sizeof names[0] };
  void *addrs[N];
  if (!lib || kt__dl_resolve(lib, "NVML (libnvidia-ml.so.1)", names, addrs, N, &eb) != KT_OK) {
    snprintf(nv.why, sizeof nv.why, "%.250s", eb.msg); /* the loader's reasons, cut to fit */
    return;
  }
  set_fn(&nv.Init, addrs[0]);
  set_fn(&nv.HandleByPciBusId, addrs[1]);
  set_fn(&nv.ClockInfo, addrs[2]);
  set_fn(&nv.ThrottleReasons, addrs[3]);
  set_fn(&nv.PowerUsage, addrs[4]);
  set_fn(&nv.Temperature, addrs[5]);
  /* Energy came with Volta's NVML, the process list's layout with R470: an
   * older library still gives the rest. */
  static const struct {
    const char *name;
    void *slot;
  } optional[] = {{"nvmlDeviceGetTotalEnergyConsumption", &nv.TotalEnergy},
                  {"nvmlDeviceGetMaxClockInfo", &nv.MaxClock},
                  {"nvmlDeviceGetComputeRunningProcesses_v2", &nv.Processes},
                  {"nvmlDeviceGetComputeRunningProcesses_v3", &nv.Processes}};
  for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++) {
    void *addr;
    if (kt__dl_resolve(lib, "NVML (libnvidia-ml.so.1)", &optional[i].name, &addr, 1, &(kt__errbuf){{0}}) == KT_OK)
      set_fn(optional[i].slot, addr);
  }
  nvml_ret r = nv.Init();
  if (r != 0) snprintf(nv.why, sizeof nv.why, "NVML is not available: nvmlInit failed (NVML error %d)", r);
}

kt__nvml_device *kt__nvml_open(const char *pci_bus_id, char *why, size_t why_size) {
  pthread_once(&nv.once, load_once);
  if (nv.why[0]) {
    snprintf(why, why_size, "%s", nv.why);
    return NULL;
  }
  nvml_dev dev = NULL;
  nvml_ret r = nv.HandleByPciBusId(pci_bus_id, &dev);
  if (r != 0) {
    snprintf(why, why_size, "NVML does not know the device at PCI bus id %s (NVML error %d)", pci_bus_id, r);
    return NULL;
  }
  kt__nvml_device *d = kt__xcalloc(1, sizeof *d);
  d->dev = dev;
  if (nv.MaxClock && nv.MaxClock(dev, NVML_CLOCK_SM, &d->max_clock_mhz) != 0) d->max_clock_mhz = 0;
  return d;
}

/* Other processes with a compute context on D: known only when the list
 * holds this process (a PID namespace apart from NVML's shows other
 * numbers, and then nothing can be told). */
static void read_others(kt__nvml_device *d, kt__reading *out) {
  enum { MAX_PROCESSES = 64 };
  nvml_process list[MAX_PROCESSES];
  unsigned n = MAX_PROCESSES;
  if (!nv.Processes || nv.Processes(d->dev, &n, list) != 0 || n > MAX_PROCESSES) return;
  unsigned self = (unsigned)getpid();
  int others = 0;
  bool found = false;
  for (unsigned i = 0; i < n; i++) {
    if (list[i].pid == self) found = true;
    else if (others < KT__READING_PIDS) out->other_pids[others++] = list[i].pid;
    else others++;
  }
  if (found) out->others_known = true, out->other_processes = others;
}

void kt__nvml_read(kt__nvml_device *d, kt__reading *out) {
  *out = (kt__reading){0};
  if (!d) return;
  unsigned v = 0;
  unsigned long long reasons = 0;
  if (nv.ClockInfo(d->dev, NVML_CLOCK_SM, &v) == 0) out->clock_known = true, out->sm_clock_mhz = v;
  if (nv.ThrottleReasons(d->dev, &reasons) == 0) out->throttle_known = true, out->throttle_reasons = reasons;
  if (nv.PowerUsage(d->dev, &v) == 0) out->power_known = true, out->power_w = v * 1e-3;
  if (nv.Temperature(d->dev, NVML_TEMPERATURE_GPU, &v) == 0) out->temp_known = true, out->temp_c = v;
  out->max_clock_mhz = d->max_clock_mhz;
  read_others(d, out);
}

bool kt__nvml_energy(kt__nvml_device *d, double *joules) {
  unsigned long long mj = 0;
  if (!d || !nv.TotalEnergy || nv.TotalEnergy(d->dev, &mj) != 0) return false;
  *joules = (double)mj * 1e-3;
  return true;
}

void kt__nvml_no_energy(kt__nvml_device *d, char *why, size_t why_size) {
  double j;
  if (!d) return; /* the caller has why NVML itself is missing */
  if (!nv.TotalEnergy)
    snprintf(why, why_size, "this NVML has no nvmlDeviceGetTotalEnergyConsumption (a driver before Volta's)");
  else if (!kt__nvml_energy(d, &j))
    snprintf(why, why_size,
             "NVML reports no total energy for this GPU (nvmlDeviceGetTotalEnergyConsumption "
             "refused: a GPU before Volta)");
}

void kt__nvml_close(kt__nvml_device *d) { free(d); }
