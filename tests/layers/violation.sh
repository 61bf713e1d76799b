#!/bin/sh
# scripts/check-layers.py must fail on an include that breaks the layer rules,
# and say which file, which include and which rule: checked on copies of src/,
# cli/ and docs/DESIGN.md where the device worker includes the tuner's result,
# the command line reaches into src/, ktune-tuner's main() includes a header
# its own line does not name, and a module of src/ includes one of cli/.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fresh_copy: the tree's src/, cli/, include/ and DESIGN.md under $tmp/t.
fresh_copy() {
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t/docs"
  cp -R "$root/src" "$root/cli" "$root/include" "$tmp/t/"
  cp "$root/docs/DESIGN.md" "$tmp/t/docs/"
}

# refused FILE LINE PATTERN: FILE (under the copy) with LINE appended fails
# the check with exit status 1 and a message that matches PATTERN.
refused() {
  fresh_copy
  printf '%s\n' "$2" >>"$tmp/t/$1"
  python3 "$root/scripts/check-layers.py" "$tmp/t" 2>"$tmp/err" >/dev/null
  rc=$?
  cat "$tmp/err"
  [ $rc -eq 1 ] || { echo "$1 with $2: exit status $rc, want 1"; exit 1; }
  grep -q "$3" "$tmp/err" || { echo "$1 with $2: the message names not the file, the include and the rule"; exit 1; }
}

fresh_copy
python3 "$root/scripts/check-layers.py" "$tmp/t" >/dev/null || { echo "the copy fails before any change"; exit 1; }
refused src/device/guard.h '#include "../tuner/result.h"' \
  'src/device/guard.h:[0-9]*: #include "../tuner/result.h" .* device may not include: the rule is `device: '
refused cli/ktune.c '#include "../src/tuner/result.h"' \
  'cli/ktune.c:[0-9]*: #include "../src/tuner/result.h" reaches src/tuner/result.h (tuner), which cli may not include: the rule is `cli: '
refused cli/ktune_tuner.c '#include "tuner/result.h"' \
  'cli/ktune_tuner.c:[0-9]*: #include "tuner/result.h" reaches src/tuner/result.h (tuner), which cli may not include'
refused src/runtime/host.c '#include "../../cli/keys.h"' \
  'src/runtime/host.c:[0-9]*: #include "../../cli/keys.h" reaches cli/keys.h (cli), which runtime may not include'
