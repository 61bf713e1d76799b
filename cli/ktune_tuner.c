/* ktune-tuner: the tuning helper that kt_launch starts with posix_spawn on
 * a miss (src/runtime/tune_helper.h), and with --zygote the clean worker
 * spawner of a kt_tune called in a process that holds a GPU driver
 * (src/device/zygote.h). Installed beside the library, in libexec; not
 * meant to be run by hand. */
#include <string.h>

#include "device/zygote.h"
#include "runtime/tune_helper.h"

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--zygote") == 0) return kt__zygote_exec_main(argc, argv);
  return kt__tune_helper_main(argc, argv);
}
