/* ktune-tuner: the tuning helper that kt_launch starts with posix_spawn on
 * a miss (src/runtime/tune_helper.h). Installed beside the library, in
 * libexec; not meant to be run by hand. */
#include "runtime/tune_helper.h"

int main(int argc, char **argv) { return kt__tune_helper_main(argc, argv); }
