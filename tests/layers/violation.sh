#!/bin/sh
# scripts/check-layers.py must fail on an include that breaks the layer rules,
# and say which file, which include and which rule: checked on a copy of src/
# and docs/DESIGN.md where the device worker includes the tuner's result.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
cp -R "$root/src" "$root/include" "$tmp/"
cp "$root/docs/DESIGN.md" "$tmp/docs/"
python3 "$root/scripts/check-layers.py" "$tmp" >/dev/null || { echo "the copy fails before any change"; exit 1; }
printf '#include "../tuner/result.h"\n' >>"$tmp/src/device/guard.h"
python3 "$root/scripts/check-layers.py" "$tmp" 2>"$tmp/err" >/dev/null
rc=$?
cat "$tmp/err"
[ $rc -eq 1 ] || { echo "exit status $rc, want 1"; exit 1; }
grep -q 'src/device/guard.h:[0-9]*: #include "../tuner/result.h" .* device may not include: the rule is `device: ' "$tmp/err" ||
  { echo "the message names not the file, the include and the rule"; exit 1; }
