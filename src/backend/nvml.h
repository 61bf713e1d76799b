/* NVML (libnvidia-ml.so.1), loaded at run time like the CUDA driver: what a
 * GPU reports of its SM clock, throttle reasons, power and temperature
 * around each timed sample (kt__reading). Without NVML, timing goes on with
 * no readings, and kt__nvml_open says why. */
#ifndef KT_BACKEND_NVML_H
#define KT_BACKEND_NVML_H

#include "../common.h"

typedef struct kt__nvml_device kt__nvml_device;

/* The NVML device of PCI bus id PCI_BUS_ID ("0000:18:00.0", as
 * cuDeviceGetPCIBusId writes it); NULL where NVML cannot be loaded
 * ($KTUNE_LIBNVML, else libnvidia-ml.so.1) or does not know the device,
 * with the reason in WHY (WHY_SIZE bytes). */
kt__nvml_device *kt__nvml_open(const char *pci_bus_id, char *why, size_t why_size);
/* What D reports now; a query NVML refuses leaves its field unknown. */
void kt__nvml_read(kt__nvml_device *d, kt__reading *out);
/* D's energy counter (NVML's total energy since the driver loaded) in
 * joules; false where it has none. */
bool kt__nvml_energy(kt__nvml_device *d, double *joules);
/* Why D reports no energy, into WHY; left as it is where it does (or D is
 * NULL: the reason NVML is missing is the caller's). */
void kt__nvml_no_energy(kt__nvml_device *d, char *why, size_t why_size);
void kt__nvml_close(kt__nvml_device *d);

#endif
