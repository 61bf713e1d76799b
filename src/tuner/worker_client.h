/* The tuner's side of its device worker: has the zygote fork one, sends it
 * requests and waits for each reply with a deadline, drains what it prints,
 * and buries it when it crashes, hangs or retires; the next request then
 * gets a fresh worker. */
#ifndef KT_WORKER_CLIENT_H
#define KT_WORKER_CLIENT_H

#include "../device/protocol.h"

typedef struct kt__worker kt__worker;

/* Starts the zygote (device/zygote.h), which forks the worker, and waits for
 * the worker's device to open; INFO describes it. Workers die with the
 * zygote, which kt__worker_stop ends (and which ends when the tuner dies). */
int kt__worker_start(const kt__worker_setup *setup, kt__device_info *info, kt__worker **out, kt__errbuf *eb);
/* kt__worker_start in two steps, so that the caller can work while the
 * worker opens its device: launch forks it; ready waits for it (on failure
 * the worker is gone and *W is NULL). Shared memory the worker is to see must
 * be mapped before launch; its contents may be written until the first
 * request. */
int kt__worker_launch(const kt__worker_setup *setup, kt__worker **out, kt__errbuf *eb);
int kt__worker_ready(kt__worker **w, kt__device_info *info, kt__errbuf *eb);
/* Sends REQ and waits at most TIMEOUT_S. A crash gives RUNTIME ("worker
 * crashed: SIGSEGV"), a hang TIMEOUT; the worker is then restarted lazily. */
void kt__worker_request(kt__worker *w, const kt__request *req, kt__reply *rep, double timeout_s);
/* Number of times a worker had to be replaced. */
int kt__worker_restarts(const kt__worker *w);
void kt__worker_stop(kt__worker *w);

/* Keeping a worker between tunings (the tuning helper, which serves one
 * application's misses one after the other): its device stays open, so the
 * next tuning skips the driver's start (cuInit and a context).
 * Whether a worker can be bound to SETUP's tuning: no check, no extra names
 * (the @reference kernel's worker), tensors in a memfd. */
bool kt__worker_bindable(const kt__worker_setup *setup);
/* Keeps W (alive, between requests) for the next kt__worker_rebind instead
 * of stopping it; false (W untouched) when it is not alive. One is kept per
 * process: an older one is stopped. */
bool kt__worker_park(kt__worker *w);
/* kt__worker_launch for a kept worker of SETUP's backend and device, bound
 * to SETUP (protocol.h, kt__bind); kt__worker_ready then waits for it. One
 * that died while kept is replaced from its zygote. KT_NOTFOUND when none is
 * kept for that device or SETUP is not bindable (the caller launches). */
int kt__worker_rebind(const kt__worker_setup *setup, kt__worker **out, kt__errbuf *eb);

/* Lists the devices of BE from a short-lived child process. */
int kt__worker_list_devices(const kt__backend *be, kt__device_info *out, int max, int *count, kt__errbuf *eb);

#endif
