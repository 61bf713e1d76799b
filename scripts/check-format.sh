#!/bin/sh
# Every .c, .h and .cu file outside tests/data/ and kernels/ is formatted as
# .clang-format says: lists the files clang-format would change and exits 1.
#   scripts/check-format.sh [CLANG_FORMAT]     (default clang-format)
cd "$(dirname "$0")/.." || exit 2
cf=${1:-clang-format}
command -v "$cf" >/dev/null 2>&1 || { echo "check-format: $cf not found (apt-get install clang-format)"; exit 2; }
bad=0
for f in $(git ls-files '*.c' '*.h' '*.cu' 2>/dev/null | grep -v '^tests/data/\|^kernels/'); do
  if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check-format: $f is not formatted (run: $cf -i $f)"
    bad=1
  fi
done
exit $bad
